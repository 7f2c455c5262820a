"""A fixed text's tree made from the last one by parsing only the statements with an edit is the
tree `ast.parse` makes of the whole text, or it is not made (None: the module is parsed whole)."""
from __future__ import annotations

import ast
import random
import sys
import warnings
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from flake8_no_apex import fixer
from flake8_no_apex.edits import Source
from flake8_no_apex.fixer import fix_text
from flake8_no_apex.prefilter import default as default_prefilter
from flake8_no_apex.reparse import reparsed
from flake8_no_apex.table import TextEdit

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.py"))


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def edits_of(text: str, *changes: Tuple[str, str]) -> List[TextEdit]:
    """An edit per (old, new): old's first occurrence after the previous change's."""
    edits, at = [], 0
    for old, new in changes:
        start = text.index(old, at)
        edits.append(TextEdit(start, start + len(old), new))
        at = start + len(old)
    return edits


def spliced(text: str, edits: List[TextEdit]) -> Tuple[Optional[ast.Module], str]:
    before = Source(text)
    after = before.apply(edits)
    return reparsed(ast.parse(text), before, edits, Source(after)), after


def assert_spliced(text: str, *changes: Tuple[str, str]) -> None:
    tree, after = spliced(text, edits_of(text, *changes))
    assert tree is not None, "parsed whole where the statements could be parsed alone"
    assert dump(tree) == dump(ast.parse(after))


def assert_whole(text: str, *changes: Tuple[str, str]) -> None:
    assert spliced(text, edits_of(text, *changes))[0] is None


NESTED = """\
import torch


class Plugin(Base):
    '''Doc.'''

    @decorate(PrecisionPlugin)
    def method(self, x: PrecisionPlugin) -> None:
        if x:
            try:
                y = PrecisionPlugin()
            except ValueError:
                y = PrecisionPlugin()
        else:
            for i in range(3):
                while i:
                    with ctx():
                        z = PrecisionPlugin()  # trailing comment
        return PrecisionPlugin()


def after():
    return PrecisionPlugin()
"""


@pytest.mark.parametrize("occurrence", range(NESTED.count("PrecisionPlugin")))
@pytest.mark.parametrize("new", ["Precision", "pl.plugins.PrecisionPluginWithALongerName", "P"])
def test_every_depth_and_clause_gives_the_whole_parse(occurrence, new):
    """A rename anywhere: decorator, annotation, try and except bodies, a loop's innermost
    statement, the last statement of a function (whose end, and its class's, move with it)."""
    start = -1
    for _ in range(occurrence + 1):
        start = NESTED.index("PrecisionPlugin", start + 1)
    tree, after = spliced(NESTED, [TextEdit(start, start + len("PrecisionPlugin"), new)])
    assert tree is not None
    assert dump(tree) == dump(ast.parse(after))


def test_the_end_of_every_enclosing_statement_moves_with_the_last_line():
    text = "class A:\n    def f(self):\n        if x:\n            return Old()\n"
    tree, after = spliced(text, edits_of(text, ("Old", "MuchLongerName")))
    assert tree is not None and dump(tree) == dump(ast.parse(after))
    assert tree.body[0].end_col_offset == len("            return MuchLongerName()")


def test_a_clause_header_on_the_same_line_parses_the_statement_around_it():
    assert_spliced("def f():\n    if a: b = Old()\n    else: c = Old()\n", ("Old", "New"), ("Old", "Newer"))
    assert_spliced("if a: b = Old()\nc = 1\n", ("Old", "New"))


def test_a_keystroke_in_an_elif_header_parses_the_if_statement_it_belongs_to():
    """An `elif` is an `If` node of its own, but its lines only parse after its `if`: found
    by the bench's keystroke, which landed on one and parsed a 3,124-line module whole."""
    text = "def f(a):\n    if a:\n        b = 1\n    elif a > 1:\n        b = 2\n    else:\n        b = 3\n"
    assert_spliced(text, ("a > 1:", "a > 1: "))
    assert_spliced(text, ("a > 1", "a >= Old"))
    assert_spliced("if a:\n    b = 1\nelif c:\n    b = 2\nelif d:\n    b = 3\n", ("d", "done"))
    assert_spliced("def f():\n    elif_count = Old()\n    return elif_count\n", ("Old", "New"))


def test_statements_sharing_a_line_are_parsed_together():
    assert_spliced("def f():\n    a = Old(); b = Old()\n    return a\n", ("Old", "N"), ("Old", "NewName"))
    assert_spliced("a = 1; b = Old(); c = 2\n", ("Old", "New"))


def test_a_semicolon_after_the_last_statement_of_a_block():
    """The block's statement ends at the `;`: its end is not the last statement's."""
    text = "def f():\n    return Old();\nx = 1\n"
    tree, after = spliced(text, edits_of(text, ("Old", "LongerName")))
    assert tree is None or dump(tree) == dump(ast.parse(after))


def test_an_edit_that_writes_a_new_statement_or_a_comment():
    assert_spliced("def f():\n    a = Old()\n    return a\n", ("Old()", "New(); b = 2"))
    assert_spliced("def f():\n    a = Old()\n    return a\n", ("Old()", "New()  # was Old"))
    assert_spliced("def f():\n    return Old()\n", ("Old()", "New()  # was Old"))


def test_several_edits_in_one_block_and_in_statements_inside_others():
    text = "def f():\n    a = Old()\n    if a:\n        b = Old()\n    c = Old()\n    return Old()\n"
    assert_spliced(text, ("Old", "New"), ("Old", "N"), ("Old()", "X(); y = 1"), ("Old", "LongName"))
    text = "def f(x=Old):\n    return Old()\n"  # the header's edit takes the whole function
    assert_spliced(text, ("Old", "New"), ("Old", "Other"))


def test_columns_count_bytes_after_other_characters():
    assert_spliced("def f():\n    s = 'é€'; t = Old()  # ü\n", ("Old", "New"))
    assert_spliced("def f():\n    return f'{Old()!r} é'\n", ("Old", "NewName"))


def test_line_breaks_other_than_a_newline():
    assert_spliced("def f():\r\n    return Old()\r\n\r\nx = Old\r\n", ("Old", "New"), ("Old", "N"))
    assert_spliced("def f():\r    return Old()\r\rx = 1\r", ("Old", "New"))


def test_indentation_with_tabs_and_form_feeds():
    assert_spliced("class A:\n\tdef f(self):\n\t\treturn Old()\n", ("Old", "New"))
    assert_spliced("def f():\n    pass\n\x0c\ndef g():\n    return Old()\n", ("Old", "New"))


def test_a_space_typed_in_front_of_an_indented_statement_parses_the_module_whole():
    """Alone under `if 1:` the statement parses at any indentation; in its block it does not."""
    text = "def f():\n    a = 1\n    b = 2\n"
    at = text.index("b = 2")
    for edit in (TextEdit(at, at, " "), TextEdit(at - 1, at, ""), TextEdit(at - 1, at, "\t")):
        before = Source(text)
        assert reparsed(ast.parse(text), before, [edit], Source(before.apply([edit]))) is None


def test_keystrokes_that_break_the_block_around_parse_the_module_whole():
    """Found by typing at random (the server's keystrokes): a header made a comment leaves its
    body indented alone; a form feed in front of `else:` puts it at column 0, where under the
    `if 1:` of a statement parsed alone it would be the wrapper's `else`."""
    text = ("def f():\n    with open(p) as handle:\n        path = 1\n"
            "    if a:\n        b = 1\n    else:\n        b = 2\n")
    for at, key in ((text.index("with"), "#"), (text.index("else"), "\f")):
        edit = TextEdit(at, at, key)
        before = Source(text)
        assert reparsed(ast.parse(text), before, [edit], Source(before.apply([edit]))) is None


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match")
def test_match_cases():
    text = "match x:\n    case 1:\n        y = Old()\n    case _:\n        y = Old()\n"
    assert_spliced(text, ("Old", "New"), ("Old", "LongerName"))


def test_what_is_parsed_whole():
    assert_whole("import a\nx = Old()\n", ("x = Old()", "x = New()\ny = 1"))  # a new line moves the rest
    assert_whole("import a, \\\n    b\n", ("a, \\\n", "a, "))
    assert_whole("from __future__ import barry_as_FLUFL\nx = Old\n", ("Old", "New"))


def test_comments():
    assert_whole("x = 1\n# Old\ny = 2\n", ("Old", "New"))  # a line of no statement
    assert_spliced("x = 1  # Old\n", ("Old", "New"))
    assert_spliced("def f():\n    x = (1 +\n         2)  # Old\n", ("Old", "New"))


def test_a_line_after_a_backslash_is_parsed_with_the_statement_it_continues():
    assert_spliced("def f():\n    x = 1 + \\\n        Old()\n", ("Old", "New"))


def _identifier_edits(text: str, rng: random.Random, count: int) -> List[TextEdit]:
    """Renames of names, attributes and keyword arguments, of any length, with now and then
    something that is more than a name (a call, a second statement, a comment, a `;`)."""
    source = Source(text)
    spots = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            start = source.offset(node.lineno, node.col_offset)
            spots.append((start, start + len(node.id)))
        elif isinstance(node, ast.Attribute) and node.end_lineno == node.lineno:
            end = source.offset(node.end_lineno, node.end_col_offset)
            spots.append((end - len(node.attr), end))
    spellings = ["x", "Precision", "a_much_longer_name_than_before", "a.b", "f(1)", "é", "x;", "x  # note",
                 "x; y = 2", "(x)", "x \\", "'''x'''", "x  # '''", "x, y", "lambda: x", "x\ny"]
    chosen = sorted(rng.sample(spots, min(count, len(spots))))
    edits, end = [], -1
    for start, stop in chosen:
        if start >= end:
            edits.append(TextEdit(start, stop, rng.choice(spellings)))
            end = stop
    return edits


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(FIXTURES), st.randoms(use_true_random=False), st.integers(1, 6))
def test_random_renames_in_the_fixtures_give_the_whole_parse(path, rng, count):
    text = path.read_text(encoding="utf-8")
    edits = _identifier_edits(text, rng, count)
    before = Source(text)
    after = before.apply(edits)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(after, "<fixed>", "exec", dont_inherit=True)  # fix parses nothing it could not compile
    except SyntaxError:
        return
    tree = reparsed(ast.parse(text), before, edits, Source(after))
    assert tree is None or dump(tree) == dump(ast.parse(after))


@pytest.mark.parametrize("wrong_call", ["torch.cuda.amp.GradScaler ()", "torch.cuda.amp.GradScaler(\n)"])
def test_a_round_with_fixes_to_make_is_planned_on_a_parse_of_the_whole_text(monkeypatch, wrong_call):
    """Fault injection: a spliced tree that is wrong (here: the fixed call still reads the old
    spelling, at the same positions or on lines the text does not have) never edits the text: a
    plan made on it either does not fit the text's tokens (no plan) or is made again on
    `ast.parse`'s tree. (What such a round leaves as remaining findings is the splice's: the
    splice equals the whole parse, as the tests above show.)"""
    text = "import torch\n\n\ndef f():\n    scaler = torch.cuda.amp.GradScaler()\n    return scaler\n"
    honest = fix_text(text)
    assert 'torch.amp.GradScaler("cuda")' in honest.text and honest.remaining == []
    planned_on = []

    def wrong(tree, before, edits, after):
        return ast.parse(after.text.replace('torch.amp.GradScaler("cuda")', wrong_call))

    def recorded(ctx, finding):
        planned_on.append(ctx.tree)
        return plan_of(ctx, finding)

    plan_of = fixer._plan
    monkeypatch.setattr(fixer, "reparsed", wrong)
    monkeypatch.setattr(fixer, "_plan", recorded)
    result = fix_text(text)
    assert result.text == honest.text and len(result.rounds) == 1
    assert len(planned_on) == 2  # the first round's plan, and one on the wrong tree that fitted nothing


def test_statements_far_down_are_moved_to_their_lines_node_by_node():
    """Blank lines put a statement on its lines only up to a few per line of it; further down,
    its nodes are moved (thousands of fixes in a module stay linear)."""
    filler = "".join(f"x{i} = {i}\n" for i in range(300))
    assert_spliced(filler + "def f():\n    if a:\n        return Old()\n", ("Old", "NewName"))
    assert_spliced(filler + "y = Old(); z = Old()\n", ("Old", "N"), ("Old", "NewName"))
    big = "def f():\n" + "".join(f"    v{i} = Old()\n" for i in range(100))
    assert_spliced("x = 1\n" * 50 + big, ("def f()", "def f(a=Old)"))  # the header: the whole function, padded


@pytest.mark.corpus
@pytest.mark.slow
def test_every_splice_of_fixing_the_corpus_is_the_whole_parse(monkeypatch):
    """Lightning 1.8.6 fixed both ways: every tree made by parsing the edited statements again
    is `ast.parse`'s tree of the fixed text (most of the fixed files are spliced, not parsed)."""
    import corpus

    root = corpus.ensure()
    if root is None:
        pytest.skip("the regression corpus could not be downloaded from PyPI")
    made = []

    def compared(tree, before, edits, after):
        spliced_tree = reparsed(tree, before, edits, after)
        if spliced_tree is not None:
            assert dump(spliced_tree) == dump(ast.parse(after.text)), edits
            made.append(spliced_tree)
        return spliced_tree

    monkeypatch.setattr(fixer, "reparsed", compared)
    may_match = default_prefilter().may_match
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if may_match(text):
            for unsafe in (False, True):
                fix_text(text, unsafe=unsafe)
    assert len(made) >= 50, len(made)


def test_a_module_parsed_whole_keeps_its_tree_as_it_was():
    """Every slice parses before one changes the tree: the last statement's splice would work,
    the first's does not (its line now ends in a backslash)."""
    text = "x = Old\ny = 1\ndef f():\n    return Old()\n"
    tree = ast.parse(text)
    was = dump(tree)
    before = Source(text)
    edits = edits_of(text, ("Old", "New \\"), ("Old", "NewName"))
    assert reparsed(tree, before, edits, Source(before.apply(edits))) is None
    assert dump(tree) == was
