"""The language server (`flake8-no-apex server`, over stdio): diagnostics for every open document
of a kind `check` reads (a Python module, a notebook's cells, a shell script, a YAML or JSON
config, a dependency file) as it is edited, each fix offered as a quick fix (safe ones
preferred, unsafe ones labelled), and `source.fixAll` applying the safe fixes, which a flake8
plugin cannot give an editor. A notebook is synchronised as LSP 3.17 notebook documents: its
cells are analysed together, each cell's diagnostics published on the cell. Needs pygls:
`pip install 'flake8-no-apex[server]'`."""
from __future__ import annotations

import ast
import asyncio
import os
import re
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from . import __version__
from .collector import collect_less, paused
from .config import ConfigError, Settings, load
from .edits import Source
from .engine import PYTHON, Analysis, AnalysisError, Document, Session
from .inputs import kind_of
from .files import discover
from .fixer import FixError
from .project import ProjectImports
from .reparse import reparsed
from .report import DOCS, rule_url
from .table import Finding, Grade, Plan, TextEdit
from .targets import TargetError

SOURCE = "flake8-no-apex"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
# Files whose change can change the findings of every open document: settings and the
# project metadata the version targets come from.
_PROJECT_FILES = ("setup.cfg", "tox.ini", ".flake8", "pyproject.toml", "setup.py")
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "note": types.DiagnosticSeverity.Information}
DEBOUNCE = 0.05  # seconds a change waits for the next one: a burst of keystrokes is analysed once
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Positions:
    """The client's positions of a text's character offsets, from the engine's line table: the
    one line concerned is converted to the negotiated units (UTF-16 by default), never the whole
    document (pygls' `client_position_at_offset` splits it anew on every call)."""

    def __init__(self, source: Source, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.source = source
        self.encoding = encoding

    def at(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.source.text)))
        line, column = self.source.position(offset)
        head = self.source.line(line)[:column - 1]
        return types.Position(line - 1, self.units(head))

    def units(self, text: str) -> int:
        if text.isascii() or self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        codec = "utf-8" if self.encoding == types.PositionEncodingKind.Utf8 else "utf-16-le"
        size = len(text.encode(codec, "surrogatepass"))
        return size if codec == "utf-8" else size // 2

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.at(start), self.at(end))


def positions_of(document: TextDocument, source: Source) -> Positions:
    codec = getattr(document, "position_codec", None)
    return Positions(source, getattr(codec, "encoding", None) or types.PositionEncodingKind.Utf16)


class NoApexServer(LanguageServer):
    """Holds one Session for the workspace; rebuilt when its settings or metadata change."""

    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=types.NotebookDocumentSyncOptions(notebook_selector=[
                             types.NotebookDocumentFilterWithCells(
                                 notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])]))
        self.root = Path.cwd()
        self.session = Session(Settings())
        self.analyses: Dict[str, Analysis] = {}  # uri -> the analysis of the version last published
        # uri -> a Python module's text as last analysed and its tree, which the next change's
        # is made from (in place: only the newest analysis may read it)
        self.trees: Dict[str, Tuple[Source, ast.Module]] = {}
        self.published: Dict[str, List[types.Diagnostic]] = {}  # uri -> its diagnostics, one per finding
        self.links: Dict[str, str] = {}  # a rule's URL -> the link the editor opens
        self.notebooks: Dict[str, "NotebookView"] = {}  # notebook uri -> its cells as last analysed
        self.cell_notebook: Dict[str, str] = {}  # a cell's uri -> its notebook's

    def configure(self, root: Path) -> None:
        """Settings from the workspace's config files, read as `check` run in its root reads them
        (flake8 resolves per-file-ignores and excludes against the working directory: the server
        works in the workspace root)."""
        self.root = root
        self.links = {}
        try:
            os.chdir(root)
            settings = load(root)
            settings.validate()
            self.session = Session(settings)
            for warning in settings.warnings:  # a misspelt key, as `check` warns of it
                self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"{SOURCE}: {warning}"))
        except (ConfigError, TargetError, OSError) as error:
            self.session = Session(Settings())
            self.window_show_message(types.ShowMessageParams(
                types.MessageType.Warning, f"{SOURCE}: {error}; using the default settings"))

    def workspace_modules(self) -> ProjectImports:
        """The workspace's Python modules, found only if a fix would remove an import."""
        settings = self.session.settings or Settings()
        exclude = [*settings.exclude, *settings.extend_exclude]
        return ProjectImports(lambda: [c.path for c in discover([str(self.root)], exclude)[0]], exclude)

    def wanted(self, document: TextDocument) -> bool:
        path = Path(to_fs_path(document.uri) or document.uri)
        return kind_of(path).name != PYTHON or path.name.endswith(".py") or document.language_id == "python"

    def analyse(self, document: TextDocument) -> Optional[Analysis]:
        """The analysis of the document as it is now; None when it cannot be read (a syntax
        error while typing: the editor's own Python support says so)."""
        path = Path(to_fs_path(document.uri) or document.uri)
        kind = PYTHON if document.language_id == "python" else None
        # a lone surrogate (half of a pair being typed) cannot be encoded: read as U+FFFD, one
        # code point and one UTF-16 unit as it is, so every position stays where it was
        text = document.source
        if _has_lone_surrogate(text):
            text = _LONE_SURROGATE.sub("\ufffd", text)
        tree = self.tree_of(document.uri, text) if (kind or kind_of(path).name) == PYTHON else None
        try:
            analysis = self.session.analyse(Document(path, text, named=True, kind=kind, tree=tree))
        except AnalysisError:
            return None
        if tree is not None:  # the next change's tree is made from this one, against this text's lines
            self.trees[document.uri] = (analysis.source, tree)
        return analysis

    def tree_of(self, uri: str, text: str) -> Optional[ast.Module]:
        """The module's tree: made from the last one by parsing again only the statements a
        change is in (reparse.py, as `fix` does for the text it wrote; a keystroke mostly), else
        parsed whole; None where the text does not parse (the analysis says why). The last
        tree is taken: changed in place, it is only this text's."""
        last = self.trees.pop(uri, None)
        if last is not None:
            before, old = last
            edit = _change(before.text, text)
            tree = old if edit is None else reparsed(old, before, [edit], Source(text))
            if tree is not None:
                return tree
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def publish(self, document: TextDocument) -> None:
        if document.uri in self.cell_notebook:  # a notebook's cell: its notebook is analysed
            self.publish_notebook(self.cell_notebook[document.uri])
            return
        with paused():  # a tree alive is not traversed while it is analysed
            analysis = self.analyse(document) if self.wanted(document) else None
        if analysis is None:
            self.analyses.pop(document.uri, None)
            self.published.pop(document.uri, None)
            diagnostics: List[types.Diagnostic] = []
        else:
            positions = positions_of(document, analysis.source)
            diagnostics = [self.diagnostic(analysis, finding, _range(positions, analysis, finding))
                           for finding in analysis.findings]
            self.analyses[document.uri], self.published[document.uri] = analysis, diagnostics
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=document.uri, diagnostics=diagnostics, version=document.version))

    def publish_soon(self, uri: str, version: Optional[int]) -> None:
        """Publish after DEBOUNCE unless a newer change came meanwhile: only the newest version
        of a burst of edits is analysed."""
        def publish_if_newest() -> None:
            document = self.workspace.text_documents.get(uri)
            if document is not None and document.version == version:
                self.publish(document)

        try:
            asyncio.get_running_loop().call_later(DEBOUNCE, publish_if_newest)
        except RuntimeError:  # no event loop (a direct call): now
            publish_if_newest()

    def diagnostic(self, analysis: Analysis, finding: Finding, where: types.Range) -> types.Diagnostic:
        level = analysis.level(finding)
        return types.Diagnostic(
            range=where, message=finding.description, severity=_SEVERITY[level], code=finding.code, source=SOURCE,
            code_description=types.CodeDescription(href=self.link(finding.code)),
            tags=[types.DiagnosticTag.Deprecated] if level != "note" else None,
        )

    def link(self, code: str) -> str:
        docs = (self.session.settings.docs_url if self.session.settings else None) or DOCS
        url = rule_url(code, docs)
        if url not in self.links:
            self.links[url] = _absolute(url, self.root)
        return self.links[url]

    # --- notebooks -------------------------------------------------------------------------
    def publish_notebook(self, uri: str) -> None:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        view = NotebookView(self, uri, notebook)
        self.notebooks[uri] = view
        for cell in view.cells:
            self.cell_notebook[cell] = uri
        for cell, diagnostics in view.diagnostics().items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell, diagnostics=diagnostics))

    def forget_notebook(self, uri: str) -> None:
        view = self.notebooks.pop(uri, None)
        for cell in view.cells if view is not None else ():
            self.cell_notebook.pop(cell, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell, diagnostics=[]))


class NotebookView:
    """A notebook document's cells as the notebook kind reads a file: the JSON of an nbformat
    notebook made of the cells' texts, analysed once; findings and fixes mapped back to cells."""

    def __init__(self, server: NoApexServer, uri: str, notebook) -> None:
        import json

        self.server = server
        self.cells: List[str] = [cell.document for cell in notebook.cells]  # cell N is cells[N - 1]
        self.texts = [server.workspace.get_text_document(cell).source for cell in self.cells]
        self._positions: Dict[int, Positions] = {}
        kinds = ["code" if cell.kind == types.NotebookCellKind.Code else "markdown" for cell in notebook.cells]
        self.json = json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": text, "outputs": []}
                                          for kind, text in zip(kinds, self.texts)],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        path = Path(to_fs_path(uri) or uri)
        self.document = Document(path if path.suffix == ".ipynb" else path.with_suffix(".ipynb"), self.json,
                                 named=True, kind="notebook")
        try:
            self.analysis: Optional[Analysis] = server.session.analyse(self.document)
        except AnalysisError:
            self.analysis = None

    def place(self, offset: int) -> Tuple[int, types.Position]:
        """(cell index, the client's position in it) of an offset of the module the cells make."""
        analysis = self.analysis
        line, column = analysis.source.position(offset)
        cell, within, column = analysis.placement.position(line, column)
        positions = self.positions(cell - 1)
        at = positions.source.line_start(within) + column - 1
        return cell - 1, positions.at(at)

    def positions(self, index: int) -> Positions:
        """A cell's positions (made once: a notebook's findings ask each cell many times)."""
        if index not in self._positions:
            document = self.server.workspace.get_text_document(self.cells[index])
            self._positions[index] = positions_of(document, Source(self.texts[index]))
        return self._positions[index]

    def diagnostics(self) -> Dict[str, List[types.Diagnostic]]:
        found: Dict[str, List[types.Diagnostic]] = {cell: [] for cell in self.cells}
        for finding in self.analysis.findings if self.analysis is not None else ():
            cell, diagnostic = self.diagnostic(finding)
            found[self.cells[cell]].append(diagnostic)
        return found

    def diagnostic(self, finding: Finding) -> Tuple[int, types.Diagnostic]:
        start, end = self.analysis.source.finding_span(finding)
        cell, first = self.place(start)
        end_cell, last = self.place(max(start, end))
        if end_cell != cell or end <= start:  # a position: to the end of its line
            positions = self.positions(cell)
            last = positions.at(positions.source.line_start(first.line + 1)
                                + len(positions.source.line(first.line + 1).rstrip("\r\n")))
        return cell, self.server.diagnostic(self.analysis, finding, types.Range(first, last))

    def quick_fixes(self, cell_uri: str, asked: types.Range) -> List[types.CodeAction]:
        actions = []
        for finding, plan in zip(self.analysis.findings, self.analysis.plans):
            cell, diagnostic = self.diagnostic(finding)
            if plan is None or self.cells[cell] != cell_uri or not _overlaps(diagnostic.range, asked):
                continue
            changes: Dict[str, List[types.TextEdit]] = {}
            for edit in plan.edits:
                (first, start), (last, end) = self.place(edit.start), self.place(edit.end)
                if first != last or "flake8-no-apex cell" in edit.text or "pass  #" in edit.text:
                    break  # an edit across cells, or over a masked IPython line: `fix` says why
                changes.setdefault(self.cells[first], []).append(types.TextEdit(types.Range(start, end), edit.text))
            else:
                unsafe = plan.grade is not Grade.SAFE
                title = f"{SOURCE}: fix {finding.code}" + (" (unsafe: review the change)" if unsafe else "")
                actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                                diagnostics=[diagnostic], is_preferred=not unsafe,
                                                edit=types.WorkspaceEdit(changes=changes)))
        return actions

    def fix_all(self) -> List[types.CodeAction]:
        """The safe fixes of the whole notebook, as `fix` writes them: each changed cell replaced."""
        import json

        try:
            result = self.server.session.fix(self.document)
        except (AnalysisError, FixError):
            return []
        fixed = [cell["source"] for cell in json.loads(result.text)["cells"]]
        changes = {}
        for uri, old, new in zip(self.cells, self.texts, fixed):
            new = "".join(new) if isinstance(new, list) else new
            if new != old:
                document = self.server.workspace.get_text_document(uri)
                whole = types.Range(types.Position(0, 0), positions_of(document, Source(old)).at(len(old)))
                changes[uri] = [types.TextEdit(whole, new)]
        if not changes:
            return []
        return [types.CodeAction(title=f"{SOURCE}: fix all safely fixable findings", kind=FIX_ALL,
                                 edit=types.WorkspaceEdit(changes=changes))]


def _absolute(url: str, root: Path) -> str:
    """An editor opens a link it can resolve: a relative docs path becomes a file URI."""
    if "://" in url:
        return url
    path, _, anchor = url.partition("#")
    return (root / path).resolve().as_uri() + (f"#{anchor}" if anchor else "")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _range(positions: Positions, analysis: Analysis, finding: Finding) -> types.Range:
    start, end = analysis.source.finding_span(finding)
    end = max(start, end)
    if end == start:  # a position: the rest of its line, so the editor has something to underline
        line = analysis.source.position(start)[0]
        end = analysis.source.line_start(line) + len(analysis.source.line(line).rstrip("\r\n"))
    return positions.range(start, end)


def _edits(positions: Positions, plan: Plan) -> List[types.TextEdit]:
    return [types.TextEdit(positions.range(edit.start, edit.end), edit.text) for edit in plan.edits]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position) -> tuple:
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build() -> NoApexServer:
    server = NoApexServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: NoApexServer, params: types.InitializeParams) -> None:
        folders = params.workspace_folders or []
        uri = folders[0].uri if folders else params.root_uri
        ls.configure(Path(to_fs_path(uri)) if uri else Path.cwd())

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NoApexServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(ls.workspace.get_text_document(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NoApexServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish_soon(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NoApexServer, params: types.DidSaveTextDocumentParams) -> None:
        name = Path(to_fs_path(params.text_document.uri) or "").name
        if name in _PROJECT_FILES or name.startswith(("requirements", "constraints")):
            ls.configure(ls.root)  # settings and version targets are read afresh
            for document in list(ls.workspace.text_documents.values()):
                ls.publish(document)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: NoApexServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: NoApexServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.forget_notebook(params.notebook_document.uri)  # cells may be gone: their diagnostics with them
        ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: NoApexServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.forget_notebook(params.notebook_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NoApexServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.analyses.pop(params.text_document.uri, None)
        ls.published.pop(params.text_document.uri, None)
        ls.trees.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                            diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: NoApexServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        notebook = ls.notebooks.get(ls.cell_notebook.get(params.text_document.uri, ""))
        if notebook is not None:
            return _notebook_actions(notebook, params)
        document = ls.workspace.get_text_document(params.text_document.uri)
        analysis = ls.analyses.get(document.uri)
        if analysis is None or analysis.document.text != document.source:
            return []  # diagnostics for this text are not published yet: no edit against stale offsets
        wanted = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()]
        actions = []
        if not wanted or any(kind.startswith(types.CodeActionKind.QuickFix.value) for kind in wanted):
            actions += _quick_fixes(ls, document, analysis, params.range)
        if not wanted or any(FIX_ALL.startswith(kind) for kind in wanted):
            actions += _fix_all(ls, document, analysis)
        return actions

    return server


def _notebook_actions(notebook: NotebookView, params: types.CodeActionParams) -> List[types.CodeAction]:
    workspace = notebook.server.workspace
    if notebook.analysis is None or notebook.texts != [workspace.get_text_document(cell).source
                                                       for cell in notebook.cells]:
        return []  # the cells changed since they were analysed
    wanted = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()]
    actions = []
    if not wanted or any(kind.startswith(types.CodeActionKind.QuickFix.value) for kind in wanted):
        actions += notebook.quick_fixes(params.text_document.uri, params.range)
    if not wanted or any(FIX_ALL.startswith(kind) for kind in wanted):
        actions += notebook.fix_all()
    return actions


def _quick_fixes(ls: NoApexServer, document: TextDocument, analysis: Analysis,
                 asked: types.Range) -> List[types.CodeAction]:
    """The fixes of the published diagnostics the range touches (codeAction comes on every move
    of the cursor: it reads the last analysis of this version, its plans built once)."""
    actions = []
    published = ls.published.get(document.uri, [])
    touched = [index for index, diagnostic in enumerate(published) if _overlaps(diagnostic.range, asked)]
    if not touched:
        return []
    positions = positions_of(document, analysis.source)
    plans = analysis.plans
    for index in touched:
        plan, diagnostic, finding = plans[index], published[index], analysis.findings[index]
        if plan is None:
            continue
        unsafe = plan.grade is not Grade.SAFE
        title = f"{SOURCE}: fix {finding.code}" + (" (unsafe: review the change)" if unsafe else "")
        actions.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=not unsafe,
            edit=types.WorkspaceEdit(changes={document.uri: _edits(positions, plan)})))
    return actions


def _fix_all(ls: NoApexServer, document: TextDocument, analysis: Analysis) -> List[types.CodeAction]:
    """Every safe fix, to a fixpoint, as `flake8-no-apex fix` writes it: one edit of the whole text."""
    ls.session.project = ls.workspace_modules()  # names other modules import from this one keep their import
    try:
        result = ls.session.fix(analysis.document)
    except (AnalysisError, FixError):
        return []
    if result.text == document.source:
        return []
    whole = types.Range(types.Position(0, 0), positions_of(document, analysis.source).at(len(document.source)))
    return [types.CodeAction(title=f"{SOURCE}: fix all safely fixable findings", kind=FIX_ALL,
                             edit=types.WorkspaceEdit(changes={document.uri: [types.TextEdit(whole, result.text)]}))]


def _change(before: str, after: str) -> Optional[TextEdit]:
    """One edit that turns `before` into `after` (what lies between their common start and
    common end), None when they are equal. The common parts are found by halving: each step
    compares slices in C."""
    if before == after:
        return None
    limit = min(len(before), len(after))
    low, high = 0, limit  # the common start is at least low characters long, at most high
    while low < high:
        middle = (low + high + 1) // 2
        if before[low:middle] == after[low:middle]:
            low = middle
        else:
            high = middle - 1
    start = low
    low, high = 0, limit - start  # the common end, not overlapping the common start
    while low < high:
        middle = (low + high + 1) // 2
        if before[len(before) - middle:len(before) - low] == after[len(after) - middle:len(after) - low]:
            low = middle
        else:
            high = middle - 1
    return TextEdit(start, len(before) - low, after[start:len(after) - low])


def serve() -> int:
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # Python's, about the buffer: not findings
    server = build()
    collect_less()  # the server's own heap (pygls, lsprotocol) included
    server.start_io()
    return 0
