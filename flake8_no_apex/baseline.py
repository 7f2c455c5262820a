"""Baselines (`check --baseline FILE`, `--update-baseline`), as type checkers offer them: CI fails
only on findings that are new since the baseline was written.

A finding is known by its file, its code and the text of its line (stripped), not by its line
number, so code added above it does not make it new; each entry covers one finding, so a second
copy of a known line is new.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from .files import InputError
from .report import Reported

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import List, Tuple

    Key = Tuple[str, str, str]

VERSION = 1


def _key(item: Reported) -> Key:
    return Path(os.path.normpath(item.path)).as_posix(), item.code, item.source_line.strip()


def write_baseline(path: Path, items: List[Reported]) -> None:
    entries = [{"path": p, "code": c, "line": text} for p, c, text in sorted(_key(item) for item in items)]
    try:
        path.write_text(json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"{path}: cannot write the baseline: {error.strerror or error}") from None


def read_baseline(path: Path) -> Counter:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return Counter((entry["path"], entry["code"], entry["line"]) for entry in data["findings"])
    except OSError as error:
        raise InputError(f"{path}: cannot read the baseline: {error.strerror or error}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise InputError(f"{path}: not a baseline written by --update-baseline ({error})") from None


def new_findings(items: List[Reported], known: Counter) -> List[Reported]:
    """The findings the baseline does not cover, in their order."""
    left = Counter(known)
    fresh = []
    for item in items:
        key = _key(item)
        if left[key]:
            left[key] -= 1
        else:
            fresh.append(item)
    return fresh
