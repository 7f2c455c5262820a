"""The kinds of input the engine reads, one module each behind one interface (`Kind`).

A kind says which files it claims (by name, cheaply: a walk asks it of every file), whether a
walk of a directory picks them up, how to analyse and fix one, and how a `# noqa` is written in
it. The engine asks the first kind in `KINDS` that claims a file; a new kind is one line here.
The modules import what they need only when a file of theirs is read.
"""
from __future__ import annotations

from importlib import import_module
from pathlib import PurePath

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Iterable, List, NamedTuple, Optional, Tuple
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult
    from ..report import Reported
else:
    from ..records import NamedTuple

# The order is the precedence: the first kind that claims a file reads it; Python claims the rest.
KINDS = ("notebook", "json_config", "shell", "yaml_config", "dependency_file", "markdown", "python_module")


class CellLine(NamedTuple):
    """A line of a notebook: its cell (counted from 1 over all cells, as ruff and Jupyter count)
    and the line within the cell; printed as ruff prints it, `cell 3:2`."""

    cell: int
    line: int

    def __str__(self) -> str:
        return f"cell {self.cell}:{self.line}"


class Kind:
    """What one input kind does. `name` is what `Document.kind` holds for it."""

    name = ""
    comment: Optional[str] = "#"  # what starts a comment a `# noqa` can go in; None: baseline only
    fixed_after_modules = False  # fix it once the run's Python modules are fixed (what they import decides)

    def claims(self, name: str, folder: str) -> bool:
        """Whether a file of this name (and place: its directory, with `/` between the parts) is
        of this kind. Strings, not paths: a walk asks every kind of every file."""
        raise NotImplementedError

    def walked(self, name: str, docs: bool) -> bool:
        """Whether a directory walk picks the file up (a file named on the command line is read
        whatever this says); `docs`: the user asked for the code in documentation too."""
        return True

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        raise NotImplementedError

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        raise NotImplementedError

    def add_noqa(self, text: str, found: Iterable["Reported"]) -> Tuple[str, int]:
        """The text with a `# noqa: CODE` where each finding is, and how many lines gained one."""
        from ..noqa import add_noqa

        return add_noqa(text, [(item.line, item.code) for item in found])


_LOADED: List[Kind] = []


def kinds() -> List[Kind]:
    if not _LOADED:
        _LOADED.extend(import_module(f"{__name__}.{name}").KIND for name in KINDS)
    return _LOADED


def kind_of(path: PurePath) -> Kind:
    """The kind that reads a file: the first that claims it (Python claims every name, as flake8
    reads any file it is given as a module: standard input, a script without a suffix)."""
    return kind_named(path.name, path.parent.as_posix())


def kind_named(name: str, folder: str) -> Kind:
    """`kind_of` a file `name` in the directory `folder` (its parts joined by `/`)."""
    for kind in kinds():
        if kind.claims(name, folder):
            return kind
    raise AssertionError("the Python kind claims every file")


def by_name(name: str) -> Kind:
    return next(kind for kind in kinds() if kind.name == name)


def walked(name: str, folder: str, docs: bool = False) -> bool:
    """Whether a directory walk checks the file `name` in `folder` (its parts joined by `/`)."""
    return kind_named(name, folder).walked(name, docs)
