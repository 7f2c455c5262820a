"""The language server's parts in this process: positions from the engine's line table as the
client counts them, a half-typed surrogate pair, the debounce of rapid changes, and codeAction
answered from the published diagnostics."""
from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument, Workspace

from flake8_no_apex.edits import Source
from flake8_no_apex.engine import AnalysisError, Document, Session
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


_FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.py")) + \
    sorted((Path(__file__).parent / "apex_migration").glob("*.py"))
_KEYS = [" ", "\t", "x", "_", ":", "(", ")", '"', "#", ".", "=", ",", "\\"]


def _seen(analysis):
    """What a client is given of an analysis: each finding and its plan's edits and grade."""
    if analysis is None:
        return None
    plans = analysis.plans
    return [(f.code, f.line, f.col, f.message, p and (p.grade, p.edits)) for f, p in zip(analysis.findings, plans)]


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")  # the keys make `\i`, `1()`
@pytest.mark.parametrize("path", _FIXTURES, ids=lambda p: p.name)
def test_keystrokes_analysed_from_the_last_tree_say_what_a_whole_parse_says(server, tmp_path, path):
    """Differential: a document changed a key at a time (typed, deleted, Enter; anywhere, in front
    of statements too; a key that breaks the syntax taken back by the next change) is analysed
    from its last tree as from a parse of the whole text: the same findings, plans and failures.
    Most keystrokes are made with a splice, so the test sees them."""
    rng = random.Random(path.name)
    uri = (tmp_path / path.name).as_uri()
    text = path.read_text()
    document = _open(server, uri, text)
    server.analyse(document)
    fresh = Session(server.session.settings)
    spliced = broken = 0
    good = text
    for version in range(2, 32):
        if text != good:  # the last key broke the syntax: taken back
            text = good
        else:
            at = rng.randrange(len(text) + 1)
            key = rng.choice(_KEYS + ["\n"] if rng.random() < 0.1 else _KEYS)
            text = text[:at] + text[at + 1:] if rng.random() < 0.3 and at < len(text) else text[:at] + key + text[at:]
        server.workspace.update_text_document(types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                                              types.TextDocumentContentChangeWholeDocument(text=text))
        last = server.trees.get(uri)
        mine = server.analyse(document)
        try:
            theirs = fresh.analyse(Document(Path(tmp_path / path.name), text, named=True, kind="python"))
            good = text
        except AnalysisError:
            theirs = None
            broken += 1
        assert _seen(mine) == _seen(theirs), (version, text)
        spliced += last is not None and server.trees.get(uri, (None, None))[1] is last[1]
    assert spliced >= 3 and broken  # the splices were tried, and so were failures
