"""The rule table is complete, and every rule's own examples behave as documented."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from flake8_no_apex.rules import CODES, RULES
from flake8_no_apex.table import LIBRARY_NAMES, Grade
from flake8_no_apex.dependency_files import check_dependencies
from helpers import codes, messages


def codes_in(rule, example: str) -> list:
    """Codes reported for an example in the rule's own language."""
    if rule.language == "requirements":
        return [f.code for f in check_dependencies("requirements.txt", example, {})]
    return codes(example)


RULE_IDS = [f"{rule.code}-{rule.title}" for rule in RULES]


def test_codes_are_the_public_table():
    assert CODES == [
        "APX001", "APX002", "APX003", "APX004", "APX005", "APX006", "APX007", "APX008", "APX009", "APX010",
        "APX101", "APX102", "APX103", "APX104", "APX105", "APX106", "APX107", "APX108", "APX109", "APX110",
        "APX111",
        "APX201", "APX202", "APX203", "APX204", "APX205", "APX206", "APX207",
        "APX301", "APX302", "APX303", "APX304", "APX305", "APX306",
        "APX401", "APX402", "APX403", "APX404", "APX405", "APX501", "APX601",
    ]


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_rule_is_documented(rule):
    assert re.fullmatch(r"APX\d{3}", rule.code)
    assert rule.title and rule.doc.strip() and rule.before.strip() and rule.after.strip()
    assert rule.timeline.library in LIBRARY_NAMES
    assert rule.timeline.source, "every row cites its docs/timeline.md entry"
    assert rule.timeline.deprecated_in or rule.timeline.removed_in or rule.timeline.removed_on or rule.default_off
    assert isinstance(rule.fix.grade, Grade) and rule.fix.why.strip()
    assert rule.match


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_before_and_invalid_examples_report_the_code(rule):
    for example in (rule.before, *rule.invalid):
        assert rule.code in codes_in(rule, example), example


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_after_and_valid_examples_do_not(rule):
    for example in (rule.after, *rule.valid):
        if rule.language == "python":
            ast.parse(example)
        assert rule.code not in codes_in(rule, example), example


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_the_documented_after_is_clean_of_every_code(rule):
    """What the docs tell people to write reports nothing else either (APX006's after, a probe of
    `apex.amp`, was itself an APX001 finding)."""
    assert codes_in(rule, rule.after) == [], rule.after


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_message_is_one_line_in_the_house_style(rule):
    if rule.language == "python":
        message = next(m for m in messages(rule.before) if m.startswith(rule.code + " "))
    else:
        message = check_dependencies("requirements.txt", rule.before, {})[0].message
    assert "\n" not in message
    what, advice = message.split("; ", 1)
    assert re.search(r" (is deprecated since|was removed in|was removed from NVIDIA apex on|is removed in|"
                     r"is maintained|"
                     r"is \"supported for historical reasons but its usage is discouraged\" since|"
                     r"is a legacy spelling \(accepted without a warning\) since)", what), message
    assert advice.split()[0] in {"use", "drop", "remove", "delete", "wrap", "iterate", "keep"}, message


def test_rules_of_a_code_share_its_default():
    for code in CODES:
        assert len({rule.default_off for rule in RULES if rule.code == code}) == 1


FIXABLE = [rule for rule in RULES if rule.fixer is not None or rule.language != "python"]
EXAMPLE_FILE = {"python": "example.py", "requirements": "requirements.txt"}


@pytest.mark.parametrize("rule", FIXABLE, ids=[f"{rule.code}-{rule.title}" for rule in FIXABLE])
def test_the_documented_after_is_exactly_what_fix_writes(rule):
    """The examples are the docs and the tests (Fixit's way): `fix` (with --unsafe-fixes for an
    unsafe rule) turns the `before` into the `after`, character for character, in a file of
    the example's language."""
    from flake8_no_apex.config import Settings
    from flake8_no_apex.engine import Document, Session

    document = Document(Path(EXAMPLE_FILE[rule.language]), rule.before)
    session = Session(Settings(select=["APX", rule.code]))  # an opt-in code too
    assert session.fix(document, unsafe=rule.fix.grade is not Grade.SAFE).text == rule.after


def test_the_code_constants_are_the_tables():
    """`codes.py` lets settings and a warm run name the codes without building the table."""
    from flake8_no_apex import codes, rules

    assert list(codes.CODES) == rules.CODES and list(codes.DEFAULT_OFF) == rules.DEFAULT_OFF
