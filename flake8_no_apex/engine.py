"""One pipeline for every front end: the flake8 plugin, `check`, `fix` and the language server.

A `Session` holds one configuration and what it may keep between documents (the version
targets per directory, the rule index, the pre-filter). `analyse(document)` returns the
findings of a Python module, a YAML config or a dependency file; the plans that would fix them
are built only when a front end asks (`Analysis.plans`). `fix(document)` applies them.
"""
from __future__ import annotations

import ast
import symtable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterator, List, Optional

from .checker import RuleIndex, default_index
from .config import Settings
from .edits import Source
from .files import YAML_SUFFIXES, Decoded, MalformedFile, compiled_by_python, is_dependency_file
from .fixer import FixResult, Round, fix_text, ignores_file, never_exported, noqa_lines
from .prefilter import Prefilter, default as default_prefilter
from .project import ProjectImports
from .table import Finding, Floors, Grade, Plan
from .targets import Detector, Targets, parse_option

PYTHON, YAML, DEPENDENCIES = "python", "yaml", "dependencies"


def kind_of(name: str) -> str:
    """What a file is to the engine, by its name: any name but a YAML or dependency file's is a
    Python module, as for flake8 (standard input, a script without a suffix)."""
    if name.endswith(YAML_SUFFIXES):
        return YAML
    return DEPENDENCIES if is_dependency_file(name) and name != "setup.py" else PYTHON


class AnalysisError(Exception):
    """A document that cannot be analysed (it does not parse, or nests too deeply): one line,
    with the position (`line`, `column`) of a syntax error in Python."""

    def __init__(self, message: str, line: Optional[int] = None, column: Optional[int] = None):
        super().__init__(message, line, column)
        self.line, self.column = line, column

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Document:
    path: Path  # for its kind, per-file ignores, version targets and output
    text: str
    named: bool = False  # named by the user (or open in an editor): parsed even without a rule's word
    tree: Optional[ast.Module] = None  # a parse the front end already has (flake8's)
    kind: Optional[str] = None  # PYTHON, YAML or DEPENDENCIES; None: by the file name (`kind_of`)
    on_disk: Optional[Decoded] = None  # the file as read (not a buffer): Python's bytecode cache may vouch for it

    @property
    def read_as(self) -> str:
        """What the document is analysed as: its given kind, else its name's."""
        return self.kind or kind_of(self.path.name)


@dataclass
class Analysis:
    document: Document
    source: Source
    findings: List[Finding]
    floors: Floors
    planner: Optional[Callable[[], List[Optional[Plan]]]] = field(default=None, repr=False)
    hidden: List[Finding] = field(default_factory=list)  # what the version targets keep from `findings`

    @cached_property
    def plans(self) -> List[Optional[Plan]]:
        """The plan that would fix each finding (None: a person must), built on first use."""
        return self.planner() if self.planner is not None else [None] * len(self.findings)

    def level(self, finding: Finding) -> str:
        """How serious a finding is at the project's targets (removed: error; deprecated:
        warning; maintained: note), for SARIF, GitLab, GitHub and the editor."""
        timeline = finding.rule.timeline
        return timeline.level(self.floors.get(timeline.library))


class Session:
    """One configuration's analysis. With `settings` (check, fix, the server) findings are
    selected and `# noqa` honoured as flake8 would; without (the flake8 plugin) every finding
    is returned and flake8 does both. `targets` (the plugin's option) overrides the settings'."""

    def __init__(self, settings: Optional[Settings] = None, targets: Optional[Targets] = None,
                 index: Optional[RuleIndex] = None, prefilter: Optional[Prefilter] = None):
        self.settings = settings
        self.explicit = targets or (parse_option(settings.targets, settings.targets_source)
                                    if settings is not None else None)
        self.index = index or default_index()
        self.prefilter = prefilter or default_prefilter()
        self.detect = Detector()
        self.project: Optional[ProjectImports] = None  # the other modules of the run, for `fix`

    def targets(self, path: Path) -> Targets:
        """The file's version targets: those its project declares, with the libraries the
        explicit targets name replaced by them."""
        detected = self.detect(str(path))
        return detected.overridden_by(self.explicit) if self.explicit is not None else detected

    def forget(self) -> None:
        """Read project metadata afresh (a long-lived front end calls this when it changed)."""
        self.detect.forget()

    def _selected(self, path: Path) -> Callable[[str], bool]:
        return self.settings.selector(path) if self.settings is not None else _every_code

    # --- analysis --------------------------------------------------------------------------
    def analyse(self, document: Document) -> Analysis:
        """The document's findings; raises AnalysisError when it cannot be read as its kind."""
        kind = document.read_as
        if kind == PYTHON:
            return self._python(document)
        from .dependency_files import check_dependencies, drop_line  # YAML and packaging: only for these files

        floors = self.targets(document.path).floors
        source = Source(document.text)
        with _analysing():
            if kind == YAML:
                found = self._yaml(document, floors)
            else:
                found = check_dependencies(document.path.name, document.text, floors)
        found = self._filtered(document.path, source, found)
        syntax = "toml" if document.path.name == "pyproject.toml" else "yaml" if kind == YAML else "lines"
        return Analysis(document, source, found, floors,
                        lambda: [drop_line(source, finding, syntax) for finding in found])

    def _python(self, document: Document) -> Analysis:
        source_text = document.text
        if self.settings is not None and ignores_file(source_text):  # `# flake8: noqa`, as flake8 skips it
            return Analysis(document, Source(source_text), [], {})
        if not self.prefilter.may_match(source_text):  # no word of any rule: nothing to find
            if document.named and document.tree is None:
                _syntax_check(document)
            return Analysis(document, Source(source_text), [], {})
        floors = self.targets(document.path).floors
        with _analysing():
            now = Round.of(source_text, floors, self._selected(document.path), self.index,
                           honour_noqa=self.settings is not None, tree=document.tree)
        found = now.findings
        if document.path.name == "setup.py":  # its requirements too (without a fix: Python is fixed as Python)
            from .dependency_files import check_dependencies

            found = found + self._filtered(document.path, now.source,
                                           check_dependencies("setup.py", source_text, floors))
        return Analysis(document, now.source, found, floors,
                        lambda: _planned(now, document.path) + [None] * (len(found) - len(now.findings)), now.hidden)

    def _yaml(self, document: Document, floors: Floors) -> List[Finding]:
        from .dependency_files import check_conda, is_conda_environment
        from .yaml_configs import check_yaml, is_trainer_group, looks_like_lightning_config

        group = is_trainer_group(document.path)
        found = []
        if group or looks_like_lightning_config(document.text):
            found = check_yaml(document.text, floors, self.index, group)
        if is_conda_environment(document.path.name, document.text):
            found += check_conda(document.text, floors)
        return found

    def _filtered(self, path: Path, source: Source, found: List[Finding]) -> List[Finding]:
        if self.settings is None:
            return found
        selected, noqa = self._selected(path), noqa_lines(source)
        return [f for f in found if selected(f.code) and not noqa(f.line, f.code)]

    # --- fixing ----------------------------------------------------------------------------
    def fix(self, document: Document, unsafe: bool = False) -> FixResult:
        """The document with every fix its grade allows applied; raises AnalysisError, or
        FixError when the fixed text would not compile. Names that other modules of the run
        (`project`) import from it keep their imports."""
        if document.read_as == PYTHON:
            if self.settings is not None and ignores_file(document.text):  # flake8 would not check it
                return FixResult(document.text)
            if not self.prefilter.may_match(document.text):
                _syntax_check(document, scopes=True)  # a file fix cannot read is said, even with nothing to fix
                return FixResult(document.text)
            exported = self.project.exported(document.path) if self.project is not None else never_exported
            if self.project is not None:  # another module's plan, when a plan spans modules, as fix would make it
                self.project.planned_with = lambda path: (self.targets(path).floors, self._selected(path))
            with _analysing():
                result = fix_text(document.text, self.targets(document.path).floors, self._selected(document.path),
                                  unsafe, self.index, exported, document.path, self.project)
            if self.project is not None:
                self.project.fixed(document.path, result.text)
            return result
        return self._fix_once(document, unsafe)

    def _fix_once(self, document: Document, unsafe: bool) -> FixResult:
        """YAML and dependency files: one round of line drops (they never overlap)."""
        analysis = self.analyse(document)
        grades = {Grade.SAFE, Grade.UNSAFE} if unsafe else {Grade.SAFE}
        result = FixResult(document.text)
        edits = []
        dropping_apex = unsafe and any(f.code == "APX109" for f in analysis.findings)  # APX109's drop is unsafe
        apex_user = self._apex_user(document.path) if dropping_apex else None
        for finding, plan in zip(analysis.findings, analysis.plans):
            if plan is not None and finding.code == "APX109" and apex_user is not None:
                why = f"the apex requirement stays: {_shown(apex_user)} still imports apex"
                result.notes.append((finding.line, why))
                plan = None
            if plan is not None and plan.grade in grades:
                edits += plan.edits
                result.fixed.append(finding)
            else:
                result.remaining.append(finding)
                result.unsafe += plan is not None and plan.grade is Grade.UNSAFE
        if edits:
            result.rounds.append(sorted(set(edits)))
            result.text = analysis.source.apply(result.rounds[0])
            fixed = replace(document, text=result.text, on_disk=None)
            result.remaining = self.analyse(fixed).findings  # where they are now
        return result

    def _apex_user(self, path: Path) -> Optional[Path]:
        """A module of the dependency file's project that still needs apex after this run (the
        run's own modules as fixed: `fix` does dependency files last)."""
        if self.project is None:
            return None
        root = self.detect.root_of(str(path)) or path.resolve().parent
        return self.project.apex_user(root)


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory where it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _every_code(code: str) -> bool:
    return True


@contextmanager
def _analysing() -> Iterator[None]:
    """What parsing a document can raise, as one AnalysisError."""
    try:
        yield
    except SyntaxError as error:
        raise AnalysisError(f"cannot parse: {error.msg}", error.lineno or 1, error.offset or 1) from None
    except MalformedFile as error:
        raise AnalysisError(str(error)) from None
    except (RecursionError, MemoryError):
        raise AnalysisError("cannot analyse: nested too deeply for Python's recursion limit") from None


def _planned(now: Round, path: Path) -> List[Optional[Plan]]:
    with _analysing():  # plans are built later than the findings, and can meet the same limits
        return now.plans(path)


def _syntax_check(document: Document, scopes: bool = False) -> None:
    """Raise AnalysisError if the document is no Python module: as flake8 parses it (`check`), or
    with its scopes analysed too (`fix`, which compiles what it writes: the parser's errors plus
    the misplaced `global` and `nonlocal` the symbol table finds, in two thirds of the time of
    building the tree; the code generator's own, such as `return` outside a function, are not
    looked for in a file fix leaves as it is). Nothing is parsed when Python's bytecode cache
    holds a compilation of the file as read: CPython compiled it, so it parses (and a tree of
    compiled modules, one whose code has run, costs `fix` a header read per file it skips)."""
    if document.on_disk is not None and compiled_by_python(document.path, document.on_disk):
        return
    with _analysing():
        if scopes:
            symtable.symtable(document.text, str(document.path), "exec")
        else:
            compile(document.text, str(document.path), "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
