"""NVIDIA apex's git history, for the apex claims of the rule table.

apex is not on the registry: its facts are read from a clone of its repository (tags are its
releases; the parts deleted after its last tag are dated by the commit that deleted them). The
clone is kept outside the repository, in the conformance cache (`apex.git`), and made from a local
mirror when one is found: `$FLAKE8_NO_APEX_APEX_GIT`, or the search tool's `/work/.mirror`. Where
none is, the checks are skipped and say so.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Tuple

from packaging.version import InvalidVersion, Version

CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex"))
CLONE = CACHE / "apex.git"
MIRRORS = [os.environ.get("FLAKE8_NO_APEX_APEX_GIT", ""), "/work/.mirror/NVIDIA+apex/repo"]


def _git(repository: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(repository), *args], capture_output=True, text=True)


@lru_cache(maxsize=None)
def repository() -> Optional[Path]:
    """The cached clone of apex's history, made from a mirror if it is not there yet; None if
    neither is available (or git is not installed)."""
    if shutil.which("git") is None:
        return None
    if _git(CLONE, "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
        return CLONE
    for mirror in filter(None, MIRRORS):
        if _git(Path(mirror), "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
            CACHE.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(CLONE, ignore_errors=True)
            done = subprocess.run(["git", "clone", "--quiet", "--bare", mirror, str(CLONE)], capture_output=True)
            if done.returncode == 0:
                return CLONE
    return None


def git(*args: str) -> str:
    result = _git(repository(), *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def tags() -> List[str]:
    """apex's release tags (YY.MM), oldest first."""
    found = []
    for tag in git("tag").split():
        try:
            found.append((Version(tag), tag))
        except InvalidVersion:
            continue
    return [tag for _, tag in sorted(found)]


def previous_tag(tag: str) -> str:
    older = [t for t in tags() if Version(t) < Version(tag)]
    assert older, f"no tag before {tag}"
    return older[-1]


def module_paths(module: str) -> List[str]:
    """Where a dotted module can live in the tree: a package directory or a file."""
    base = module.replace(".", "/")
    return [base, base + ".py"]


def has_module(revision: str, module: str) -> bool:
    return any(_git(repository(), "cat-file", "-e", f"{revision}:{path}").returncode == 0
               for path in module_paths(module))


def defines(revision: str, module: str, name: str) -> bool:
    """Whether the module's source at `revision` has the word `name` (a def, class or import)."""
    result = _git(repository(), "grep", "-q", "-w", "-e", name, revision, "--", *module_paths(module))
    return result.returncode == 0


WARNING = "is deprecated and will be removed"  # the phrase of every apex deprecation (apex.deprecated_warning)


def warns(revision: str, module: str) -> bool:
    """Whether the module's source at `revision` carries apex's deprecation warning."""
    result = _git(repository(), "grep", "-q", "-i", "-F", "-e", WARNING, revision, "--", *module_paths(module))
    return result.returncode == 0


def deleting_commit(module: str) -> Optional[Tuple[str, str]]:
    """(commit, day YYYY-MM-DD) of the commit on the main branch that deleted the module, if any."""
    for path in module_paths(module):
        target = path + "/__init__.py" if not path.endswith(".py") else path
        found = git("log", "-1", "--first-parent", "--diff-filter=D", "--format=%H %cs", "HEAD", "--", target).split()
        if found:
            return found[0], found[1]
    return None


def name_removing_commit(module: str, name: str) -> Optional[Tuple[str, str]]:
    """(commit, day) of the newest commit on the main branch that changed how often the module's
    source says `name`: where a name that moved out of a module that stays (`apex.optimizers`) left."""
    found = git("log", "-1", "--first-parent", "--format=%H %cs", "-S", name, "HEAD", "--",
                *module_paths(module)).split()
    return (found[0], found[1]) if found else None


def warned_from(module: str) -> Optional[str]:
    """The day of the first commit that put the deprecation warning into the module."""
    days = git("log", "--reverse", "--format=%cs", "-S", WARNING, "HEAD", "--", *module_paths(module)).split()
    return days[0] if days else None
