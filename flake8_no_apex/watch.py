"""`check --watch`: check again whenever a file under the paths changes, as `ruff check --watch`
does, for people without an editor integration. It polls (the standard library has no portable
file events): each file's size and modification time, and the config files'."""
from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from .files import discover

INTERVAL = 0.5  # seconds between polls: a change shows within a second
_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", ".flake8")

Snapshot = Dict[str, Tuple[int, int]]


def snapshot(paths: List[str], exclude: List[str], docs: bool) -> Snapshot:
    """(size, mtime) of every file a check of `paths` would read, and of the config files of the
    working directory and above (a changed setting is a changed result)."""
    candidates, _ = discover(paths, exclude, other_files=True, docs=docs)
    directory = Path.cwd()
    named = [candidate.path for candidate in candidates if not candidate.stdin]
    named += [folder / name for folder in (directory, *directory.parents) for name in _CONFIG_FILES]
    state = {}
    for path in named:
        try:
            status = os.stat(path)
        except OSError:
            continue
        state[str(path)] = (status.st_size, status.st_mtime_ns)
    return state


def watch(check_once: Callable[[], int], paths: List[str], exclude: List[str], docs: bool, err) -> int:
    """Run `check_once` now and after each change, until interrupted (then exit 0, as ruff does)."""
    try:
        while True:
            print(f"[{datetime.now():%H:%M:%S}] checking {' '.join(paths)} (watching for changes)", file=err,
                  flush=True)
            before = snapshot(paths, exclude, docs)
            check_once()
            err.flush()
            while snapshot(paths, exclude, docs) == before:
                time.sleep(INTERVAL)
    except KeyboardInterrupt:
        return 0
