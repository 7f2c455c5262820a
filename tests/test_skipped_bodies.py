"""The resolver passes over the function bodies that cannot hold a finding (`Checker.skips`) and
visits them only when a question needs them (`Checker.complete`): its findings, its plans, the
fixed text and, once completed, its records are those of a walk of every body. Compared on the
fixtures, the examples, the apex migration's cases and a sixteenth of the standard library here;
on the whole standard library and the Lightning corpus in the slow group."""
from __future__ import annotations

import ast
import sysconfig
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from flake8_no_apex.checker import Checker
from flake8_no_apex.edits import Source
from flake8_no_apex.fixer import Round, fix_text
from flake8_no_apex.rules import PYTHON_RULES

ROOT = Path(__file__).parent
STDLIB = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


def _position(node: ast.AST) -> Tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _found(checker: Checker, tree: ast.Module) -> List[tuple]:
    return [(f.line, f.col, f.code, f.message, dict(f.site.module_names), f.site.shim)
            for f in [*checker.check(tree), *checker.hidden_findings()]]


def _records(checker: Checker) -> Dict[str, object]:
    """What a walk records besides findings, in terms that do not depend on the order of the visits."""
    return {
        "uses": [(_position(statement), alias.name, alias.asname, sorted(map(_position, binding.uses)))
                 for alias, statement, binding in checker.imports],
        "bound": set(checker.bound_names),
        "strings": sorted(checker.holder_strings),
        "literals": sorted(checker.multiline_literals),
        "f-strings": sorted(map(_position, checker.joined_strings)),
        "calls": sorted(_position(call) for call in checker.calls.values()),
        "hints": len(checker.hints),
        "roots": sorted((root, sorted(uses)) for root, uses in checker._root_uses.items()),
        "imported": set(checker.imported),
    }


def compare_with_every_body_walked(texts: List[str]) -> Tuple[int, int]:
    """Assert that skipping changes nothing; (bodies skipped, bodies) over the texts."""
    skipped = bodies = 0
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        every, fast = Checker(walrus=":=" in text), Checker(walrus=":=" in text, source=Source(text))
        assert _found(fast, tree) == _found(every, tree)
        bodies += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))
        skipped += len(fast.skipped)
        # the f-strings of the bodies passed over are found without visiting them
        assert sorted(map(_position, fast.all_joined_strings())) == sorted(map(_position, every.joined_strings))
        assert fast.complete(["a name no module spells"]) is False
        fast.complete()
        assert not fast.skipped and _records(fast) == _records(every)
    return skipped, bodies


def _plans(text: str) -> List[object]:
    now = Round.of(text, {})
    return [p and tuple(p) for p in now.plans()] + [p and tuple(p) for p in now.plans(cleanup=False)]


def _every_body_walked(monkeypatch) -> None:
    monkeypatch.setattr(Checker, "skips", lambda self, fn, scopes: False)


def _in_a_function(snippet: str) -> str:
    """A rule's example with its code (not its leading imports) moved into a function's body:
    where the walk may pass over it, unless the body spells what the finding needs."""
    lines = snippet.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].startswith(("import ", "from ")):
        head += 1
    return "".join(lines[:head]) + "def example():\n" + textwrap.indent("".join(lines[head:]) or "pass\n", "    ")


def _cases() -> List[str]:
    paths = [*sorted((ROOT / "fixtures").glob("*.py")), *sorted((ROOT.parent / "examples").glob("*.py")),
             *sorted((ROOT / "apex_migration").glob("*.py"))]
    snippets = [text for rule in PYTHON_RULES for text in (rule.before, *rule.invalid, *rule.valid)]
    return [p.read_text() for p in paths] + snippets + [text for text in map(_in_a_function, snippets) if _parses(text)]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:  # an import over several lines, split by `_in_a_function`
        return False
    return True


def test_skipped_bodies_change_no_finding_nor_record():
    skipped, bodies = compare_with_every_body_walked(_cases() + [p.read_text() for p in STDLIB[1::16]])
    assert bodies > 300 and skipped > bodies // 3, (skipped, bodies)


def test_skipped_bodies_change_no_plan_nor_fix(monkeypatch):
    cases = _cases()
    fast = [(_plans(text), fix_text(text).text, fix_text(text, unsafe=True).text) for text in cases]
    _every_body_walked(monkeypatch)
    assert fast == [(_plans(text), fix_text(text).text, fix_text(text, unsafe=True).text) for text in cases]


def test_a_body_that_is_the_last_reader_of_an_import_keeps_it():
    """`tca` is read in `g`, a body without any rule's word: the walk passes over it, and the
    fix, whose rewrite releases `tca`, asks for it before it removes the import."""
    text = textwrap.dedent("""\
        from torch.cuda import amp as tca


        def f(x):
            with tca.autocast():
                return x


        def g():
            return tca
        """)
    checker = Checker(source=Source(text))
    checker.check(ast.parse(text))
    assert [fn.name for _, fn in checker.skipped] == ["g"]
    assert "from torch.cuda import amp as tca\n" in fix_text(text).text
    alone = text[:text.index("def g")]
    assert "tca" not in fix_text(alone).text  # where no other code reads it, it goes


def test_a_decorator_of_a_body_s_first_statement_is_in_the_body():
    """A decorated statement's line is its `def`'s: the decorator above it is read too."""
    text = textwrap.dedent("""\
        import torch as th


        def run():
            @th.cuda.amp.autocast()
            def step():
                return 1
            return step()
        """)
    checker = Checker(source=Source(text))
    found = checker.check(ast.parse(text))
    assert [fn.name for _, fn in checker.skipped] == ["step"] and [f.line for f in found] == [5]


def test_a_body_reading_a_name_that_reaches_a_rule_is_walked():
    """An alias of a deprecated name (`A`), a local subclass of a library class (`Mine`): no
    rule's word is spelled where they are read, and the bodies are walked."""
    text = textwrap.dedent("""\
        from apex import amp as A
        from pytorch_lightning.plugins import NativeMixedPrecisionPlugin


        class Mine(NativeMixedPrecisionPlugin):
            pass


        def f(model, optimizer):
            return A


        def g():
            return Mine("cuda")


        def h():
            return 1
        """)
    checker = Checker(source=Source(text))
    checker.check(ast.parse(text))
    assert [fn.name for _, fn in checker.skipped] == ["h"]


@pytest.mark.slow
def test_skipped_bodies_change_nothing_anywhere(monkeypatch):
    import corpus

    tree = corpus.ensure()
    corpus_texts = [p.read_text() for p in sorted(tree.rglob("*.py"))] if tree else []
    skipped, bodies = compare_with_every_body_walked([p.read_text() for p in STDLIB] + corpus_texts)
    assert skipped > bodies // 3, (skipped, bodies)
    with_findings = [text for text in corpus_texts if Round.of(text, {}).findings]
    fast = [(_plans(text), fix_text(text).text) for text in with_findings]
    _every_body_walked(monkeypatch)
    assert len(with_findings) > 40 and fast == [(_plans(text), fix_text(text).text) for text in with_findings]


def test_a_local_subclass_reaches_a_rule_only_through_its_base():
    """Called, a local subclass is its base: one of a positional argument's callee is walked
    where it is read (`Plugin(16, kind, level)` passes amp_type and amp_level by position); one
    of `torch.nn.Module` reaches no rule, and a body that reads it alone is passed over."""
    text = textwrap.dedent("""\
        import torch
        from pytorch_lightning.plugins import DeepSpeedPrecisionPlugin


        class Plugin(DeepSpeedPrecisionPlugin):
            pass


        class Net(torch.nn.Module):
            pass


        def plugin(kind, level):
            return Plugin(16, kind, level)


        def net():
            return Net()
        """)
    checker = Checker(source=Source(text))
    found = checker.check(ast.parse(text))
    assert [fn.name for _, fn in checker.skipped] == ["net"]
    assert {f.line for f in found} >= {14}
    every = Checker()
    assert _found(every, ast.parse(text)) == _found(Checker(source=Source(text)), ast.parse(text))


def test_a_question_about_names_visits_only_the_bodies_that_spell_them():
    text = textwrap.dedent("""\
        import os
        import sys


        def where():
            return os.getcwd()


        def argv():
            def first():
                return sys.argv[0]
            return first
        """)
    checker = Checker(source=Source(text))
    checker.check(ast.parse(text))
    assert [fn.name for _, fn in checker.skipped] == ["where", "argv"]
    uses = {alias.name: binding.uses for alias, _, binding in checker.imports}
    assert checker.complete(["sys"]) and [fn.name for _, fn in checker.skipped] == ["where"]
    assert len(uses["sys"]) == 1 and not uses["os"]  # the nested function's read too
    assert not checker.complete(["argv", "nothing"])  # (`argv` was visited: no body left spells it)
    assert checker.complete() and len(uses["os"]) == 1 and not checker.skipped
