"""End-to-end runs of the `flake8-no-apex` console script on temporary trees."""
from __future__ import annotations

import difflib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_no_apex.cli import InputError, write_atomically

EXAMPLE = Path(__file__).parents[1] / "examples" / "legacy_train.py"
SAFE_ONLY = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast(False):\n    pass\n"
SAFE_FIXED = (
    'import torch\n\nscaler = torch.amp.GradScaler("cuda")\nwith torch.amp.autocast("cuda", enabled=False):\n    pass\n'
)


def run(cwd, *args, module=False):
    command = [sys.executable, "-m", "flake8_no_apex"] if module else [shutil.which("flake8-no-apex")]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(EXAMPLE.read_text())
    (tmp_path / "pkg" / "amp_only.py").write_text(SAFE_ONLY)
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "vendored.py").write_text(SAFE_ONLY)
    (tmp_path / "notes.txt").write_text("torch.cuda.amp.autocast()")
    return tmp_path


def snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_diff_shows_the_change_and_writes_nothing(tree):
    before = snapshot(tree)
    result = run(tree, "fix", "--diff", ".")
    assert result.returncode == 1
    assert "--- a/pkg/amp_only.py\n+++ b/pkg/amp_only.py\n" in result.stdout
    assert '+scaler = torch.amp.GradScaler("cuda")\n' in result.stdout
    assert "APX101" not in result.stdout and "APX101" in result.stderr  # stdout is a clean patch
    assert "2 files would be fixed" in result.stderr
    assert snapshot(tree) == before


def test_fix_writes_safe_fixes_then_reports_what_needs_a_person(tree):
    result = run(tree, "fix", ".")
    assert result.returncode == 1
    assert (tree / "pkg" / "amp_only.py").read_text() == SAFE_FIXED
    assert (tree / ".venv" / "lib" / "vendored.py").read_text() == SAFE_ONLY  # never inside a virtualenv
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith("2 files fixed (") and "findings need manual changes" in summary
    assert "fixable with --unsafe-fixes" in summary
    assert "pkg/train.py:15:24: APX101 apex.amp.initialize(...)" in result.stdout
    assert "Replace apex.amp with native AMP:" in result.stdout
    for path in tree.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")
    again = run(tree, "fix", "--diff", ".")
    assert again.stdout == "" and again.stderr.strip().splitlines()[-1].startswith("0 files would be fixed")


def test_unsafe_fixes_go_further(tree):
    run(tree, "fix", "--unsafe-fixes", ".")
    text = (tree / "pkg" / "train.py").read_text()
    assert 'pl.Trainer(max_epochs=args.epochs, precision="16-mixed")' in text
    assert 'TrainingArguments("out", fp16=True)' in text


def test_clean_tree_exits_zero(tmp_path):
    (tmp_path / "ok.py").write_text(SAFE_FIXED)
    result = run(tmp_path, "fix", ".", module=True)
    assert result.returncode == 0 and (tmp_path / "ok.py").read_text() == SAFE_FIXED


def test_select_ignore_and_exclude(tree):
    run(tree, "fix", "--select", "APX3", "--exclude", "amp_only.py", ".")
    assert (tree / "pkg" / "amp_only.py").read_text() == SAFE_ONLY
    assert "half_precision_backend" not in (tree / "pkg" / "train.py").read_text()
    assert "GradScaler(enabled=use_amp)" in (tree / "pkg" / "train.py").read_text()
    run(tree, "fix", "--ignore", "APX20", "pkg/amp_only.py")
    assert (tree / "pkg" / "amp_only.py").read_text() == SAFE_ONLY


def test_targets_option(tmp_path):
    (tmp_path / "a.py").write_text(SAFE_ONLY)
    run(tmp_path, "fix", "--apex-target-versions", "torch=2.1", "a.py")
    assert "torch.cuda.amp.GradScaler()" in (tmp_path / "a.py").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["fix", "--apex-target-versions", "jax=1"], "expected LIBRARY=VERSION"),
        (["fix", "missing.py"], "no such file"),
        (["fix", "--select", "APX9"], "no code starts with"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_two(tmp_path, args, message):
    result = run(tmp_path, *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_unparsable_file_is_an_input_error_and_others_still_get_fixed(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    result = run(tmp_path, "fix", ".")
    assert result.returncode == 2 and "broken.py: cannot parse" in result.stderr
    assert (tmp_path / "ok.py").read_text() == SAFE_FIXED


def test_mode_encoding_cookie_bom_and_newlines_survive(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\r\nimport torch\r\nname = 'café'; s = torch.cuda.amp.GradScaler()\r\n"
                      .encode("latin-1"))
    os.chmod(latin, 0o750)
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport torch\nwith torch.cpu.amp.autocast():\n    pass\n")
    run(tmp_path, "fix", ".")
    assert latin.read_bytes() == (
        "# -*- coding: latin-1 -*-\r\nimport torch\r\nname = 'café'; s = torch.amp.GradScaler(\"cuda\")\r\n"
    ).encode("latin-1")
    assert stat.S_IMODE(latin.stat().st_mode) == 0o750
    assert bom.read_bytes() == b'\xef\xbb\xbfimport torch\nwith torch.amp.autocast("cpu"):\n    pass\n'
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_file_changed_on_disk_meanwhile_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    original = path.read_bytes()
    path.write_text("x = 2  # edited by the user meanwhile\n")
    with pytest.raises(InputError, match="changed on disk"):
        write_atomically(path, original, b"x = 3\n")
    assert path.read_text() == "x = 2  # edited by the user meanwhile\n"


def test_noqa_is_respected_by_the_command(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ns = torch.cuda.amp.GradScaler()  # noqa: APX203\n")
    result = run(tmp_path, "fix", ".")
    assert result.returncode == 0
    assert "GradScaler()  # noqa" in (tmp_path / "a.py").read_text()


def test_diff_is_exactly_what_fix_writes(tree, tmp_path_factory):
    copy = tmp_path_factory.mktemp("copy")
    shutil.copytree(tree / "pkg", copy / "pkg")
    patch = run(tree, "fix", "--diff", "pkg").stdout
    run(copy, "fix", "pkg")
    expected = ""
    for name in ("pkg/amp_only.py", "pkg/train.py"):
        before, after = (tree / name).read_text(), (copy / name).read_text()
        expected += "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                 fromfile=f"a/{name}", tofile=f"b/{name}"))
    assert patch == expected and patch
