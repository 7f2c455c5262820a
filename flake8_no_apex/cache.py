"""The cache of `check` (ruff's idea): each file's findings, kept under `.flake8-no-apex-cache/`
and reused while nothing they depend on has changed, so a run over an unchanged tree reads,
stats and hashes files and never imports the engine.

An entry is found by the file's path (and whether it was named on the command line) in the
cache file of one description: the tool's own code (its version, and the path, size and time of
each of the package's sources, so a new rule or fix invalidates everything), the settings that
change findings, the working directory and what the output shows of fixes. The file is named
by a checksum of the description and holds the description itself: a file whose description
differs is not used. An entry is valid while the file's size and modification time are the
same, or, when they changed, its content hash is; and while the project metadata its version
targets come from (the project root, and the size and time of each metadata file there) is the
same. Files that could not be checked are never cached. The cache file is written atomically
(a temporary file renamed over it), so concurrent runs never see half a file; a cache that
cannot be read is ignored and rebuilt. A warm run reads no source and loads no OpenSSL.
"""
from __future__ import annotations

import binascii
import json
import os
from functools import lru_cache
from pathlib import Path

from . import __version__
from .config import Settings
from .report import Reported
from .targets import Detector, metadata_files

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple

DEFAULT_DIRECTORY = ".flake8-no-apex-cache"
_FORMAT = 3  # the layout of the cache file (3: each finding a list of its fields, in their order)


def content_hash(raw: bytes) -> str:
    """A file's content as an entry keeps it (hashlib: imported only where a file must be hashed)."""
    import hashlib

    return hashlib.sha256(raw).hexdigest()


@lru_cache(maxsize=None)
def _code() -> List[object]:
    """The tool's own code: its version, and each source's path, size and modification time
    (an edit to a rule, a fix or the engine changes it; nothing is read)."""
    sources: List[object] = [__version__]
    folders = [""]  # below the package, "" or "inputs/": paths joined as strings (relpath was most of it)
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    while folders:
        folder = folders.pop(0)
        with os.scandir(package + folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                status = entry.stat()
                sources.append([folder.replace(os.sep, "/") + entry.name, status.st_size, status.st_mtime_ns])
        folders += [folder + entry.name + os.sep for entry in entries if entry.is_dir() and entry.name != "__pycache__"]
    return sources


def description(settings: Settings, fixes: str) -> str:
    """What every entry of one cache file shares."""
    keys = ("select", "extend_select", "ignore", "extend_ignore", "per_file_ignores", "targets", "check_docs",
            "disable_noqa")
    given = {key: getattr(settings, key) for key in keys}
    return json.dumps([_FORMAT, _code(), given, os.getcwd(), fixes], sort_keys=True, default=str)


class Cache:
    def __init__(self, directory: Path, settings: Settings, fixes: str):
        self.directory = directory
        self.described = description(settings, fixes)
        # a checksum names the file (binascii: hashlib would load OpenSSL); the description inside decides
        self.file = directory / f"{binascii.crc32(self.described.encode()):08x}.json"
        self.detect = Detector()
        self._by_directory: Dict[str, Optional[list]] = {}
        self._by_root: Dict[Path, list] = {}
        self.entries: Dict[str, dict] = self._load()
        self.changed = False

    def _load(self) -> Dict[str, dict]:
        try:
            kept = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, unreadable or corrupt: start afresh
            return {}
        if not isinstance(kept, dict) or kept.get("description") != self.described:
            return {}  # another description with the same checksum, or another layout
        entries = kept.get("entries")
        return entries if isinstance(entries, dict) else {}

    @staticmethod
    def key(path: Path, named: bool) -> str:
        return f"{'named' if named else 'found'}:{path}"

    def _metadata(self, path: Path) -> Optional[list]:
        """Where the file's version targets come from, as a comparable value (once per directory)."""
        directory = os.path.dirname(path)
        if directory not in self._by_directory:
            self._by_directory[directory] = self._stamps(path)
        return self._by_directory[directory]

    def _stamps(self, path: Path) -> Optional[list]:
        root = self.detect.root_of(str(path))
        if root is None:
            return None
        if root not in self._by_root:  # the directories of a tree share a few roots: each is listed once
            stamps = []
            for file in metadata_files(root):
                try:
                    status = file.stat()
                    stamps.append([file.name, status.st_size, status.st_mtime_ns])
                except OSError:
                    continue
            self._by_root[root] = [str(root), stamps]
        return self._by_root[root]

    def get(self, path: Path, named: bool) -> Optional[List[Reported]]:
        entry = self.entries.get(self.key(path, named))
        if entry is None:
            return None
        try:
            status = path.stat()
            if [status.st_size, status.st_mtime_ns] != entry["stat"]:
                if content_hash(path.read_bytes()) != entry["sha256"]:  # only a file whose size or time changed
                    return None
                entry["stat"] = [status.st_size, status.st_mtime_ns]  # touched, not changed
                self.changed = True
            if self._metadata(path) != entry["metadata"]:
                return None
            return [Reported(*row) for row in entry["rows"]]
        except (OSError, KeyError, TypeError):
            return None

    def put(self, path: Path, named: bool, stamp: Tuple[int, int, str], rows: List[Reported]) -> None:
        """Keep a file's findings, with its stamp (size, time, hash) as it was read, not as it is
        now: a file written meanwhile is then found changed on the next run."""
        size, mtime_ns, sha256 = stamp
        self.entries[self.key(path, named)] = {
            "stat": [size, mtime_ns], "sha256": sha256, "metadata": self._metadata(path),
            "rows": [list(row) for row in rows]}
        self.changed = True

    def save(self) -> None:
        """Write the cache file atomically; a cache that cannot be written is skipped in silence
        (the run's findings are right either way)."""
        if self.changed:
            _write(self.directory, self.file, {"description": self.described, "entries": self.entries})


def _write(directory: Path, file: Path, kept: dict) -> None:
    """Write a file of the cache atomically (a temporary file renamed over it), or nothing where
    it cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# made by flake8-no-apex: the cache is never committed\n*\n")
        import tempfile  # a run that reads the cache and changes nothing writes nothing

        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(kept, stream, separators=(",", ":"))
        os.replace(temporary, file)
    except OSError:
        return


class SettingsMemo:
    """What the settings files (pyproject.toml, setup.cfg, tox.ini, .flake8) parsed to, each kept
    with the text it was parsed from: a file whose text is the same is not parsed again, so a warm
    run loads neither the TOML nor the INI parser. The tool's own code is part of the file: a new
    release reads each file again. A parse that fails, or that JSON cannot hold (a TOML date), is
    not kept."""

    NAME = "settings.json"

    def __init__(self, directory: Path):
        self.directory, self.file = directory, directory / self.NAME
        self.code = _code()
        self.changed = False
        self.used: set = set()  # the keys this run asked for
        try:
            kept = json.loads(self.file.read_text(encoding="utf-8"))
            self.kept = kept["parses"] if kept.get("code") == self.code and isinstance(kept["parses"], dict) else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.kept = {}

    def of(self, kind: str, path: Path, text: str, parse: Callable[[str], object]) -> object:
        key = f"{kind}:{path}"
        hit = self.kept.get(key)
        self.used.add(key)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == text:
            return json.loads(hit[1])  # a fresh value each time: the caller may change it
        value = parse(text)
        try:
            self.kept[key] = [text, json.dumps(value)]
        except (TypeError, ValueError):
            self.kept.pop(key, None)
            return value
        self.changed = True
        return value

    def save(self) -> None:
        """Write the parses this run used (others are of files no longer read from here)."""
        if self.changed:
            kept = {key: value for key, value in self.kept.items() if key in self.used}
            _write(self.directory, self.file, {"code": self.code, "parses": kept})
