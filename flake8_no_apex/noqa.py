"""flake8's `# noqa`, read with flake8's own patterns (`# flake8: noqa` alone needs none of the
rule table: a file without a rule's word is checked without it), and `check --add-noqa`
(ruff's): a `# noqa: APXnnn` on every line with a finding, for teams that adopt the gate
before they finish the migration.

The comment goes where flake8 will look for it: at the end of the finding's line, or of the
last line flake8 reads with it (a multi-line string, a backslash continuation); codes join an
existing `# noqa: ...` list. What is already suppressed is never reported, so never touched.
"""
from __future__ import annotations

import os
import re
import sys
from collections import defaultdict
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Set, Tuple


@lru_cache(maxsize=None)
def _flake8_defaults():
    """The installed flake8's defaults module, read alone: importing the flake8 package sets up
    its logging, which cost a check more than the rest of its noqa handling."""
    if "flake8.defaults" not in sys.modules:
        import importlib.util

        spec = importlib.util.find_spec("flake8")
        if spec is not None and spec.origin is not None:
            alone = importlib.util.spec_from_file_location(
                "flake8_no_apex._flake8_defaults", os.path.join(os.path.dirname(spec.origin), "defaults.py"))
            if alone is not None and alone.loader is not None:
                module = importlib.util.module_from_spec(alone)
                try:
                    alone.loader.exec_module(module)
                    if hasattr(module, "NOQA_INLINE_REGEXP") and hasattr(module, "NOQA_FILE"):
                        return module
                except (ImportError, OSError, AttributeError):  # a layout this does not know: import it
                    pass
    import flake8.defaults

    return flake8.defaults


def noqa_pattern() -> "re.Pattern[str]":
    """flake8's own `# noqa` (flake8.defaults.NOQA_INLINE_REGEXP), for suppressions and for `--add-noqa`."""
    return _flake8_defaults().NOQA_INLINE_REGEXP


def ignores_file(text: str) -> bool:
    """flake8's file-level `# flake8: noqa`: a line that flake8.defaults.NOQA_FILE matches from its
    start (one after code does not count), as flake8's FileProcessor.should_ignore_file asks."""
    if not _spells_flake8(text):
        return False
    pattern = _flake8_defaults().NOQA_FILE
    return any(pattern.match(line) for line in text.splitlines())


def _spells_flake8(text: str) -> bool:
    """Whether the text holds "flake8" in any case, found from its one character without a
    case: "8" is rare in code, "e" the commonest letter (a search for "e8" stopped at every
    "e", a fifth of the characters), and lowering a copy of every file cost more still."""
    at = text.find("8", 5)
    while at != -1:
        if text[at - 5:at].lower() == "flake":
            return True
        at = text.find("8", at + 1)
    return False


def add_noqa(text: str, found: Iterable[Tuple[int, str]], ranges: Optional[Dict[int, Tuple[int, int]]] = None
             ) -> Tuple[str, int]:
    """The text with a noqa for each (line, code), and how many lines gained or extended one;
    `ranges`: line -> the (first, last) lines read with it (None: each line alone)."""
    ranges = ranges or {}
    codes: Dict[int, Set[str]] = defaultdict(set)
    for line, code in found:
        codes[ranges.get(line, (line, line))[1]].add(code)
    lines: List[str] = text.splitlines(True)
    changed = 0
    for number, wanted in sorted(codes.items()):
        if not 0 < number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        match = noqa_pattern().search(body)
        if match and match.group("codes") is None:
            continue  # a bare noqa silences everything already
        if match:
            listed = match.group("codes").rstrip(", \t")
            end = match.start("codes") + len(listed)
            body = body[:end] + "".join(f",{code}" for code in sorted(wanted)) + body[end:]
        else:
            body = body.rstrip() + f"  # noqa: {','.join(sorted(wanted))}"
        lines[number - 1] = body + ending
        changed += 1
    return "".join(lines), changed
