"""The resolver's view of scopes agrees with Python's own (the `symtable` module)."""
from __future__ import annotations

import ast
import re
import symtable
import sys
import sysconfig
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from flake8_no_apex.checker import Checker
from flake8_no_apex.fixer import _named_in_strings
from flake8_no_apex.resolve import _local_names, _parameters, walk

BINDING_FORMS = '''
import os.path, json as j
from x import (y, z as w)
def f(a, /, b=1, *c, d, **e):
    g = h = 1
    i, (k, *l) = m
    [n, o] = p
    q += 1
    r: int
    s: int = 2
    t.u = 3
    v[0] = 4
    for aa, bb in cc: pass
    else: dd = 1
    while ee: ff = 1
    with gg as hh, ii as (jj, kk): pass
    try: ll = 1
    except E as mm: nn = 1
    else: oo = 1
    finally: pp = 1
    del qq
    global rr
    rr = 1
    def ss(): tt = 1
    class uu: vv = 1
    async def ww(): pass
    lam = lambda xx: xx
    comp = [zz for zz in range(3)]
    gen = {bbb: ccc for bbb, ccc in ddd}
def outer():
    x = 1
    def inner():
        nonlocal x
        x = 2
        print(undefined)
    return inner
'''

WALRUS_FORMS = '''
def f():
    lam = lambda xx: (yy := xx)
    comp = [zz for zz in range(3) if (aaa := zz)]
    if (eee := 1): fff = 2
    @decorate(ggg := 1)
    def hhh(iii=(jjj := 2)): pass
    class C(Base, metaclass=(mmm := Meta)): pass
    try: pass
    except (nnn := ValueError): pass
    assert (kkk := 1)
    return (lll := 1)
'''

MATCH_FORMS = '''
def f(command):
    match command:
        case Point(x=x0, y=0) | [x0, *rest]:
            pass
        case {"key": value, **others}:
            pass
        case str() as text if (guard := text):
            pass
'''


def _functions(tree: ast.AST) -> Dict[Tuple[str, int], ast.AST]:
    return {(node.name, node.lineno): node for node in walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _symbol_tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    for child in table.get_children():
        yield child
        yield from _symbol_tables(child)


def _python_locals(source: str) -> Dict[Tuple[str, int], Set[str]]:
    """(name, line) of each function -> the names Python makes local to it."""
    tables = _symbol_tables(symtable.symtable(source, "<module>", "exec"))
    return {(t.get_name(), t.get_lineno()): {s.get_name() for s in t.get_symbols() if s.is_local()}
            for t in tables if t.get_type() == "function" and t.get_name() not in ("lambda", "<lambda>")}


def _comprehension_targets(function: ast.AST) -> Set[str]:
    return {name.id for node in walk(function) if isinstance(node, ast.comprehension)
            for name in walk(node.target) if isinstance(name, ast.Name)}


def _assert_agrees(source: str) -> int:
    tree = ast.parse(source)
    expected = _python_locals(source)
    functions = _functions(tree)
    for key, function in functions.items():
        walrus = ":=" in source
        ours = _local_names(function, walrus) | {arg.arg for arg in _parameters(function.args)}
        if sys.version_info >= (3, 12):  # PEP 709: the variables of an inlined comprehension are
            missing = expected[key] - ours  # listed with the function's, though they stay its own
            assert ours <= expected[key] and missing <= _comprehension_targets(function), (key, ours ^ expected[key])
        else:
            assert ours == expected[key], (key, ours ^ expected[key])
    return len(functions)


def test_every_binding_form_agrees_with_python():
    assert _assert_agrees(BINDING_FORMS) == 5
    assert _assert_agrees(WALRUS_FORMS) == 2


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are Python 3.10+")
def test_match_captures_are_local():
    assert _assert_agrees(MATCH_FORMS) == 1


@pytest.mark.slow
def test_the_standard_library_agrees_with_python():
    """Every function of (a share of) the standard library's own modules: without `:=` in the
    text the expressions are not walked, and the answer is still Python's."""
    paths = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::3]
    checked = 0
    for path in paths:
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            checked += _assert_agrees(source)
        except SyntaxError:  # a test module for bad syntax
            continue
    assert checked > 1000


def _every_binding(tree: ast.AST) -> Set[str]:
    """Every name a module binds anywhere, from a walk of every node: what the fixers must not
    take for a new name."""
    names: Set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _resolved(sources: List[str], stdlib_share: slice) -> Iterator[Tuple[ast.Module, Checker]]:
    """Each source that parses, and a share of the standard library's modules, with the checker
    that walked it."""
    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[stdlib_share]
    for source in [*sources, *(path.read_text(encoding="utf-8", errors="replace") for path in stdlib)]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        checker = Checker()
        checker.check(tree)
        yield tree, checker


def test_the_resolver_sees_every_binding():
    """The fixers ask `ctx.binds(name)` of the resolver's record; it must miss none."""
    sources = [BINDING_FORMS, WALRUS_FORMS, "del x\nclass C:\n    del y\n[z := 1 for w in v]\nlambda q: q\n"]
    checked = 0
    for tree, checker in _resolved(sources, slice(1, None, 6)):
        assert _every_binding(tree) <= checker.bound_names, _every_binding(tree) - checker.bound_names
        checked += 1
    assert checked > 20


def _strings_of_annotations_and_exports(tree: ast.AST) -> Set[str]:
    """From a walk of every statement: the words of the strings in annotations and `__all__`."""
    holders = []
    for node in walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            holders.append(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            holders += [a.annotation for a in _parameters(node.args) if a.annotation]
            holders += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            holders.append(node.annotation)
    return {word for holder in holders if holder is not None for constant in walk(holder)
            if isinstance(constant, ast.Constant) and isinstance(constant.value, str)
            for word in re.findall(r"[A-Za-z_]\w*", constant.value)}


def test_the_resolver_keeps_every_string_that_names_something():
    """`__all__` entries and string annotations, which the fixers must treat as uses."""
    sources = ['__all__ = ["A"]\n__all__ += ["B"]\n__all__: list = ["C"]\nx: "D" = 1\n'
               'def f(a: "E", *b: "F", c: "List[G]" = 1, **d: "H") -> "I":\n    y: "J"\n'
               'class K:\n    def m(self) -> Optional["L"]: ...\n']
    resolved = list(_resolved(sources, slice(2, None, 6)))
    for tree, checker in resolved:
        assert _named_in_strings(checker.holder_strings) == _strings_of_annotations_and_exports(tree)
    assert _named_in_strings(resolved[0][1].holder_strings) == {*"ABCDEFGHIJL", "List"}


def test_the_resolver_records_every_literal_written_over_several_lines():
    """`noqa_lines` reads a noqa line alone only if no multi-line literal touches it, and an edit
    is requoted inside any f-string: the resolver's records must miss none (strings, bytes,
    f-strings, in every place code can be)."""
    sources = ['x = """a\nb"""\ndef f(a=b"""\n""", *, c: "A\\\nB" = f"""{1}\n"""):\n    lambda: """\n"""\n'
               '@d("""\n""")\nclass C("""\n""".__class__):\n    y: int = ("a"\n         "b")\n'
               'match x:\n    case """\n""":\n        pass\n']
    checked = 0
    for tree, checker in _resolved(sources, slice(2, None, 6)):
        expected = {(node.lineno, node.end_lineno) for node in walk(tree)
                    if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno}
        assert set(checker.multiline_literals) == expected
        joined = {id(node) for node in walk(tree) if isinstance(node, ast.JoinedStr)}
        assert joined == set(map(id, checker.joined_strings))
        checked += bool(expected)
    assert checked > 20


class _NameForAtEveryMarker(Checker):
    """At each `marker()` statement: `name_for` of torch.amp, and what a scan of the module's
    names in their order (the definition: the first that refers to it by then) gives there."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: List[Tuple[object, object]] = []

    def visit_Expr(self, node: ast.Expr) -> None:
        at = (node.lineno, node.col_offset)
        if self.lookup("torch.amp") is None:
            scanned = next((name for name, binding in self.scopes[0].items() if binding.qualname == "torch.amp"
                            and self.lookup(name) is binding and binding.bound_before(*at)), "")
            self.answers.append((self.name_for("torch.amp", at), scanned))
        self.generic_visit(node)


_STATEMENTS = ["import torch.amp as {0}", "from torch import amp as {0}", "{0} = 1", "import torch",
               "if c:\n    import torch.amp as {0}",
               "try:\n    import torch.amp as {0}\nexcept ImportError:\n    {0} = 0",
               "del {0}", "def f():\n    import torch.amp as {0}\n    marker()", "marker()"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_STATEMENTS), st.sampled_from("abc")), max_size=12))
def test_the_name_for_a_module_is_the_first_of_the_module_names_bound_to_it(statements):
    """`name_for` looks up the names bound to a module instead of scanning every name of the
    module per finding (quadratic in a module of thousands of names): the same answer."""
    text = "".join(form.format(name) + "\n" for form, name in statements) + "marker()\n"
    walker = _NameForAtEveryMarker()
    walker.run(ast.parse(text))
    assert walker.answers and all(found == scanned for found, scanned in walker.answers)
