"""End-to-end runs of the real flake8 binary with the installed plugin."""
from __future__ import annotations

import subprocess

import re
import sys
from pathlib import Path

import pytest

from helpers import run_command

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLE = Path(__file__).parents[1] / "examples" / "legacy_train.py"


def flake8(*args: str, stdin: str = None) -> subprocess.CompletedProcess:
    return run_command(
        [sys.executable, "-m", "flake8", "--isolated", "--format=%(row)d:%(col)d:%(code)s", *args],
        capture_output=True, text=True, input=stdin, check=False,
    )


def found(*args: str, stdin: str = None) -> set:
    result = flake8(*args, stdin=stdin)
    assert result.returncode in (0, 1), result.stderr
    return {(int(r), int(c), code) for r, c, code in (line.split(":") for line in result.stdout.split())}


def expected(path: Path) -> set:
    """Inline expectations: `# expect: APX201@5 APX203@16` (code@1-based column)."""
    wanted = set()
    for row, line in enumerate(path.read_text().splitlines(), 1):
        match = re.search(r"# expect: (.*)$", line)
        for token in match.group(1).split() if match else ():
            code, col = token.split("@")
            wanted.add((row, int(col), code))
    return wanted


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_fixture_expectations(fixture):
    assert found("--select", "APX", str(fixture)) == expected(fixture)


def test_fixtures_expect_every_code():
    codes = {code for fixture in FIXTURES.glob("*.py") for _, _, code in expected(fixture)}
    from flake8_no_apex.rules import CODES

    # APX108 is covered by its rule examples; APX109 is about dependency files, not modules
    assert set(CODES) - codes == {"APX108", "APX109"}


def test_version_lists_the_plugin():
    result = run_command([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "flake8-no-apex: 0.1.0" in result.stdout


def test_maintained_apex_parts_are_off_by_default():
    path = str(FIXTURES / "apex_training.py")
    default = {code for _, _, code in found(path)}
    assert "APX001" in default and "APX107" not in default
    assert "APX107" in {code for _, _, code in found("--extend-select", "APX107", path)}
    assert "APX107" in {code for _, _, code in found("--select", "APX", path)}


def test_working_precision_aliases_are_off_by_default():
    """`precision=32`/`64` are documented Lightning 2.x values that never warn: reporting them by
    default was noise on working code (issue 21); APX010 is opt-in, the discouraged 16 stays on."""
    source = "import pytorch_lightning as pl\nt = pl.Trainer(precision=16 if 1 else 32)\nu = pl.Trainer(precision=64)\n"
    assert {code for _, _, code in found("-", stdin=source)} == {"APX008"}
    assert {code for _, _, code in found("--extend-select", "APX010", "-", stdin=source)} == {"APX008", "APX010"}


def test_noqa(tmp_path):
    source = tmp_path / "noqa.py"
    source.write_text(
        "import pytorch_lightning as pl\n"
        "a = pl.Trainer(amp_backend='apex')  # noqa: APX002\n"
        "b = pl.Trainer(amp_backend='apex')  # noqa: APX201\n"
        "c = pl.Trainer(amp_backend='apex')  # noqa\n"
    )
    assert found("--select", "APX", str(source)) == {(3, 16, "APX002")}


def test_stdin_with_display_name():
    source = "from apex import amp\n"
    assert found("--select", "APX", "--stdin-display-name=train.py", "-", stdin=source) == {(1, 18, "APX001")}


def test_parallel_run_over_a_tree():
    everything = set().union(*(expected(f) for f in FIXTURES.glob("*.py")))
    result = flake8("--select", "APX", "-j", "2", "--format=%(path)s:%(row)d:%(col)d:%(code)s", str(FIXTURES))
    rows = result.stdout.split()
    assert len(rows) == len(everything)


def test_shipped_example_reports_each_family():
    codes = {code for _, _, code in found("--select", "APX", str(EXAMPLE))}
    assert {"APX001", "APX101", "APX102", "APX002", "APX008", "APX201", "APX203", "APX301"} <= codes


def test_syntax_error_is_flake8s_not_ours(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from apex import amp\ndef f(:\n")
    result = flake8(str(broken))
    assert "E999" in result.stdout and "Traceback" not in result.stderr


def test_stdin_honours_noqa():
    source = "from apex import amp  # noqa: APX001\nimport torch.cuda.amp\n"
    assert found("--select", "APX", "--stdin-display-name=src/train.py", "-", stdin=source) == set()


def test_verbose_run_says_where_the_targets_come_from(tmp_path):
    """`flake8 -v` shows the version targets read from the project's metadata (only the
    requirements of the libraries the rules know are parsed; the others are skipped by name)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["numpy>=2", "torch>=2.1"]\n')
    (tmp_path / "train.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    result = flake8("-v", "--select", "APX", str(tmp_path / "train.py"))
    assert f"targets for {tmp_path}: torch>=2.1 from {tmp_path / 'pyproject.toml'}" in result.stderr
