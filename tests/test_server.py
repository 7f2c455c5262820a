"""The language server, end to end: the real server process over stdio, driven by pytest-lsp's
client (pygls and lsprotocol), as an editor drives it."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Callable, List

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from flake8_no_apex.fixer import fix_text

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]  # end to end: a server process per test

LEGACY = "import torch\nnote = '🙂'; ctx = torch.cuda.amp.autocast()\nscaler = torch.cuda.amp.GradScaler()\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "flake8_no_apex", "server"]))
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\nper-file-ignores = legacy/*:APX201\n")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="w")]))
    yield
    await lsp_client.shutdown_session()


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for what the server publishes (several notifications may arrive in one read, so
    counting them would race), or fail after a few seconds instead of hanging."""
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"the server never published {what}")


async def open_document(client: LanguageClient, path: Path, text: str, language: str = "python") -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
    await until(lambda: uri in client.diagnostics, f"diagnostics for {path.name}")
    return uri


def utf16_offset(text: str, position: types.Position) -> int:
    """What an editor does with an LSP position (UTF-16 code units by default)."""
    lines = text.splitlines(True)
    start = sum(len(line) for line in lines[:position.line])
    units = 0
    for index, char in enumerate(lines[position.line] if position.line < len(lines) else ""):
        if units >= position.character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(lines[position.line]) if position.line < len(lines) else len(text)


def apply(text: str, edits: List[types.TextEdit]) -> str:
    spans = sorted(((utf16_offset(text, e.range.start), utf16_offset(text, e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def test_diagnostics_on_open_with_utf16_ranges_levels_and_links(client: LanguageClient, tmp_path):
    uri = await open_document(client, tmp_path / "train.py", LEGACY)
    diagnostics = client.diagnostics[uri]
    assert [d.code for d in diagnostics] == ["APX201", "APX203"]
    autocast = diagnostics[0]
    # after the emoji (two UTF-16 units) the column is one more than in characters
    assert autocast.range.start == types.Position(line=1, character=LEGACY.splitlines()[1].index("torch") + 1)
    assert apply(LEGACY, [types.TextEdit(autocast.range, "X")]).splitlines()[1].endswith("X()")
    assert autocast.severity == types.DiagnosticSeverity.Warning and autocast.source == "flake8-no-apex"
    assert autocast.message.startswith("torch.cuda.amp.autocast(...) is deprecated since torch 2.4")
    assert autocast.code_description.href == (tmp_path / "docs" / "rules.md").as_uri() + "#apx201"
    assert list(autocast.tags) == [types.DiagnosticTag.Deprecated]


async def test_edits_update_the_diagnostics(client: LanguageClient, tmp_path):
    uri = await open_document(client, tmp_path / "train.py", LEGACY)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(2, 0), types.Position(3, 0)),
                                                text="")]))
    await until(lambda: [d.code for d in client.diagnostics[uri]] == ["APX201"], "the edited findings")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        [types.TextDocumentContentChangeWholeDocument(text="import torch\nwith torch.cuda.amp.autocast(:\n")]))
    # a syntax error while typing: no finding (the editor's Python support says it)
    await until(lambda: not client.diagnostics[uri], "an empty list for text that does not parse")


async def test_each_fix_is_a_quick_fix_and_fix_all_writes_what_fix_writes(client: LanguageClient, tmp_path):
    uri = await open_document(client, tmp_path / "train.py", LEGACY)
    autocast = client.diagnostics[uri][0]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), autocast.range, types.CodeActionContext([autocast])))
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick] == ["flake8-no-apex: fix APX201"] and quick[0].is_preferred
    fixed = apply(LEGACY, quick[0].edit.changes[uri])
    assert "ctx = torch.amp.autocast(\"cuda\", dtype=torch.float16, cache_enabled=True)" in fixed
    assert "torch.cuda.amp.GradScaler()" in fixed
    every = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(0, 0)),
        types.CodeActionContext([], only=[types.CodeActionKind.SourceFixAll])))
    assert [a.kind for a in every] == ["source.fixAll.flake8-no-apex"]
    assert apply(LEGACY, every[0].edit.changes[uri]) == fix_text(LEGACY).text


async def test_fix_all_keeps_an_import_another_module_of_the_workspace_imports(client: LanguageClient, tmp_path):
    """As `fix` of a tree does: `pkg/other.py` imports autocast from `pkg/utils.py` (issue 21)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "other.py").write_text("from pkg.utils import autocast\n")
    utils = "import torch\nfrom torch.cuda.amp import autocast\n\nwith autocast():\n    pass\n"
    (tmp_path / "pkg" / "utils.py").write_text(utils)
    uri = await open_document(client, tmp_path / "pkg" / "utils.py", utils)
    every = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(0, 0)),
        types.CodeActionContext([], only=[types.CodeActionKind.SourceFixAll])))
    fixed = apply(utils, every[0].edit.changes[uri])
    assert "from torch.cuda.amp import autocast\n" in fixed and "torch.amp.autocast(" in fixed


async def test_unsafe_fixes_are_offered_labelled_and_not_preferred(client: LanguageClient, tmp_path):
    pinned = "torch>=2.4\napex @ git+https://github.com/NVIDIA/apex\n"
    uri = await open_document(client, tmp_path / "requirements.txt", pinned, language="pip-requirements")
    (pin,) = client.diagnostics[uri]
    assert pin.code == "APX109" and pin.range.start == types.Position(1, 0)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), pin.range, types.CodeActionContext([pin])))
    assert [(a.title, a.is_preferred) for a in actions] == [("flake8-no-apex: fix APX109 (unsafe: review the change)",
                                                             False)]
    assert apply(pinned, actions[0].edit.changes[uri]) == "torch>=2.4\n"


async def test_workspace_settings_and_noqa_are_honoured_and_reread_on_save(client: LanguageClient, tmp_path):
    (tmp_path / "legacy").mkdir()
    ignored = await open_document(client, tmp_path / "legacy" / "old.py", LEGACY)
    assert [d.code for d in client.diagnostics[ignored]] == ["APX203"]  # per-file-ignores from setup.cfg
    quiet = await open_document(client, tmp_path / "quiet.py", LEGACY.replace("GradScaler()", "GradScaler()  # noqa"))
    assert [d.code for d in client.diagnostics[quiet]] == ["APX201"]
    config = tmp_path / "setup.cfg"
    config.write_text("[flake8]\nextend-ignore = APX2\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(config.as_uri())))
    await until(lambda: not client.diagnostics[ignored] and not client.diagnostics[quiet], "the new settings' findings")


async def test_yaml_configs_are_checked_and_other_documents_left_alone(client: LanguageClient, tmp_path):
    uri = await open_document(client, tmp_path / "config.yaml", "trainer:\n  amp_backend: apex\n", language="yaml")
    assert [(d.code, d.range.start) for d in client.diagnostics[uri]] == [("APX002", types.Position(1, 2))]
    notes = await open_document(client, tmp_path / "NOTES.md", "torch.cuda.amp.autocast()\n", language="markdown")
    assert not client.diagnostics[notes]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await until(lambda: not client.diagnostics[uri], "cleared diagnostics for a closed document")


async def test_a_notebooks_cells_get_their_diagnostics_and_fixes(client: LanguageClient, tmp_path):
    """LSP notebook documents: the cells are analysed as one module (the import in cell 1 makes
    cell 3's call torch's), each cell's diagnostics published on it, a quick fix and fix-all
    editing the cells; a change of one cell updates them."""
    uri = (tmp_path / "train.ipynb").as_uri()
    texts = ["import torch\n!pip install apex", "# Notes", "note = '🙂'; scaler = torch.cuda.amp.GradScaler()"]
    cells = [f"vscode-notebook-cell:{tmp_path}/train.ipynb#cell{n}" for n in range(3)]
    kinds = [types.NotebookCellKind.Code, types.NotebookCellKind.Markup, types.NotebookCellKind.Code]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=uri, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=kind, document=cell) for kind, cell in zip(kinds, cells)]),
        cell_text_documents=[types.TextDocumentItem(uri=cell, language_id="python" if kind == kinds[0] else "markdown",
                                                    version=1, text=text)
                             for cell, kind, text in zip(cells, kinds, texts)]))
    await until(lambda: cells[2] in client.diagnostics, "the cells' diagnostics")
    first, last = client.diagnostics[cells[0]], client.diagnostics[cells[2]]
    assert [(d.code, d.range.start.line, d.range.start.character) for d in first] == [("APX109", 1, 13)]
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in last] == [
        ("APX203", 0, 22, 47)]  # UTF-16: the emoji is two units
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=cells[2]), range=last[0].range,
        context=types.CodeActionContext(diagnostics=last)))
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick] == ["flake8-no-apex: fix APX203"]
    fixed = apply(texts[2], quick[0].edit.changes[cells[2]])
    assert fixed == "note = '🙂'; scaler = torch.amp.GradScaler(\"cuda\")" and list(quick[0].edit.changes) == [cells[2]]
    every = [a for a in actions if a.kind == "source.fixAll.flake8-no-apex"]
    assert list(every[0].edit.changes) == [cells[2]]
    assert every[0].edit.changes[cells[2]][0].new_text == "note = '🙂'; scaler = torch.amp.GradScaler(\"cuda\")"
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=uri),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cells[0], version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text="import torch\n")])]))))
    await until(lambda: not client.diagnostics[cells[0]], "the changed cell's diagnostics")
    assert len(client.diagnostics[cells[2]]) == 1
