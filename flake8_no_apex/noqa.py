"""`check --add-noqa` (ruff's): a `# noqa: APXnnn` on every line with a finding, for teams that
adopt the gate before they finish the migration.

The comment goes where flake8 will look for it: at the end of the finding's line, or of the
last line flake8 reads with it (a multi-line string, a backslash continuation); codes join an
existing `# noqa: ...` list. What is already suppressed is never reported, so never touched.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, Iterable, List, Optional, Set, Tuple

from .fixer import noqa_pattern


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
