"""Files: which to check, how to read them, and how to write them back losing nothing.

Every problem with one path is that path's error, said in one line; the other paths go on.
"""
from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import stat
import sys
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union
else:
    from .records import NamedTuple


class MalformedFile(ValueError):
    """A YAML or TOML file that does not parse (or is too large to read): reported as that
    file's error, never skipped in silence."""


class InputError(Exception):
    """A path that cannot be found, read, decoded, parsed or written, or a setting that cannot
    be used: one line for the user, never a traceback."""


STDIN = "-"  # the path that means standard input, as in flake8 and ruff


class Candidate(NamedTuple):
    path: Path
    named: bool = False  # named on the command line (not found by walking a directory)
    stdin: bool = False  # the text comes from standard input; `path` is the name it stands for


class Exclusions:
    """flake8's rule: a pattern matches the base name or the absolute path (not resolving
    links). The patterns are compiled once, the base name is tested first, and a walk gives
    each directory's absolute path once."""

    def __init__(self, patterns: Sequence[str]):
        joined = "|".join(fnmatch.translate(os.path.normcase(p)) for p in patterns)
        self._match = re.compile(joined).match if patterns else None

    def __call__(self, name: str, absolute: str) -> bool:
        return self._match is not None and bool(
            self._match(os.path.normcase(name)) or self._match(os.path.normcase(absolute)))

    def path(self, path: Path) -> bool:
        return self(path.name, os.path.abspath(path))


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def discover(names: Sequence[str], exclude: Sequence[str], other_files: bool = False, stdin_name: str = "stdin",
             docs: bool = False) -> Tuple[List[Candidate], List[str]]:
    """Python modules below `names` (and, for `check` and `fix`, the files of the other input
    kinds: notebooks, YAML, dependency files, shell scripts...; `docs`: Markdown and RST too), and
    one line for each path that cannot be used; a file named explicitly is taken whatever its
    name, and `-` is standard input, standing for a file named `stdin_name`."""
    found: List[Candidate] = []
    errors: List[str] = []
    excluded = Exclusions(exclude)
    for name in names:
        path = Path(name)
        try:
            if name == STDIN:
                found.append(Candidate(Path(stdin_name), named=True, stdin=True))
            elif path.is_file():
                if not excluded.path(path):
                    found.append(Candidate(path, named=True))
            elif path.is_dir():
                found += _walk(path, excluded, other_files, docs, errors)
            elif path.is_symlink():
                errors.append(f"{name}: a symbolic link that leads nowhere (dangling, or a loop)")
            else:
                errors.append(f"{name}: no such file or directory")
        except OSError as error:
            errors.append(f"{name}: cannot read: {_why(error)}")
    return found, errors


def _walk(root: Path, excluded: Exclusions, other_files: bool, docs: bool, errors: List[str]
          ) -> Iterator[Candidate]:
    def unreadable(error: OSError) -> None:
        errors.append(f"{error.filename}: cannot read the directory: {_why(error)}")

    from .inputs import walked

    for directory, subdirectories, names in os.walk(root, onerror=unreadable):
        absolute = os.path.abspath(directory)
        subdirectories[:] = sorted(d for d in subdirectories if not excluded(d, os.path.join(absolute, d)))
        parent = Path(directory)  # a path is made for each file taken, from strings (a walk's cost was paths)
        folder = parent.as_posix()
        for file in sorted(names):
            # a Python module, or (`other_files`) a file any input kind walks
            wanted = walked(file, folder, docs) if other_files else file.endswith(".py")
            if wanted and not excluded(file, os.path.join(absolute, file)):
                yield Candidate(parent / file, named=False)


class RealPaths:
    """Real paths of a run's files: a directory's is its parent's, remembered, and its name,
    unless it is a link (or `.`, `..`), so a tree costs one `lstat` per directory and file,
    not pathlib's `resolve` of every part of every path. Directories are as given (a relative
    one: to the unchanging working directory)."""

    def __init__(self) -> None:
        self._directories: Dict[str, Path] = {}

    def directory(self, directory: str) -> Path:
        resolved = self._directories.get(directory)
        if resolved is None:
            parent, name = os.path.split(directory)
            known = self._directories.get(parent) if parent and parent != directory else None
            if known is not None and name not in ("", ".", "..") and not os.path.islink(directory):
                resolved = known / name
            else:
                resolved = Path(directory or ".").resolve()
            self._directories[directory] = resolved
        return resolved

    def file(self, path: "Union[str, os.PathLike[str]]") -> Path:
        """`Path(path).resolve()`."""
        path = os.fspath(path)
        directory, name = os.path.split(path)
        if name in ("", ".", "..") or os.path.islink(path):
            return Path(path).resolve()
        return self.directory(directory) / name


class Decoded(NamedTuple):
    raw: bytes
    text: str
    encoding: str  # "utf-8-sig" keeps a BOM; an encoding cookie keeps its codec
    seen: Optional[os.stat_result] = None  # the file as it was read: a write checks it is unchanged


def read(path: Path, stdin: bool = False) -> Decoded:
    """A file's text, decoded as Python decodes modules (dependency and YAML files: UTF-8);
    with `stdin`, standard input's, for a file named `path`."""
    try:
        raw = sys.stdin.buffer.read() if stdin else path.read_bytes()
        seen = None if stdin else os.stat(path)
        if not path.name.endswith(".py"):  # UTF-8, its BOM kept if it has one
            encoding = "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"
            return Decoded(raw, raw.decode(encoding), encoding, seen)
        import tokenize  # a run that reads no module (a warm one) never loads it

        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return Decoded(raw, raw.decode(encoding), encoding, seen)  # newlines kept as they are
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as error:
        reason = _why(error) if isinstance(error, OSError) else error
        raise InputError(f"{path}: cannot read: {reason}") from None


def compiled_by_python(path: Path, decoded: Decoded) -> bool:
    """Whether this Python's bytecode cache (`__pycache__`) holds a compilation of this file as
    it was read, so the file parses: a timestamp pyc of its mtime and size (the check the import
    system trusts; a same-size edit within the same second escapes it, as it escapes import),
    or a hash-based pyc of its bytes. Standard input and an editor's buffer have no such proof."""
    if decoded.seen is None:
        return False
    from importlib.util import MAGIC_NUMBER, cache_from_source, source_hash  # only where a syntax check would run

    try:
        with open(cache_from_source(str(path), optimization=""), "rb") as handle:
            header = handle.read(16)
    except (OSError, ValueError, NotImplementedError):  # none, unreadable, or no cache for this Python
        return False
    if len(header) < 16 or header[:4] != MAGIC_NUMBER:
        return False
    flags = int.from_bytes(header[4:8], "little")
    if flags & 1 and not flags & ~0b11:  # hash-based (checked or not: the hash is checked here)
        return header[8:16] == source_hash(decoded.raw)
    mtime, size = int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")
    return flags == 0 and (mtime, size) == (int(decoded.seen.st_mtime) & 0xFFFFFFFF, len(decoded.raw) & 0xFFFFFFFF)


def _unchanged(seen: os.stat_result, now: os.stat_result) -> bool:
    return (seen.st_size, seen.st_mtime_ns, seen.st_ino) == (now.st_size, now.st_mtime_ns, now.st_ino)


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def write(path: Path, decoded: Decoded, new: bytes, roots: Sequence[Path]) -> None:
    """Replace a file's content, keeping its mode, owner, links and everything around it.

    The file is written to a temporary file beside it and renamed over it, after checking
    again that the file is what was read (size, mtime, inode): a change made meanwhile is never
    lost. A symbolic link is written through only when its target lies inside `roots` (the
    paths given); a file with several hard links is rewritten in place so the links stay one
    file; a file without write permission is left."""
    target = path
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not _inside(target, roots):
            raise InputError(f"{path}: a symbolic link to {target}, outside the paths given; left as it is")
    try:
        now = os.stat(target)
    except OSError as error:
        raise InputError(f"{path}: cannot write: {_why(error)}") from None
    if decoded.seen is None or not _unchanged(decoded.seen, now) or target.read_bytes() != decoded.raw:
        raise InputError(f"{path}: changed on disk while being fixed; left as it is")
    if not os.access(target, os.W_OK):
        raise InputError(f"{path}: no permission to write it; left as it is")
    try:
        if now.st_nlink > 1:
            _write_in_place(target, decoded, new)
        else:
            _replace(target, decoded, new, now)
    except OSError as error:
        raise InputError(f"{path}: cannot write: {_why(error)}; left as it is") from None


def _write_in_place(target: Path, decoded: Decoded, new: bytes) -> None:
    with open(target, "r+b") as handle:
        if not _unchanged(decoded.seen, os.fstat(handle.fileno())):
            raise InputError(f"{target}: changed on disk while being fixed; left as it is")
        handle.write(new)
        handle.truncate()


def _replace(target: Path, decoded: Decoded, new: bytes, now: os.stat_result) -> None:
    import tempfile  # only where files are written (here and below: not on a `check`)

    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(new)
        os.chmod(temporary, stat.S_IMODE(now.st_mode))
        if hasattr(os, "chown") and (now.st_uid, now.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temporary, now.st_uid, now.st_gid)
            except PermissionError:  # only root may give a file away; the content still counts
                pass
        if not _unchanged(decoded.seen, os.stat(target)):  # the last moment before the rename
            raise InputError(f"{target}: changed on disk while being fixed; left as it is")
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


@contextmanager
def terminated_cleanly() -> Iterator[None]:
    """SIGTERM ends the run through the same path as Ctrl-C, so a write in progress removes
    its temporary file and leaves the original as it was."""
    import signal

    def stop(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def unified_diff(path: Path, old: str, new: str) -> str:
    """A patch `patch -p1` applies: lines end at "\\n" only (a CR-only file is one line to
    patch), and a last line without one is marked as such."""
    import difflib

    lines = difflib.unified_diff(_LINE.findall(old), _LINE.findall(new), fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
