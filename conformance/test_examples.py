"""Every rule's examples, run on the newest releases: the `before` example and each `invalid`
snippet fail or warn exactly as the rule's message says, and the documented `after` runs
without that error or warning."""
from __future__ import annotations

import ast
import re
import warnings

import pytest

from flake8_no_apex.checker import check_tree
from flake8_no_apex.rules import PYTHON_RULES, RULES
from flake8_no_apex.table import DEPRECATED, DISCOURAGED as DISCOURAGED_STATUS, LEGACY
from runtime import SILENT, Outcome, Raises, Warns, run
from scenarios import (
    APEX_ABSENT, DISCOURAGED, LIGHTNING_DEPRECATION, NOT_RUNNABLE, SCENARIOS, TORCH_DEPRECATION,
    TRANSFORMERS_DEPRECATION,
)

IDS = [f"{rule.code}-{rule.title}" for rule in PYTHON_RULES]
# what a library's "is deprecated" is: torch's Python code raises FutureWarning, its C++ bindings
# DeprecationWarning (the autocast state functions) or UserWarning (set_default_tensor_type)
DEPRECATION_CATEGORY = {"torch": (TORCH_DEPRECATION, "DeprecationWarning", "UserWarning"),
                        "lightning": (LIGHTNING_DEPRECATION,),
                        "transformers": (TRANSFORMERS_DEPRECATION,)}


def scenario_of(rule):
    return SCENARIOS[(rule.code, rule.title)]


def test_every_rule_has_a_scenario_for_each_example():
    assert set(SCENARIOS) == {(rule.code, rule.title) for rule in RULES}
    for rule in PYTHON_RULES:
        assert len(scenario_of(rule).invalid) == len(rule.invalid), rule.title


def rule_message(rule, source: str) -> str:
    return next(f.message for f in check_tree(ast.parse(source)) if f.rule is rule)


def expected_from_message(rule, message: str):
    """What the newest release must do with the example, read off the rule's own message."""
    status = rule.timeline.status
    if " was removed in " in message:
        return Raises
    if status == DEPRECATED:
        return Warns(DEPRECATION_CATEGORY[rule.timeline.library][0], "")
    if status == DISCOURAGED_STATUS:
        return DISCOURAGED
    if status == LEGACY:
        return SILENT
    raise AssertionError(f"no runtime claim in {message!r}")


# Words of the APIs the rules cover, to tell their warnings from a library's own internal ones (Lightning
# 2.6 trips over a torch pytree deprecation while training: not the user's code, not a rule's business).
_AMP_WORDS = re.compile(r"amp|apex|autocast|GradScaler|custom_[fb]wd|precision|Precision|fp16|half_|bf16|AMPType")


def deprecation_warnings(outcome: Outcome) -> list:
    """Warnings that tell the user to change code: the kind a rule's fix must not leave. Those
    raised by the program itself count, and those about the APIs the rules cover."""
    return [w for w in outcome.warnings if (issubclass(w.category, (FutureWarning, DeprecationWarning))
            and (w.filename.startswith("<") or _AMP_WORDS.search(str(w.message)))) or DISCOURAGED.matches(w)]


def assert_behaves(outcome: Outcome, expected) -> None:
    if isinstance(expected, Raises):
        assert isinstance(outcome.error, expected.error), outcome.describe()
        assert re.search(expected.text, str(outcome.error)), outcome.describe()
    elif isinstance(expected, Warns):
        assert outcome.error is None, outcome.describe()
        assert outcome.warned(expected), outcome.describe()
    else:
        assert expected is SILENT
        assert outcome.error is None and not deprecation_warnings(outcome), outcome.describe()


@pytest.mark.parametrize("rule", PYTHON_RULES, ids=IDS)
def test_before_fails_or_warns_as_the_message_says(rule):
    scenario = scenario_of(rule)
    message = rule_message(rule, rule.before)
    if scenario.before is APEX_ABSENT:
        # NVIDIA apex is not installable here: the claim rests on the cited sources
        assert scenario.verdict != "running"
    else:
        claimed = expected_from_message(rule, message)
        if claimed is Raises:
            assert isinstance(scenario.before, Raises), message
        else:
            assert claimed == scenario.before or (
                isinstance(claimed, Warns) and isinstance(scenario.before, Warns)
                and scenario.before.category in DEPRECATION_CATEGORY[rule.timeline.library]), message
    assert_behaves(run(rule.before, scenario.prelude, scenario.epilogue), scenario.before)


INVALID = [(rule, i) for rule in PYTHON_RULES for i in range(len(rule.invalid))
           if scenario_of(rule).invalid[i] != NOT_RUNNABLE]


@pytest.mark.parametrize("rule, index", INVALID, ids=[f"{r.code}-{r.title}-{i}" for r, i in INVALID])
def test_invalid_snippets_fail_or_warn_alike(rule, index):
    scenario = scenario_of(rule)
    expected = scenario.invalid[index]
    if isinstance(scenario.before, Raises) and scenario.before is not APEX_ABSENT:
        assert isinstance(expected, Raises), "a removed usage fails in every spelling"
    assert_behaves(run(rule.invalid[index], scenario.prelude), expected)  # the epilogue runs the `before`


@pytest.mark.parametrize("rule", PYTHON_RULES, ids=IDS)
def test_after_runs_without_the_error_or_warning(rule):
    scenario = scenario_of(rule)
    outcome = run(rule.after, scenario.prelude, scenario.epilogue)
    assert outcome.error is None, outcome.describe()
    assert not deprecation_warnings(outcome), outcome.describe()


def test_the_suite_sees_warnings_that_python_would_hide():
    """`run` records repeated warnings: a second identical example still shows its warning."""
    before = next(rule for rule in PYTHON_RULES if rule.code == "APX203").before
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        outcomes = [run(before, "import torch\n") for _ in range(2)]
    assert all(o.warned(Warns("FutureWarning", "GradScaler")) for o in outcomes)
