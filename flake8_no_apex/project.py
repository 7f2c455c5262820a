"""What the other modules of a run import from a module: names a fix must not take away.

`pkg/utils.py` does `from torch.cuda.amp import autocast` and uses it; `pkg/other.py` does
`from pkg.utils import autocast`. Rewriting the use in utils.py leaves its import unused, and
removing it breaks `import pkg.other`. `ProjectImports` answers "does another module of the run
reach this name through this module?" by reading, lazily, only the modules whose text holds the
name (or a star import), and parsing each of those once.

A module is known by every dotted suffix of its path (`a/pkg/utils.py` is `utils`, `pkg.utils`,
`a.pkg.utils`), since which directory is on `sys.path` is not known here: a match of any suffix
keeps the name (keeping an import is always safe; removing one is not).
"""
from __future__ import annotations

import ast
import re
from functools import cached_property
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from .files import InputError, RealPaths, discover, read

_STAR_IMPORT = re.compile(r"import\s*\*")


def dotted_suffixes(path: Path) -> Set[str]:
    """Every dotted name the module at `path` may be imported by (a package by its directory)."""
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    parts = [p for p in parts if p not in ("/", "")]
    return {".".join(parts[i:]) for i in range(len(parts)) if all(p.isidentifier() for p in parts[i:])}


def _needs_apex(text: str) -> bool:
    """Whether a module imports apex, or looks it up by name (`find_spec("apex")`,
    `import_module("apex.amp")`), as the resolver reads it; one that does not parse may."""
    from .checker import Checker

    checker = Checker()
    try:
        found = checker.check(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return "apex" in checker.imported or any(  # a look-up by name is reported at its string
        isinstance(f.site.node, ast.Constant) and str(f.site.node.value).split(".")[0] == "apex" for f in found)


class ProjectImports:
    """The imports of the Python files of one run, read on demand."""

    def __init__(self, paths: Union[Sequence[Path], Callable[[], Sequence[Path]]], exclude: Sequence[str] = ()):
        self._given = paths  # or how to find them, when the first question is asked (an editor's workspace)
        self.exclude = list(exclude)
        self._texts: Dict[Path, Optional[str]] = {}
        self._originals: Dict[Path, Optional[str]] = {}  # as the run found them, for plans across modules
        self._reads: Dict[Path, Optional[List[Tuple[str, Set[str], bool]]]] = {}
        self.memo: Dict[object, object] = {}  # analyses of modules as the run found them, once per run
        self._real_paths = RealPaths()
        # a module's version floors and selected codes, as the run fixes it (set by the run)
        self.planned_with: Callable[[Path], Tuple[Dict[str, object], Callable[[str], bool]]] = \
            lambda path: ({}, lambda code: True)

    @cached_property
    def paths(self) -> List[Path]:
        given = self._given() if callable(self._given) else self._given
        return [self.real(p) for p in given if str(p).endswith(".py")]

    def real(self, path: Path) -> Path:
        """`Path(path).resolve()`, each directory resolved once (`RealPaths`)."""
        return self._real_paths.file(path)

    def fixed(self, path: Path, text: str) -> None:
        """A module of the run as `fix` left it: what later questions read (`fix` writes it
        after this, so the text on disk is still the one the run found)."""
        self.original(path)
        self._texts[self.real(path)] = text
        self._reads.pop(self.real(path), None)

    def original(self, path: Path) -> Optional[str]:
        """The text of a module of the run as the run found it."""
        path = self.real(path)
        if path not in self._originals:
            self._originals[path] = self._text(path)
        return self._originals[path]

    def module_path(self, importer: Path, module: str) -> Optional[Path]:
        """The module of the run an import of `importer` names (`pkg.engine.trainer`,
        `.trainer`): the one file whose dotted suffixes hold it, else None."""
        relative = self._relative(self.real(importer), module)
        if module.startswith("."):
            return relative if relative in self.paths else None
        found = self._by_dotted_name.get(module, ())
        return found[0] if len(found) == 1 else None

    @cached_property
    def _by_dotted_name(self) -> Dict[str, List[Path]]:
        """The modules of the run under each dotted name they may be imported by, in run order
        (asked for every import of a module the migration reads: a scan of the run each time)."""
        modules: Dict[str, List[Path]] = {}
        for path in self.paths:
            for name in dotted_suffixes(path):
                modules.setdefault(name, []).append(path)
        return modules

    def module_file(self, importer: Path, module: str) -> Optional[Path]:
        """The file on disk an import of `importer` may name, in the run or not: relative to
        it, or below the directory of it or of one of its parents (where `sys.path` may start)."""
        importer = self.real(importer)
        if module.startswith("."):
            return self._relative(importer, module)
        parts = module.split(".")
        for base in importer.parents:
            for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
                if candidate.is_file():
                    return candidate.resolve()
        return None

    def importers(self, path: Path, name: str) -> List[Path]:
        """The modules of the run that import `name` from the module at `path`."""
        me = self.real(path)
        names = dotted_suffixes(me)
        return [other for other in self.paths if other != me and self._imports(other, me, names, name)]

    def apex_user(self, root: Path) -> Optional[Path]:
        """A Python file below the project root `root` that still needs NVIDIA apex installed,
        as this run leaves it (a dependency line that installs apex goes only when there is none)."""
        candidates, _ = discover([str(root)], self.exclude)
        for candidate in candidates:
            text = self._text(self.real(candidate.path))
            if text is not None and "apex" in text and _needs_apex(text):
                return candidate.path
        return None

    def exported(self, path: Path) -> Callable[[str], bool]:
        """For the module at `path`: whether another module of the run imports a name from it."""
        me = self.real(path)
        names = dotted_suffixes(me)
        answers: Dict[str, bool] = {}

        def imported(name: str) -> bool:
            if name not in answers:
                answers[name] = any(self._imports(other, me, names, name) for other in self.paths if other != me)
            return answers[name]

        return imported

    def _text(self, path: Path) -> Optional[str]:
        if path not in self._texts:
            try:
                self._texts[path] = read(path).text
            except InputError:
                self._texts[path] = None
        return self._texts[path]

    def _imports(self, other: Path, me: Path, names: Set[str], name: str) -> bool:
        text = self._text(other)
        if text is None or name not in text and not _STAR_IMPORT.search(text):
            return False  # it cannot name it: not parsed
        for module, imported, attributes in self._read(other) or ():
            if module in names or self._relative(other, module) == me:
                if name in imported or "*" in imported and not name.startswith("_"):
                    return True
                if attributes and re.search(rf"\.\s*{re.escape(name)}\b", text):
                    return True  # `import pkg.utils` ... `pkg.utils.autocast`
        return False

    def _read(self, path: Path) -> Optional[List[Tuple[str, Set[str], bool]]]:
        """(module, names taken from it, whether it is bound as a module) of each import."""
        if path not in self._reads:
            text = self._text(path)
            try:
                tree = ast.parse(text or "")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._reads[path] = None
                return None
            found: List[Tuple[str, Set[str], bool]] = []
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found += [(alias.name, set(), True) for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    module = "." * (node.level or 0) + (node.module or "")
                    found.append((module, {alias.name for alias in node.names}, False))
                    # `from pkg import utils`: the module utils, whose attributes it may read
                    prefix = module if module.endswith(".") else module + "."
                    found += [(prefix + alias.name, set(), True) for alias in node.names if alias.name != "*"]
            self._reads[path] = found
        return self._reads[path]

    @staticmethod
    def _relative(importer: Path, module: str) -> Optional[Path]:
        """The file a relative import (`.utils`, `..pkg.utils`) of `importer` means, if it is one."""
        level = len(module) - len(module.lstrip("."))
        if not level:
            return None
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        target = base.joinpath(*[p for p in module[level:].split(".") if p])
        for candidate in (target.with_suffix(".py"), target / "__init__.py"):
            if candidate.exists():
                return candidate.resolve()
        return None
