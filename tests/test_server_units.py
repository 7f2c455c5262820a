"""The language server's parts in this process: positions from the engine's line table as the
client counts them, a half-typed surrogate pair, the debounce of rapid changes, and codeAction
answered from the published diagnostics."""
from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings, strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument, Workspace

from flake8_no_apex.edits import Source
from flake8_no_apex.server import NoApexServer, Positions

# Line breaks for LSP are \n, \r\n and \r only; str.splitlines (which pygls' documents use) also
# breaks at these, so the reference below cannot be asked about texts holding them.
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
texts = st.lists(st.characters(blacklist_categories=("Cs",), blacklist_characters=_OTHER_BREAKS)
                 | st.sampled_from(["\n", "\r\n", "\r", "🙂", "é", "漢"]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.data(), st.sampled_from(list(types.PositionEncodingKind)))
def test_positions_are_pygls_positions(text, data, encoding):
    """Within the text, as pygls counts; at its end, on its last line (pygls says one line
    further, where no line is, or fails on an empty text)."""
    positions = Positions(Source(text), encoding)
    if text:
        offset = data.draw(st.integers(0, len(text) - 1))
        document = TextDocument("file:///x.py", text, position_codec=PositionCodec(encoding))
        assert positions.at(offset) == document.client_position_at_offset(offset)
    last = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    units = len(last[-1].encode("utf-8" if encoding == "utf-8" else "utf-16-le")) // (1 if encoding == "utf-8" else 2)
    if encoding == "utf-32":
        units = len(last[-1])
    assert positions.at(len(text)) == types.Position(line=len(last) - 1, character=units)


class _Client:
    """What the server sends, kept."""

    def __init__(self):
        self.published = []


@pytest.fixture
def server(tmp_path):
    server = NoApexServer()
    server.configure(tmp_path)
    server.protocol._workspace = Workspace(tmp_path.as_uri())
    client = _Client()
    server.text_document_publish_diagnostics = client.published.append
    server.client = client
    return server


def _open(server, uri, text, version=1):
    server.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=version,
                                                              text=text))
    return server.workspace.get_text_document(uri)


LEGACY = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


def test_a_half_typed_surrogate_pair_still_publishes(server, tmp_path):
    """An editor may send one half of a pair: the findings are published where they are."""
    text = 'x = "\ud83d"\n' + LEGACY
    server.publish(_open(server, (tmp_path / "a.py").as_uri(), text))
    (params,) = server.client.published
    assert [d.code for d in params.diagnostics] == ["APX201"]
    assert params.diagnostics[0].range.start == types.Position(line=2, character=5)


def test_rapid_changes_are_analysed_once_at_the_newest_version(server, tmp_path):
    uri = (tmp_path / "a.py").as_uri()
    _open(server, uri, LEGACY)
    analysed = []
    publish = server.publish
    server.publish = lambda document: (analysed.append(document.version), publish(document))

    async def burst():
        for version in range(2, 7):
            server.workspace.update_text_document(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                types.TextDocumentContentChangeWholeDocument(text=LEGACY + "#" * version + "\n"))
            server.publish_soon(uri, version)
            await asyncio.sleep(0)
        await asyncio.sleep(0.3)

    asyncio.run(burst())
    assert analysed == [6] and server.client.published[-1].version == 6


def test_code_actions_come_from_the_published_analysis(server, tmp_path):
    uri = (tmp_path / "a.py").as_uri()
    server.publish(_open(server, uri, LEGACY))
    analysis = server.analyses[uri]
    analyse = server.session.analyse
    server.session.analyse = lambda document: pytest.fail("a code action analysed the document again")
    from flake8_no_apex.server import _quick_fixes

    document = server.workspace.get_text_document(uri)
    (action,) = _quick_fixes(server, document, analysis, types.Range(types.Position(1, 6), types.Position(1, 6)))
    assert action.diagnostics == [server.published[uri][0]] and action.is_preferred
    assert _quick_fixes(server, document, analysis, types.Range(types.Position(2, 0), types.Position(2, 0))) == []
    server.session.analyse = analyse
