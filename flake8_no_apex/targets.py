"""Which releases of torch, Lightning and transformers a project supports.

A rule reports only what the project can act on: a project that still supports torch 2.1 is
not told to use `torch.amp.GradScaler("cuda")`, which arrived in torch 2.3. The floors come
from `--apex-target-versions torch=2.1,lightning=1.9` or, by default (`auto`), from the lower
bounds the project declares in its own metadata, found upward from each checked file.
"""
from __future__ import annotations

import fnmatch
import os
import re
import sys
import warnings
from pathlib import Path


from .compat import load_toml
from .files import RealPaths

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:  # packaging is imported where versions are read (a warm check reads none)
    from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    Floors = Dict[str, Version]
else:
    from .records import NamedTuple


class MetadataWarning(UserWarning):
    """A metadata file that could not be read; detection goes on without it."""


# Distribution names (PyPI) and option names that stand for one library of the rule table.
DISTRIBUTIONS = {
    "torch": "torch",
    "pytorch": "torch",
    "lightning": "lightning",
    "pytorch-lightning": "lightning",
    "lightning-fabric": "lightning",
    "lightning-lite": "lightning",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "mmcv": "mmcv",
    "mmcv-full": "mmcv",
    "mmcv-lite": "mmcv",
    "deepspeed": "deepspeed",
}
_REQUIREMENT_FILES = ("requirements*.txt", "constraints*.txt", "requirements/*.txt")
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")


class Targets(NamedTuple):
    """Floors per library, and where they were read from (for `flake8 -v` and `--show-targets`)."""

    floors: Floors
    sources: Tuple[str, ...] = ()
    origins: Tuple[Tuple[str, str], ...] = ()  # (library, where its floor comes from)

    def describe(self) -> str:
        if not self.floors:
            return f"none (newest releases) from {', '.join(self.sources) or 'no metadata'}"
        origin = dict(self.origins)
        return ", ".join(f"{lib}>={v} from {origin.get(lib) or ', '.join(self.sources)}"
                         for lib, v in sorted(self.floors.items()))

    def overridden_by(self, explicit: "Targets") -> "Targets":
        """These detected targets with the libraries `explicit` names replaced: a target given for
        torch says nothing about Lightning, whose declared floor still holds."""
        origins = {**dict(self.origins), **{lib: ", ".join(explicit.sources) for lib in explicit.floors}}
        floors = {**self.floors, **explicit.floors}
        sources = tuple(dict.fromkeys(origins[lib] for lib in sorted(floors)))
        return Targets(floors, sources, tuple(sorted((lib, origins[lib]) for lib in floors)))


def _canonical(name: str) -> str:
    """PEP 503's normalized name (packaging's canonicalize_name, without importing its tags)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- the option ---------------------------------------------------------------------------
class TargetError(ValueError):
    """A malformed `--apex-target-versions` value."""


def parse_option(text: str, source: str = "--apex-target-versions") -> Optional[Targets]:
    """`auto` -> None (detect per file); `torch=2.1,lightning=1.9` -> explicit floors, said to
    come from `source` (the option, or the config file that set it)."""
    text = text.strip()
    if text in ("", "auto"):
        return None
    from packaging.version import InvalidVersion, Version

    floors: Floors = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, version = (s.strip() for s in item.partition("="))
        library = DISTRIBUTIONS.get(_canonical(name))
        if not sep or library is None:
            known = ", ".join(sorted(set(DISTRIBUTIONS.values())))
            raise TargetError(f"{item!r}: expected LIBRARY=VERSION with LIBRARY one of {known}, or 'auto'")
        try:
            floors[library] = Version(version)
        except InvalidVersion:
            raise TargetError(f"{item!r}: {version!r} is not a version") from None
    return Targets(floors, (source,), tuple(sorted((library, source) for library in floors)))


# --- lower bounds of requirements -----------------------------------------------------------
def lower_bound(specifiers: SpecifierSet) -> Optional[Version]:
    """The lowest release a specifier set admits, as far as it says: `>=2.1`, `~=2.1`,
    `==2.1.*`, `==2.1` and `>2.1` give 2.1; `<3`, `!=2.0` give nothing."""
    from packaging.version import InvalidVersion, Version

    bounds = []
    for spec in specifiers:
        if spec.operator in (">=", ">", "~=", "==", "==="):
            try:
                bounds.append(Version(spec.version.rstrip(".*")))
            except InvalidVersion:
                continue
    return max(bounds, default=None)


def _poetry_specifiers(constraint: str) -> SpecifierSet:
    """Poetry's `^2.1`, `~2.1`, `2.1.*`, `>=2.1,<3` and bare `2.1` as PEP 440 specifiers;
    of alternatives (`^1.13 || ^2.0`) the one admitting the oldest release."""
    from packaging.specifiers import SpecifierSet

    alternatives = []
    for alternative in constraint.split("||"):
        parts = []
        for part in alternative.replace(" ", "").split(","):
            if part in ("", "*"):
                continue
            if part[0] in "^~" and part[1:2] != "=":
                part = ">=" + part[1:]
            elif part[0].isdigit():
                part = "==" + part
            parts.append(part)
        alternatives.append(SpecifierSet(",".join(parts)))
    from packaging.version import Version

    return min(alternatives, key=lambda specs: lower_bound(specs) or Version("0"))


class Declaration(NamedTuple):
    library: str
    floor: Optional[Version]
    source: str


def _log(message: str) -> None:
    """Said under flake8's logger (`flake8 -v` shows it). Logging that nobody imported has no
    handler to show it: it is not imported for this."""
    if "logging" in sys.modules:
        sys.modules["logging"].getLogger("flake8.no_apex").info(message)


_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def requirement_name(text: str) -> Optional[str]:
    """The distribution a PEP 508 requirement names (its first word), None if none can start
    it: a line that names another project needs no parse by packaging to be skipped."""
    name = _REQUIREMENT_NAME.match(text)
    return name.group(1) if name else None


def _from_requirement(text: str, source: str) -> Optional[Declaration]:
    if DISTRIBUTIONS.get(_canonical(requirement_name(text) or "")) is None:
        return None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None  # editable installs, URLs of other projects, pip options: not ours
    library = DISTRIBUTIONS.get(_canonical(requirement.name))
    if library is None or requirement.url:
        return None
    return Declaration(library, lower_bound(requirement.specifier), source)


def is_file(path: Path) -> bool:
    """A file we may look at: a directory we cannot search holds none for us."""
    try:
        return path.is_file()
    except OSError:
        return False


def _requirement_lines(path: Path, seen: set) -> Iterator[str]:
    """PEP 508 lines of a requirements file, following `-r`/`-c` includes."""
    if path in seen or not is_file(path):
        return
    seen.add(path)
    text = path.read_text(encoding="utf-8").replace("\\\n", "")
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        for option in ("-r", "--requirement", "-c", "--constraint"):
            if line.startswith(option + " ") or line.startswith(option + "="):
                yield from _requirement_lines(path.parent / line[len(option) + 1:].strip(), seen)
                break
        else:
            if not line.startswith("-"):
                yield line


def _pyproject(path: Path) -> Iterator[str]:
    """PEP 508 requirements from PEP 621, PEP 735, Poetry and PDM tables."""
    data = load_toml(path.read_text(encoding="utf-8"))
    project = data.get("project", {})
    yield from project.get("dependencies", [])
    for group in project.get("optional-dependencies", {}).values():
        yield from group
    for group in data.get("dependency-groups", {}).values():
        yield from (r for r in group if isinstance(r, str))
    tool = data.get("tool", {})
    for group in tool.get("pdm", {}).get("dev-dependencies", {}).values():
        yield from group
    poetry = tool.get("poetry", {})
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [g.get("dependencies", {}) for g in poetry.get("group", {}).values()]
    for table in tables:
        for name, constraint in table.items():
            for item in constraint if isinstance(constraint, list) else [constraint]:
                version = item.get("version", "") if isinstance(item, dict) else item
                if isinstance(version, str):
                    yield f"{name}{_poetry_specifiers(version)}"


def _setup_cfg(path: Path) -> Iterator[str]:
    import configparser  # only where a setup.cfg exists

    parser = configparser.ConfigParser()
    parser.read(path, encoding="utf-8")
    values = [parser.get("options", "install_requires", fallback="")]
    if parser.has_section("options.extras_require"):
        values += [value for _, value in parser.items("options.extras_require")]
    for value in values:
        yield from (line.strip() for line in value.splitlines() if line.strip())


def metadata_files(root: Path) -> List[Path]:
    """The files of a project root that the targets are read from (those that exist or not)."""
    files = [root / "pyproject.toml", root / "setup.cfg"]
    return files + sorted(p for pattern in _REQUIREMENT_FILES for p in root.glob(pattern))


def declarations(root: Path) -> List[Declaration]:
    """Every declaration of a library the rules know, in the metadata files of `root`.
    A malformed file is skipped with a MetadataWarning."""
    found: List[Declaration] = []
    for path in metadata_files(root):
        if not is_file(path):
            continue
        try:
            if path.name == "pyproject.toml":
                lines: List[str] = list(_pyproject(path))
            elif path.name == "setup.cfg":
                lines = list(_setup_cfg(path))
            else:
                lines = list(_requirement_lines(path, set()))
            parsed = [_from_requirement(line, path.name) for line in lines]
            found += filter(None, parsed)
        except Exception as error:  # noqa: BLE001 metadata we cannot use is a warning, never a failed run
            warnings.warn(f"flake8-no-apex: ignoring {path}: {type(error).__name__}: {error}", MetadataWarning,
                          stacklevel=2)
    return found


def floors_of(found: Iterable[Declaration]) -> Targets:
    """The floor per library: the lowest release any of the project's declarations admits. A
    package declaring `lightning>=1.6,<2` supports 1.6 even where its requirements.txt pins
    1.9.5 for its own CI: a safe fix must hold on every release from 1.6 on. Declarations with
    an environment marker count too (they admit those releases somewhere); one without a lower
    bound (`torch`, `torch<3`) says nothing about the floor."""
    floors: Floors = {}
    sources = []
    origins = []
    by_library: Dict[str, List[Declaration]] = {}
    for declaration in found:
        by_library.setdefault(declaration.library, []).append(declaration)
    for library, decls in sorted(by_library.items()):
        floor = min((d.floor for d in decls if d.floor is not None), default=None)
        if floor is not None:
            floors[library] = floor
            lowest = [d.source for d in decls if d.floor == floor]
            sources += lowest
            origins.append((library, ", ".join(dict.fromkeys(lowest))))
    return Targets(floors, tuple(dict.fromkeys(sources)), tuple(origins))


# --- finding the project root -----------------------------------------------------------------
_ROOT, _BOUNDARY, _ABOVE = "root", "boundary", "above"


def _kind_of_directory(directory: Path) -> str:
    """_ROOT: it holds project metadata; _BOUNDARY: a VCS root (or unsearchable), above which no
    project of its files lies; _ABOVE: look in its parent. The directory is listed once (a stat
    and two globs per directory were most of a warm run's search)."""
    try:
        names = os.listdir(directory)
    except OSError:  # searchable but not listable: the fixed names are tried, and no glob matches
        names = [*_ROOT_MARKERS, ".git", ".hg"]
    try:
        if any(name in _ROOT_MARKERS and (directory / name).is_file() for name in names) or any(
            fnmatch.filter(names, pattern) for pattern in _REQUIREMENT_FILES[:2]
        ):
            return _ROOT
        if any(name in (".git", ".hg") and (directory / name).exists() for name in names):
            return _BOUNDARY
    except OSError:  # a directory we may not search: no project of ours above it
        return _BOUNDARY
    return _ABOVE if directory.parent != directory else _BOUNDARY


def project_root(start: Path) -> Optional[Path]:
    """The nearest directory upward holding project metadata; the search stops at a VCS root."""
    return Detector()._root(start)


class Detector:
    """The targets of each checked file, read once per project root. Every directory's root
    (or that it has none) is remembered, so a tree costs one upward walk per directory; a long-
    lived front end (the language server) calls `forget` when project metadata changes."""

    def __init__(self) -> None:
        self._roots: Dict[Path, Optional[Path]] = {}
        self._targets: Dict[Path, Targets] = {}
        self._real = RealPaths()

    def __call__(self, filename: str) -> Targets:
        root = self.root_of(filename)
        if root is None:
            return Targets({})
        if root not in self._targets:
            targets = floors_of(declarations(root))
            within = {source: str(root / source) for source in targets.sources}
            self._targets[root] = Targets(targets.floors, tuple(within.values()), tuple(
                (lib, ", ".join(within[s] for s in origin.split(", "))) for lib, origin in targets.origins))
            _log(f"flake8-no-apex: targets for {root}: {self._targets[root].describe()}")
        return self._targets[root]

    def root_of(self, filename: str) -> Optional[Path]:
        """The project root whose metadata gives the file's targets (None: no project). The
        directory is resolved once; a file that is a symbolic link is resolved itself."""
        if os.path.islink(filename):
            return self._root(Path(filename).resolve().parent)
        return self._root(self._real.directory(os.path.dirname(filename)))

    def _root(self, directory: Path) -> Optional[Path]:
        """`project_root`, remembered for every directory on the way up (a tree's directories
        share their parents)."""
        climbed = []
        while directory not in self._roots:
            kind = _kind_of_directory(directory)
            if kind != _ABOVE:
                self._roots[directory] = directory if kind == _ROOT else None
                break
            climbed.append(directory)
            directory = directory.parent
        for below in climbed:
            self._roots[below] = self._roots[directory]
        return self._roots[directory]

    def forget(self) -> None:
        self._roots.clear()
        self._targets.clear()
        self._real = RealPaths()
