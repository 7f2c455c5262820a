"""The README is generated from the rule table and states commands that CI really runs."""
from __future__ import annotations

import re
from pathlib import Path

from flake8_no_apex import docs
from flake8_no_apex.rules import CODES, RULES

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_generated_rule_docs_are_current():
    assert docs.render_into(README) == README, "run: python -m flake8_no_apex.docs README.md"


def test_every_code_has_an_anchor_and_every_row_its_example():
    for code in CODES:
        assert f"\n### {code}\n" in README
    for rule in RULES:
        assert rule.before.rstrip() in README and rule.after.rstrip() in README


def commands() -> list:
    return re.findall(r"```\n(pip install [^\n]+)\n```", README)


def test_readme_has_the_two_set_up_commands():
    run, test = commands()
    assert "flake8" in run and "examples/legacy_train.py" in run
    assert test == "pip install -e '.[test]' && pytest"


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands()[1] in ci


def _cited_rows(source: str) -> list:
    """Row ids a rule cites: "PL-05, LF-01", ranges like "AX-01..AX-03" and a trailing note."""
    rows = []
    for first, last in re.findall(r"([A-Z]{2}-\d\d)(?:\.\.([A-Z]{2}-\d\d))?", source):
        if last:
            prefix = first[:3]
            rows += [f"{prefix}{n:02d}" for n in range(int(first[3:]), int(last[3:]) + 1)]
        else:
            rows.append(first)
    return rows


def test_every_cited_timeline_row_is_in_the_shipped_timeline():
    timeline = (ROOT / "docs" / "timeline.md").read_text(encoding="utf-8")
    for rule in RULES:
        cited = _cited_rows(rule.timeline.source)
        assert cited, rule.title
        for row in cited:
            assert f"\n| {row} |" in timeline, f"{rule.code} cites {row}, which docs/timeline.md lacks"
    assert "shared/" not in README, "users do not have the steering repository's files"
