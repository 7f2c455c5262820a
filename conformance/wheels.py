"""Released wheels, downloaded once into a cache outside the repository, read as source.

A library's behaviour at a version boundary is read from the files of its released wheel
(`pip download --no-deps`), not installed: Lightning and transformers wheels are small, and
torch's macOS arm64 wheels carry the same Python sources as every other platform in ~60 MB
(a Linux wheel is several GB), so those are the ones fetched.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Optional

CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex")) / "wheels"
# torch: a small wheel with the same Python sources (see the module docstring)
PLATFORM = {"torch": ["--only-binary=:all:", "--platform", "macosx_11_0_arm64", "--python-version", "3.9"]}


def _wheel_name(dist: str) -> str:
    return dist.replace("-", "_")


@lru_cache(maxsize=None)
def wheel(dist: str, version: str) -> zipfile.ZipFile:
    """The wheel of `dist==version`, fetched into the cache on first use."""
    CACHE.mkdir(parents=True, exist_ok=True)
    pattern = f"{_wheel_name(dist)}-{version}-*.whl"
    found = sorted(CACHE.glob(pattern))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                        *PLATFORM.get(dist, []), f"{dist}=={version}", "-d", str(CACHE)], check=True)
        found = sorted(CACHE.glob(pattern))
    if not found:
        raise FileNotFoundError(f"no wheel for {dist}=={version} in {CACHE}")
    return zipfile.ZipFile(found[0])


def unpacked(dist: str, version: str) -> Path:
    """The wheel of `dist==version` unpacked once into the cache (code run from it, not installed)."""
    target = CACHE / f"{_wheel_name(dist)}-{version}-unpacked"
    if not target.is_dir():
        partial = target.with_name(target.name + ".part")
        wheel(dist, version).extractall(partial)
        partial.rename(target)
    return target


class Release:
    """One released version of a distribution, as its source files."""

    def __init__(self, dist: str, version: str):
        self.dist, self.version = dist, version
        self._zip = wheel(dist, version)
        self._names = set(self._zip.namelist())

    def __repr__(self) -> str:
        return f"{self.dist}=={self.version}"

    def source(self, path: str) -> Optional[str]:
        return self._zip.read(path).decode("utf-8") if path in self._names else None

    def raw(self, path: str) -> Optional[bytes]:
        return self._zip.read(path) if path in self._names else None

    def has(self, path: str) -> bool:
        return path in self._names

    def python_sources(self):
        for name in sorted(self._names):
            if name.endswith(".py"):
                yield name, self._zip.read(name).decode("utf-8", errors="replace")
