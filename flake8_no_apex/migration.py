"""The per-file apex AMP migration report of `fix`: which files moved off apex AMP (with what the
user must know) and which were refused, with the one blocker that decided it, as text after the
run's lines or as JSON, so a team can track what is left."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, List, Optional

from .rules.apex_amp import NOT_MIGRATED

if TYPE_CHECKING:
    from dataclasses import asdict, dataclass, field
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import asdict, dataclass, field

APEX_AMP_CODES = frozenset({"APX101", "APX102", "APX103", "APX106"})
MIGRATED, REFUSED, UNSAFE = "migrated", "refused", "unsafe"


@dataclass
class Outcome:
    file: str
    status: str  # MIGRATED, REFUSED or UNSAFE
    line: int  # where the blocker is (refused), or the first apex AMP line
    reason: str = ""  # the blocker, for a refused file
    notes: List[str] = field(default_factory=list)  # what a migrated file's user must know


def outcome(path: str, result, unsafe: bool) -> Optional[Outcome]:
    """The file's migration, from its fix result (its lines: the file's as the run found it);
    None where it had no apex AMP code."""
    notes = result.notes
    fixed = [f for f in result.fixed if f.code in APEX_AMP_CODES]
    left = [f for f in result.remaining if f.code in APEX_AMP_CODES]
    if not fixed and not left:
        return None
    prefix = f"{NOT_MIGRATED}: "
    refusals = sorted((line, note[len(prefix):]) for line, note in notes if note.startswith(prefix))
    if left and refusals:
        return Outcome(path, REFUSED, refusals[0][0], refusals[0][1])
    if left and not unsafe:
        return Outcome(path, UNSAFE, min(f.line for f in left))
    if left:  # each finding left for its own reason (a noqa, an unselected code)
        first = min(left, key=lambda f: f.line)
        return Outcome(path, REFUSED, first.line, f"{first.code} is left to a person")
    said = [note for _, note in sorted(notes) if not note.startswith(prefix)]
    return Outcome(path, MIGRATED, min(f.line for f in fixed), notes=said)


def text(outcomes: List[Outcome]) -> str:
    """The report's lines: a count, then a line per file (refused ones first: they need work)."""
    if not outcomes:
        return ""
    counts = {status: sum(1 for o in outcomes if o.status == status) for status in (MIGRATED, REFUSED, UNSAFE)}
    said = {MIGRATED: "migrated", REFUSED: "refused", UNSAFE: "to migrate with --unsafe-fixes"}
    lines = ["apex AMP migration: " + ", ".join(
        f"{n} {'file' if n == 1 else 'files'} {said[status]}" for status, n in counts.items() if n)]
    for o in sorted(outcomes, key=lambda o: (o.status != REFUSED, o.status != UNSAFE, o.file)):
        if o.status == REFUSED:
            lines.append(f"  refused   {o.file}:{o.line}: {o.reason}")
        elif o.status == UNSAFE:
            lines.append(f"  unsafe    {o.file}:{o.line}: migrates with --unsafe-fixes")
        else:
            lines.append(f"  migrated  {o.file}" + "".join(f"\n            note: {n}" for n in o.notes))
    return "\n".join(lines) + "\n"


def as_json(fixed: dict, remaining: list, outcomes: List[Outcome]) -> str:
    """`fix --output-format json`: what was fixed (per file, per code), what needs a person and
    the migration of each file with apex AMP code."""
    return json.dumps({"fixed": {path: dict(codes) for path, codes in fixed.items()}, "remaining": remaining,
                       "migration": [asdict(o) for o in outcomes]}, indent=2) + "\n"
