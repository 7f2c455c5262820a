"""Never crash on valid Python: generated programs and the whole standard library."""
from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flake8_no_apex.checker import check_tree
from flake8_no_apex.rules import PYTHON_RULES

pytestmark = pytest.mark.slow  # hypothesis runs and the whole standard library


# CI also fixes generated programs for a minute (scripts/fuzz.py): a smaller sample here.
# hypothesmith compiles what it generates, and Python 3.13 warns about odd but valid code
# (`1()`: "'int' object is not callable"): not this tool's output, so not shown.
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=75, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs_do_not_crash(source):
    check_tree(ast.parse(source))


SNIPPETS = [s for rule in PYTHON_RULES for s in (rule.before, rule.after, *rule.invalid, *rule.valid)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=5), st.integers(0, 3))
def test_rule_snippets_nested_in_scopes_do_not_crash(parts, depth):
    """Rule snippets moved into functions, classes and try blocks."""
    source = "\n".join(parts)
    for level in range(depth):
        wrapper = ("def f():\n", "class C:\n", "try:\n")[level % 3]
        tail = "" if wrapper != "try:\n" else "except ImportError:\n    pass\n"
        source = wrapper + "".join("    " + line + "\n" for line in source.splitlines()) + "    pass\n" + tail
    check_tree(ast.parse(source))


def test_standard_library_does_not_crash():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    checked = 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        check_tree(tree)
        checked += 1
    assert checked > 100
