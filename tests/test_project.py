"""Names other modules of a run import from a module keep their import when a fix rewrites its
last use there (issue 21: `import pkg.other` raised ImportError after `fix`)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_no_apex.project import ProjectImports, dotted_suffixes
from helpers import CANONICAL_STEP, run_command
from helpers import COMMAND

UTILS = "from torch.cuda.amp import autocast\n\n\ndef f():\n    with autocast():\n        pass\n"


@pytest.mark.parametrize("importer, other, kept", [
    ("pkg/other.py", "from pkg.utils import autocast\n", True),
    ("pkg/other.py", "from .utils import autocast as ac\n", True),
    ("pkg/sub/deep.py", "from ..utils import autocast\n", True),
    ("main.py", "from pkg.utils import *\n", True),
    ("main.py", "import pkg.utils\nx = pkg.utils.autocast\n", True),
    ("main.py", "from pkg import utils\nx = utils.autocast\n", True),
    ("main.py", "from pkg.utils import f\n", False),
    ("main.py", "from other.utils import autocast\nfrom pkg import helpers\n", False),
    ("main.py", "# from pkg.utils import autocast\n", False),
])
def test_a_name_imported_from_the_module_elsewhere_in_the_run_is_known(tmp_path, importer, other, kept):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for init in ("pkg/__init__.py", "pkg/sub/__init__.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(UTILS)
    (tmp_path / importer).write_text(other)
    project = ProjectImports(sorted(tmp_path.rglob("*.py")))
    assert project.exported(tmp_path / "pkg" / "utils.py")("autocast") is kept


def test_a_module_is_known_by_every_dotted_suffix_of_its_path(tmp_path):
    assert dotted_suffixes(tmp_path / "src" / "pkg" / "utils.py") >= {"utils", "pkg.utils", "src.pkg.utils"}
    assert "pkg" in dotted_suffixes(tmp_path / "pkg" / "__init__.py")


def test_fix_keeps_an_import_another_module_of_the_run_imports_and_both_still_import(tmp_path):
    """The issue's reproducer, run with the real console command and the real interpreter."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(UTILS.replace("from torch", "import torch\nfrom torch"))
    (tmp_path / "pkg" / "other.py").write_text("from pkg.utils import autocast\n")
    result = run_command([*COMMAND, "fix", "."], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    fixed = (tmp_path / "pkg" / "utils.py").read_text()
    assert "from torch.cuda.amp import autocast\n" in fixed and "torch.amp.autocast(" in fixed
    assert "another module of this run imports it from here" in result.stdout
    # the import works where torch is a stand-in with the old names (tests/stub_torch)
    stub = str(Path(__file__).parent / "stub_torch")
    imported = subprocess.run([sys.executable, "-c", "import pkg.other"], cwd=tmp_path, capture_output=True,
                              text=True, env={"PYTHONPATH": f"{stub}:{tmp_path}"})
    assert imported.returncode == 0, imported.stderr
    # alone in its run, nothing says other.py needs it: the import goes, as before
    (tmp_path / "pkg" / "utils.py").write_text(UTILS.replace("from torch", "import torch\nfrom torch"))
    run_command([*COMMAND, "fix", "pkg/utils.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "from torch.cuda.amp import autocast" not in (tmp_path / "pkg" / "utils.py").read_text()


REQUIREMENTS = "torch>=2.4\napex @ git+https://github.com/NVIDIA/apex.git\n"
# a migration fix refuses (amp.master_params read as a value): train.py still imports apex afterwards
REFUSED = ("from apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n"
           "amp.master_params(optimizer).x = 1\n")
MIGRATED = CANONICAL_STEP  # the apex loop the migration knows: train.py needs apex no more


@pytest.mark.parametrize("train, dropped", [(REFUSED, False), (MIGRATED, True), ("import torch\n", True),
                                            ("import importlib\nimportlib.util.find_spec('apex')\n", False),
                                            ('"""Was:\nfrom apex import amp\n"""\nimport torch\n', True)])
def test_the_apex_requirement_goes_only_when_no_module_needs_apex_after_the_run(tmp_path, train, dropped):
    """Issue 21: fix --unsafe-fixes dropped the apex line while train.py, whose migration it
    refused in the same run, still imported apex. requirements.txt sorts before train.py."""
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    (tmp_path / "train.py").write_text(train)
    result = run_command([*COMMAND, "fix", "--unsafe-fixes", "."], cwd=tmp_path, capture_output=True, text=True)
    assert ("NVIDIA/apex" not in (tmp_path / "requirements.txt").read_text()) is dropped, result.stdout
    if not dropped:
        assert "requirements.txt:2: note: the apex requirement stays: train.py still imports apex" in result.stdout


def test_a_module_path_is_resolved_as_pathlib_resolves_it(tmp_path, monkeypatch):
    """ProjectImports.real resolves each directory once: through linked directories and linked
    files, `..`, relative paths and paths that do not exist, it is Path.resolve."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "m.py").write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "pkg")
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "sub" / "m.py")
    monkeypatch.chdir(tmp_path / "pkg")
    project = ProjectImports([])
    for path in ["sub/m.py", "alias.py", "../linked/sub/m.py", "../linked/alias.py", "../linked/sub/..",
                 "missing/x.py", tmp_path / "linked" / "sub" / "m.py", "."]:
        for _ in range(2):  # the second time from the directories it knows
            assert project.real(Path(path)) == Path(path).resolve(), path
