"""Every replacement the tool suggests or writes exists where it says, and accepts exactly the
arguments it is given there (`inspect.signature(...).bind`)."""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Iterator, Optional, Tuple

import pytest

from flake8_no_apex.checker import check_tree
from flake8_no_apex.fixer import fix_text
from flake8_no_apex.rules import PYTHON_RULES
from flake8_no_apex.spellings import SPELLINGS, spell

# Where a bare class name in advice lives (Lightning's messages name the class the project imports).
BARE_NAMES = ("lightning.pytorch.plugins", "lightning.fabric.plugins", "lightning.pytorch")
LIBRARIES = ("torch", "lightning", "pytorch_lightning", "lightning_fabric", "lightning_utilities", "transformers",
             "accelerate")


def resolve(dotted: str) -> object:
    """The object a dotted name refers to, importing the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(dotted)


def resolve_bare(name: str) -> object:
    for module in BARE_NAMES:
        found = getattr(importlib.import_module(module), name, None)
        if found is not None:
            return found
    raise AttributeError(f"{name} is in none of {BARE_NAMES}")


def dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def bind(function: object, call: ast.Call) -> None:
    """Bind the call's arguments (values do not matter, names and counts do) to the signature."""
    args = [object() for a in call.args if not isinstance(a, ast.Starred)]
    kwargs = {k.arg: object() for k in call.keywords if k.arg is not None}
    try:
        signature = inspect.signature(function)
    except ValueError:  # a builtin without one (torch.ones): existence is what was checked
        return
    if inspect.isclass(function):
        signature = inspect.signature(function.__init__)
        args = [object(), *args]  # self
    signature.bind(*args, **kwargs)


def calls_in_module(text: str) -> Iterator[Tuple[str, ast.Call]]:
    """(qualified callee, call) for calls of library objects, through the module's imports."""
    tree = ast.parse(text)
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                names[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = dotted(node.func)
            if callee:
                head, _, rest = callee.partition(".")
                qualified = names.get(head, "") + (f".{rest}" if rest else "")
                if qualified.split(".")[0] in LIBRARIES:
                    yield qualified, node


def calls_in_text(text: str) -> Iterator[ast.Call]:
    """Call expressions written in prose, such as advice: `torch.amp.autocast("cuda", enabled=x)`."""
    for match in re.finditer(r"@?([A-Za-z_][\w.]*)\(", text):
        depth, start = 0, match.start(1)
        for end in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                try:
                    expression = ast.parse(text[start:end + 1], mode="eval").body
                except SyntaxError:
                    break
                if isinstance(expression, ast.Call):
                    yield expression
                break


def check_call(call: ast.Call, callee: Optional[str] = None) -> None:
    callee = callee or dotted(call.func)
    function = resolve(callee) if "." in callee else resolve_bare(callee)
    if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in call.args):
        return  # "..." stands for the user's arguments: existence is what is claimed
    bind(function, call)


def _written(rule) -> Iterator[Tuple[str, str]]:
    """The documented `after`, and each fix that removes the rule's findings (a safe fix that only
    mends a neighbour, such as precision=16 beside amp_backend, leaves code that still fails)."""
    yield "after", rule.after
    for kind, unsafe in (("safe fix", False), ("unsafe fix", True)):
        result = fix_text(rule.before, unsafe=unsafe)
        if result.text != rule.before and not any(f.rule is rule for f in result.remaining):
            yield kind, result.text


WRITTEN = [(f"{rule.code}-{rule.title}-{kind}", text) for rule in PYTHON_RULES for kind, text in _written(rule)]


@pytest.mark.parametrize("name, text", WRITTEN, ids=[name for name, _ in WRITTEN])
def test_written_calls_bind_to_the_real_signatures(name, text):
    for callee, call in calls_in_module(text):
        check_call(call, callee)


ADVICE = [(f"{rule.code}-{rule.title}-{i}", rule, source) for rule in PYTHON_RULES
          for i, source in enumerate((rule.before, *rule.invalid))]


@pytest.mark.parametrize("name, rule, source", ADVICE, ids=[name for name, _, _ in ADVICE])
def test_advice_names_what_exists(name, rule, source):
    messages = [f.message for f in check_tree(ast.parse(source)) if f.rule is rule]
    for message in messages:
        advice = message.split("; ", 1)[1]
        for call in calls_in_text(advice):
            callee = dotted(call.func)
            if callee and (callee.split(".")[0] in LIBRARIES or callee[0].isupper()):
                check_call(call)
        for reference in re.findall(r"\b(?:torch|lightning_utilities)(?:\.\w+)+", advice):
            resolve(reference)


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_newest_spellings_exist_and_bind(name):
    text = spell({})[name]
    calls = list(calls_in_text(text))
    if calls:
        for call in calls:
            check_call(call)
    else:
        resolve_bare(text) if text.isidentifier() and text[0].isupper() else None
        assert text.isidentifier() or text.startswith('"'), text
