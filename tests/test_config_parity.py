"""The same flake8 configuration means the same thing to `flake8` (with this plugin) and to
`flake8-no-apex check` and `fix`: a matrix of configs run through the real flake8 binary."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from flake8_no_apex.cli import parser

pytestmark = pytest.mark.slow  # the real flake8 and check over one tree, under a matrix of configs

FILES = {
    "train.py": """\
        import torch
        from apex import amp
        from apex.optimizers import FusedAdam

        optimizer = FusedAdam(params)
        with torch.cuda.amp.autocast():
            pass
        scaler = torch.cuda.amp.GradScaler()  # noqa: APX201
        other = torch.cuda.amp.GradScaler()  # noqa:APX2
        bare = torch.cuda.amp.GradScaler()  # noqa
        model, optimizer = amp.initialize(model, optimizer)
        """,
    "pkg/legacy.py": """\
        import pytorch_lightning as pl

        trainer = pl.Trainer(amp_backend="apex", amp_level="O2", precision=16)
        other = pl.Trainer(
            amp_backend="apex",
            precision=16,
        )  # noqa: APX002
        text = pl.Trainer(amp_level='''O2
        ''', precision=16)  # noqa: APX003
        """,
    "tests/test_amp.py": """\
        import torch

        with torch.cuda.amp.autocast():
            pass
        """,
    # a file-level `# flake8: noqa` skips the file (issue 21: check reported it); after code it does not
    "generated.py": """\
        # Flake8: NOQA
        import torch

        scaler = torch.cuda.amp.GradScaler()
        """,
    "not_skipped.py": """\
        import torch  # flake8: noqa

        scaler = torch.cuda.amp.GradScaler()
        """,
}
CONFIGS = [
    "",
    "select = E,F,W,C90",
    "extend-select = B950",
    "extend-select = APX201",
    "select = APX",
    "ignore = APX2",
    "extend-ignore = APX001,APX10",
    "extend-select = APX107,APX108",
    "select = APX1\nextend-ignore = APX107",
    "per-file-ignores =\n    tests/*:APX201\n    pkg/legacy.py:APX0,APX2\n    train.py:APX1",
    "extend-ignore = APX0\nper-file-ignores = pkg/*.py:APX003",
]


def _tree(root: Path, config: str) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    (root / "setup.cfg").write_text("[flake8]\n" + config + "\n")
    return root


def _flake8(root: Path) -> set:
    result = subprocess.run([sys.executable, "-m", "flake8", "--format=%(path)s:%(row)d:%(col)d:%(code)s", "."],
                            cwd=root, capture_output=True, text=True, check=False)
    assert result.returncode in (0, 1), result.stderr
    rows = (line.split(":") for line in result.stdout.split())
    return {(os.path.normpath(p), int(r), int(c), code) for p, r, c, code in rows if code.startswith("APX")}


@pytest.fixture(scope="module")
def flake8_runs(tmp_path_factory):
    """Each config's tree and what the real flake8 binary reports there (run side by side)."""
    trees = [_tree(tmp_path_factory.mktemp("parity"), config) for config in CONFIGS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(CONFIGS, zip(trees, pool.map(_flake8, trees))))


def run(root: Path, *argv: str) -> str:
    """The command in this process (fast), from the tree, as if run there."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        args = parser().parse_args(argv)
        code = args.run(args, out=out, err=err)
    finally:
        os.chdir(cwd)
    assert code in (0, 1), err.getvalue()
    return out.getvalue()


def check_findings(root: Path) -> set:
    rows = re.findall(r"^(.+?):(\d+):(\d+): (APX\d+) ", run(root, "check", "."), re.MULTILINE)
    return {(os.path.normpath(p), int(r), int(c), code) for p, r, c, code in rows}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.replace("\n", "; ") or "defaults")
def test_check_reports_what_flake8_reports(flake8_runs, config):
    tree, expected = flake8_runs[config]
    assert check_findings(tree) == expected
    if config == "":
        assert {code for *_, code in expected} >= {"APX001", "APX101", "APX201", "APX002", "APX003"}


def test_fix_leaves_what_per_file_ignores_excludes(tmp_path):
    (tmp_path / "tests").mkdir()
    source = "import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n"
    (tmp_path / "tests" / "test_amp.py").write_text(source)
    (tmp_path / "main.py").write_text(source)
    (tmp_path / "setup.cfg").write_text("[flake8]\nper-file-ignores = tests/*:APX201\n")
    run(tmp_path, "fix", ".")
    assert (tmp_path / "tests" / "test_amp.py").read_text() == source
    assert "torch.amp.autocast" in (tmp_path / "main.py").read_text()
