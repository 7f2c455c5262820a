"""Every plan a front end is offered is one `fix` would apply: for the fixtures, the examples and the
apex migration scripts, at targets from the oldest floor the rules support to the newest, each
fix that `check --output-format json` (the real console script) emits compiles applied alone, and
`fix` of the result writes exactly what `fix` of the original writes."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_no_apex.fixer import fix_text
from flake8_no_apex.targets import parse_option

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("tests/fixtures/*.py"), *ROOT.glob("examples/*.py"),
                *ROOT.glob("tests/apex_migration/*.py")])
# the oldest release each family's fixes are spelled for, the boundaries between, and the newest
TARGETS = ["torch=1.12,lightning=1.6,transformers=4.13", "torch=2.2,lightning=1.9,transformers=4.27",
           "torch=2.3,lightning=2.0,transformers=5.0", "torch=2.4,lightning=2.1.1,transformers=5.8", ""]
CONSOLE_SCRIPT = shutil.which("flake8-no-apex", path=str(Path(sys.executable).parent))


def applied(text: str, edits) -> str:
    """The text with JSON edits (1-based lines and columns in characters) applied."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position) -> int:
        return offsets[position["line"] - 1] + position["column"] - 1

    out, last = [], 0
    for edit in sorted(edits, key=lambda e: offset(e["start"])):
        start, end = offset(edit["start"]), offset(edit["end"])
        out += [text[last:start], edit["content"]]
        last = end
    return "".join(out) + text[last:]


@pytest.mark.parametrize("targets", TARGETS, ids=lambda t: t or "newest")
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_plan_check_emits_compiles_and_is_the_one_fix_applies(path, targets, tmp_path):
    text = path.read_text(encoding="utf-8")
    copy = tmp_path / path.name
    copy.write_text(text, encoding="utf-8")
    command = [CONSOLE_SCRIPT, "check", "--output-format", "json", "--select", "APX", "--no-cache", copy.name]
    if targets:
        command += ["--apex-target-versions", targets]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    floors = parse_option(targets).floors if targets else {}
    plans = [item["fix"] for item in json.loads(result.stdout) if item["fix"]["edits"]]
    for plan in plans:
        unsafe = plan["grade"] != "safe"
        once = applied(text, plan["edits"])
        compile(once, str(path), "exec", dont_inherit=True)
        assert fix_text(once, floors, unsafe=unsafe).text == fix_text(text, floors, unsafe=unsafe).text, plan
