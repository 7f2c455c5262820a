"""How fixers that write torch code name torch at a finding."""
from __future__ import annotations

from typing import Iterable, Optional

from ..resolve import chain_root
from ..table import Grade, Plan, Site, TextEdit, plan

TORCH = ("torch",)  # `Rule.fix_modules` of the rules whose fixers write torch code


def torch_name(site: Site) -> Optional[str]:
    """The name that reaches torch at the finding: '' when none binds it and `import torch`
    can be added, None when the name `torch` means something else there."""
    return site.module_names.get("torch")


def torch_plan(site: Site, edits: Iterable[TextEdit], grade: Grade) -> Plan:
    """A plan whose new code names torch (through `torch_name`, or `import torch` when no name
    binds it there) and whose rewrite may leave the reference's import unused."""
    root = chain_root(site.node)
    releases = [root.id] if getattr(site.binding, "statement", None) is not None else []
    return plan(edits, grade, imports=[] if torch_name(site) else ["torch"], releases=releases)
