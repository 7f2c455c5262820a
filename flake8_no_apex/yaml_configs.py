"""Findings in LightningCLI and Hydra YAML configs (`trainer: {amp_backend: apex}`,
`class_path: ...ApexMixedPrecisionPlugin`): the Trainer arguments and classes the Python rules
know, with the same codes and messages, at the exact line."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import yaml

from .checker import RuleIndex
from .files import MalformedFile
from .table import Finding, Floors, Keyword, Rule, Site

# A config larger than this is no LightningCLI config: it is left unread, with a word.
MAX_YAML_BYTES = 2_000_000

_CONSTRUCTOR = yaml.SafeLoader("")  # YAML's own reading of a scalar: 0x10, 0b10 and 1:30 are ints too


def _trainer_keyword(rows: List[Tuple[Keyword, Rule]], value: object) -> Optional[Tuple[Rule, str]]:
    """(rule, replacement) of a Trainer argument set in a config, as on a Trainer call."""
    for matcher, rule in rows:
        if matcher.values is None:
            return rule, ""
        replacement = matcher.values.get(value) if not isinstance(value, bool) else None
        if replacement:  # rows of one keyword may split its values between them
            return rule, replacement
    return None


def _scalar(node: yaml.Node) -> object:
    """A YAML scalar as the Python value a LightningCLI config gives the Trainer."""
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError):
        return node.value


def compose(text: str) -> Optional[yaml.Node]:
    """The YAML node tree (no object is built: aliases cost nothing); MalformedFile if it does not parse."""
    if len(text) > MAX_YAML_BYTES:
        raise MalformedFile(f"larger than {MAX_YAML_BYTES // 1_000_000} MB; not read as a YAML config")
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise MalformedFile(f"cannot parse: {str(error).splitlines()[0]}") from None


def where(node: yaml.Node) -> Tuple[int, int, int]:
    """(line, column, width) of a node, in characters (a finding's span stops at its line's end)."""
    return node.start_mark.line + 1, node.start_mark.column, node.end_mark.index - node.start_mark.index


def check_yaml(text: str, floors: Floors, index: RuleIndex, trainer_group: bool = False) -> List[Finding]:
    """Trainer settings under any `trainer:` key (also below `fit:` and other subcommands), at
    the top level of a Hydra config group for the trainer (`trainer_group`: a file in a
    `trainer/` folder), and `class_path` values that name a deprecated Lightning class. Each node is visited once,
    however many aliases refer to it: a self-referencing anchor or a "billion laughs" file
    costs its size, not its expansion."""
    root = compose(text)
    keywords = index.trainer_settings
    found: List[Optional[Finding]] = []
    seen = set()

    def walk(node: yaml.Node, under_trainer: bool) -> None:
        if (id(node), under_trainer) in seen:
            return
        seen.add((id(node), under_trainer))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if under_trainer and name in keywords and isinstance(value, yaml.ScalarNode):
                    hit = _trainer_keyword(keywords[name], _scalar(value))
                    if hit:
                        rule, replacement = hit
                        line, col, width = where(key)
                        found.append(rule.finding(Site(None, name, replacement, value=_scalar(value)), line, col,
                                                  floors, width))
                if name == "class_path" and isinstance(value, yaml.ScalarNode):
                    symbol = index.symbol(value.value)
                    if symbol:
                        replacement, rule = symbol
                        site = Site(None, value.value, replacement)
                        line, col, width = where(value)
                        found.append(rule.finding(site, line, col, floors, width))
                walk(value, under_trainer or name == "trainer")
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, under_trainer)

    if root is not None:
        walk(root, trainer_group)
    return [f for f in found if f is not None]


def is_trainer_group(path) -> bool:
    """A Hydra config group of Trainer arguments: `conf/trainer/default.yaml`."""
    return path.parent.name == "trainer"


def looks_like_lightning_config(text: str) -> bool:
    return bool(re.search(r"^\s*(trainer|class_path)\s*:", text, re.MULTILINE))
