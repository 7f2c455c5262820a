"""The docs: the rules reference is generated from the rule table, the README is what a
newcomer needs and states commands that CI really runs, every link resolves, and
docs/configuration.md documents every option of the real binary and every config key."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers import CONSOLE_SCRIPT

from flake8_no_apex import docs
from flake8_no_apex.config import KEYS
from flake8_no_apex.rules import CODES, RULES

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
RULES_PAGE = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_generated_rule_docs_are_current():
    assert docs.render_into(RULES_PAGE) == RULES_PAGE, "run: python -m flake8_no_apex.docs"


def test_every_code_has_an_anchor_and_every_row_its_example():
    for code in CODES:
        assert f"\n### {code}\n" in RULES_PAGE
    for rule in RULES:
        assert rule.before.rstrip() in RULES_PAGE and rule.after.rstrip() in RULES_PAGE


def test_the_readme_is_for_the_first_ten_minutes():
    """No rule docs to scroll past: install, the two commands, check and fix, config, pre-commit,
    CI and editors, then a link per topic."""
    assert "\n### APX" not in README and len(README.splitlines()) < 200
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert headings == ["Install", "Use", "Configure", "pre-commit", "CI", "Editors", "Documentation"]
    for page in PAGES[1:]:
        assert f"]({page.relative_to(ROOT).as_posix()})" in README, f"the README does not link {page.name}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {_slug(heading) for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_relative_link_resolves_to_a_file_and_a_heading():
    checked = 0
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(((?:https?://)?[\w./-]*(?:#[\w-]+)?)\)", text):
            if "://" in target or not target:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.name} links {target}: no such file"
            if anchor:
                assert anchor in _anchors(linked), f"{page.name} links {target}: no such heading"
            checked += 1
    assert checked > 150  # the rules table links every code


def test_no_placeholder_owner_is_left():
    """Not published yet, said plainly: no made-up repository URL to copy."""
    texts = {page.name: page.read_text(encoding="utf-8") for page in PAGES}
    for name in ("action.yml", ".pre-commit-hooks.yaml", "pyproject.toml", "flake8_no_apex/cli.py"):
        texts[name] = (ROOT / name).read_text(encoding="utf-8")
    for name, text in texts.items():
        assert "github.com/ORG/" not in text and "<this repository>" not in text, name
    assert "not published yet" in README


def _help(command: str) -> str:
    return subprocess.run([CONSOLE_SCRIPT, command, "--help"], capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "200"}).stdout


def _documented_options() -> dict:
    """option -> the commands its rows of the options table name."""
    table = CONFIGURATION.split("## Command-line options", 1)[1].split("\n## ", 1)[0]
    documented: dict = {}
    for row in re.findall(r"^\| (`-.+?) \| (.+?) \|", table, re.MULTILINE):
        for option in re.findall(r"`(-[-\w]+)`", row[0]):
            documented.setdefault(option, set()).update(c.strip() for c in row[1].split(","))
    return documented


@pytest.mark.parametrize("command", ["check", "fix"])
def test_configuration_documents_every_option_of_the_real_binary(command):
    options = _help(command).split("options:", 1)[1]
    offered = set(re.findall(r"(?<![\w-])(--?[a-z][-a-z]*)", options)) - {"-h", "--help"}
    documented = {option for option, commands in _documented_options().items() if command in commands}
    assert offered == documented


def test_configuration_documents_every_config_key_and_each_is_read(tmp_path):
    table = CONFIGURATION.split("## Config keys", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `([-a-z]+)` \|", table, re.MULTILINE)
    assert sorted(keys) == sorted(KEYS)
    values = {"apex-target-versions": '"auto"', "docs-url": '"docs/rules.md"', "check-docs": "false",
              "disable-noqa": "false", "per-file-ignores": '"a.py:APX201"', "select": '["APX"]'}
    toml = "".join(f"{key} = {values.get(key, '[]')}\n" for key in keys)
    (tmp_path / "pyproject.toml").write_text(f"[tool.flake8-no-apex]\n{toml}")
    ini = "".join(f"{key} = \n" for key in keys if key not in values)
    (tmp_path / "setup.cfg").write_text(f"[flake8]\n{ini}select = APX\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = subprocess.run([CONSOLE_SCRIPT, "check", "a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr


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
    for page in PAGES:
        assert "shared/" not in page.read_text(encoding="utf-8"), "users do not have the steering repository's files"


def test_the_readme_example_is_what_flake8_prints():
    from helpers import FLAKE8, run_command

    block = re.search(r"```\n\$ (flake8 [^\n]+)\n(.*?)\n\.\.\.\n```", README, re.DOTALL)
    command, shown = block.group(1).split(), block.group(2).splitlines()
    printed = run_command([*FLAKE8, *command[1:]], cwd=ROOT, capture_output=True, text=True)
    assert printed.returncode == 1 and printed.stdout.splitlines()[:len(shown)] == shown
