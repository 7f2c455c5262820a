"""One pipeline for every front end: the flake8 plugin, `check`, `fix` and the language server.

A `Session` holds one configuration and what it may keep between documents (the version
targets per directory, the rule index, the pre-filter). `analyse(document)` returns the
findings of a document of any input kind (`inputs`: a Python module, a notebook, a YAML config,
a shell script...); the plans that would fix them are built only when a front end asks
(`Analysis.plans`). `fix(document)` applies them.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

from .config import Settings
from .edits import Source
from .files import Decoded, MalformedFile, compiled_by_python
from .inputs import by_name, kind_of
from .prefilter import Prefilter, default as default_prefilter
from .targets import Detector, Targets, parse_option

if TYPE_CHECKING:  # the rule table, the checker and the fixer are imported once a file has a rule's word
    from .checker import RuleIndex
    from .fixer import FixResult, Round
    from .inputs import Kind
    from .inputs.notebook import Virtual as Placement
    from .project import ProjectImports
    from .table import Finding, Floors, Plan
    from dataclasses import dataclass, field, replace
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import dataclass, field, replace

PYTHON = "python"  # the kind name of a Python module (the plugin's, and an editor's python buffer)


class AnalysisError(Exception):
    """A document that cannot be analysed (it does not parse, or nests too deeply): one line,
    with the position (`line`, `column`, and a notebook's `cell`) of a syntax error in Python."""

    def __init__(self, message: str, line: Optional[int] = None, column: Optional[int] = None,
                 cell: Optional[int] = None):
        super().__init__(message, line, column)
        self.line, self.column, self.cell = line, column, cell

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Document:
    path: Path  # for its kind, per-file ignores, version targets and output
    text: str
    named: bool = False  # named by the user (or open in an editor): parsed even without a rule's word
    tree: Optional[ast.Module] = None  # a parse the front end already has (flake8's)
    kind: Optional[str] = None  # an input kind's name (PYTHON...); None: by the file's name (`inputs.kind_of`)
    on_disk: Optional[Decoded] = None  # the file as read (not a buffer): Python's bytecode cache may vouch for it
    rule_words: Optional[bool] = None  # the pre-filter's verdict on `text`, where a front end already asked it

    @property
    def input_kind(self) -> "Kind":
        """What the document is analysed as: its given kind, else its name's."""
        return by_name(self.kind) if self.kind else kind_of(self.path)


@dataclass
class Analysis:
    document: Document
    source: Source
    findings: List[Finding]
    floors: Floors
    planner: Optional[Callable[[], List[Optional[Plan]]]] = field(default=None, repr=False)
    hidden: List[Finding] = field(default_factory=list)  # what the version targets keep from `findings`
    # for a kind whose `source` is not the file's text (a notebook's cells make one module): where a
    # (line, column) of `source` is in the file, `position(line, column) -> (cell, line, column)`,
    # and a line of it as the file has it, `line_text(line, text)`
    placement: Optional["Placement"] = field(default=None, repr=False)
    # what could not be read while the rest was (a notebook's cell that does not parse), each
    # "place: why": the file's errors, beside its findings
    problems: List[str] = field(default_factory=list)
    # plans enough to tell which findings are fixable and how (Python: without the removal of the
    # imports a plan leaves unused, which costs an analysis of its result); None: the planner's
    marker: Optional[Callable[[], List[Optional[Plan]]]] = field(default=None, repr=False)

    @cached_property
    def plans(self) -> List[Optional[Plan]]:
        """The plan that would fix each finding (None: a person must), built on first use."""
        return self.planner() if self.planner is not None else [None] * len(self.findings)

    @property
    def fixable(self) -> List[Optional[Plan]]:
        """For each finding, a plan where `plans` has one, of its grade, whose edits may be fewer."""
        return self.marker() if self.marker is not None and "plans" not in self.__dict__ else self.plans

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
        self._index = index
        self.prefilter = prefilter or default_prefilter()
        self.detect = Detector()
        self.project: Optional[ProjectImports] = None  # the other modules of the run, for `fix`

    @property
    def index(self) -> RuleIndex:
        """The rule table's index, built when a document first needs it: a run whose files hold
        no rule's word (the pre-filter reads its words without the table) imports none of it."""
        if self._index is None:
            from .checker import default_index

            self._index = default_index()
        return self._index

    def targets(self, path: Path) -> Targets:
        """The file's version targets: those its project declares, with the libraries the
        explicit targets name replaced by them."""
        detected = self.detect(str(path))
        return detected.overridden_by(self.explicit) if self.explicit is not None else detected

    def forget(self) -> None:
        """Read project metadata afresh (a long-lived front end calls this when it changed)."""
        self.detect.forget()

    def selected(self, path: Path) -> Callable[[str], bool]:
        return self.settings.selector(path) if self.settings is not None else _every_code

    # --- analysis --------------------------------------------------------------------------
    def analyse(self, document: Document) -> Analysis:
        """The document's findings; raises AnalysisError when it cannot be read as its kind."""
        return document.input_kind.analyse(self, document)

    def filtered(self, path: Path, source: Source, found: List[Finding],
                 noqa: Optional[Callable[[int, str], bool]] = None) -> List[Finding]:
        """The findings the settings select and no `# noqa` suppresses (all of them for the plugin,
        where flake8 does both); `noqa`: the kind's own reading of it, else flake8's."""
        if self.settings is None:
            return found
        selected = self.selected(path)
        if not self.honours_noqa:
            return [f for f in found if selected(f.code)]
        if noqa is None:
            from .fixer import noqa_lines

            noqa = noqa_lines(source)
        return [f for f in found if selected(f.code) and not noqa(f.line, f.code)]

    @property
    def honours_noqa(self) -> bool:
        """Whether this front end reads `# noqa` (the plugin leaves it to flake8; --disable-noqa)."""
        return self.settings is not None and not self.settings.disable_noqa

    # --- fixing ----------------------------------------------------------------------------
    def fix(self, document: Document, unsafe: bool = False) -> FixResult:
        """The document with every fix its grade allows applied; raises AnalysisError, or
        FixError when the fixed text would not compile. Names that other modules of the run
        (`project`) import from it keep their imports."""
        return document.input_kind.fix(self, document, unsafe)

    def fix_lines(self, document: Document, unsafe: bool) -> FixResult:
        """A file whose fixes are whole lines dropped (YAML, dependency files): one round, as they
        never overlap."""
        from .fixer import FixResult
        from .table import Grade

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
def analysing() -> Iterator[None]:
    """What parsing a document can raise, as one AnalysisError."""
    try:
        yield
    except SyntaxError as error:
        raise AnalysisError(f"cannot parse: {error.msg}", error.lineno or 1, error.offset or 1) from None
    except MalformedFile as error:
        raise AnalysisError(str(error)) from None
    except (RecursionError, MemoryError):
        raise AnalysisError("cannot analyse: nested too deeply for Python's recursion limit") from None


def planned(now: Round, path: Path, cleanup: bool = True) -> List[Optional[Plan]]:
    with analysing():  # plans are built later than the findings, and can meet the same limits
        return now.plans(path, cleanup)


def syntax_check(document: Document, scopes: bool = False) -> None:
    """Raise AnalysisError if the document is no Python module: as flake8 parses it (`check`), or
    with its scopes analysed too (`fix`, which compiles what it writes: the parser's errors plus
    the misplaced `global` and `nonlocal` the symbol table finds, in two thirds of the time of
    building the tree; the code generator's own, such as `return` outside a function, are not
    looked for in a file fix leaves as it is). Only files named on the command line come here
    (a file found in a directory without a rule's word is neither checked nor fixed), and
    nothing is parsed when Python's bytecode cache holds a compilation of the file as read:
    CPython compiled it, so it parses."""
    if document.on_disk is not None and compiled_by_python(document.path, document.on_disk):
        return
    with analysing():
        if scopes:
            import symtable  # (only `fix` of a named file without a rule's word reads scopes)

            symtable.symtable(document.text, str(document.path), "exec")
        else:
            compile(document.text, str(document.path), "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
