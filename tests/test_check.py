"""`flake8-no-apex check`, its formats and settings, `rules` and `explain`, and the pre-commit hooks."""
from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import COMMAND, run_with_imports, run_command
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as Sarif

from flake8_no_apex import report
from flake8_no_apex.cli import run_explain, run_rules
from flake8_no_apex.rules import CODES, RULES

ROOT = Path(__file__).parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLE = ROOT / "examples" / "legacy_train.py"


def check(cwd, *args):
    return run_command([*COMMAND, "check", *args], cwd=cwd,
                       capture_output=True, text=True, check=False)


def rows(text):
    return {tuple(line.split(": ", 1)[0].rsplit(":", 2)) + (line.split(": ", 1)[1].split()[0],)
            for line in text.splitlines()}


def test_same_findings_as_flake8_select_apx():
    flake8 = run_command([sys.executable, "-m", "flake8", "--isolated", "--select", "APX", "fixtures"],
                         cwd=FIXTURES.parent, capture_output=True, text=True).stdout
    ours = check(FIXTURES.parent, "--select", "APX", "fixtures")
    assert ours.returncode == 1
    assert rows(ours.stdout) == rows(flake8) and len(rows(flake8)) > 50


def test_findings_are_in_flake8s_order_sorted_by_path(tmp_path):
    for name in ("z.py", "a/x.py", "a/b/y.py", "a_b.py", "m.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import torch\nfrom apex import amp\nscaler = torch.cuda.amp.GradScaler()\n")
    flake8 = run_command([sys.executable, "-m", "flake8", "--isolated", "--select", "APX", "."],
                         cwd=tmp_path, capture_output=True, text=True).stdout
    ours = check(tmp_path, "--select", "APX", "--output-format", "concise").stdout
    places = [line.split(": ", 1)[0] for line in ours.splitlines() if ": APX" in line]
    assert places == [line.split(": ", 1)[0].removeprefix("./") for line in flake8.splitlines()] and len(places) == 10


def test_exit_codes(tmp_path):
    (tmp_path / "clean.py").write_text("import torch\nwith torch.amp.autocast('cuda'):\n    pass\n")
    assert check(tmp_path).returncode == 0
    (tmp_path / "old.py").write_text("from apex import amp\n")
    assert check(tmp_path).returncode == 1
    assert check(tmp_path, "--exit-zero").returncode == 0
    (tmp_path / "unrelated_broken.py").write_text("def f(:\n")  # no rule word: ruled out unparsed
    assert check(tmp_path).returncode == 1
    (tmp_path / "broken.py").write_text("from apex import amp\ndef f(:\n")
    result = check(tmp_path)
    assert result.returncode == 2 and "broken.py:2:7: cannot parse: invalid syntax" in result.stderr
    # a file named on the command line is always parsed, rule word or not
    result = check(tmp_path, "unrelated_broken.py")
    assert result.returncode == 2 and "unrelated_broken.py:1:7: cannot parse: invalid syntax" in result.stderr


def test_json_round_trips_and_carries_fix_edits(tmp_path):
    source = "import torch\n\nwith torch.cuda.amp.autocast(use_amp):\n    pass\n"
    (tmp_path / "a.py").write_text(source)
    output = check(tmp_path, "--format", "json").stdout
    (item,) = json.loads(output)
    assert json.dumps(json.loads(output), indent=2) + "\n" == output
    assert item["path"] == "a.py" and (item["line"], item["column"]) == (3, 6)
    assert (item["end_line"], item["end_column"]) == (3, 29) and item["code"] == "APX201"
    assert item["message"].startswith("torch.cuda.amp.autocast(...) is deprecated")  # the code has its field
    assert item["url"] == "docs/rules.md#apx201" and item["fix"]["grade"] == "safe"
    lines = source.splitlines(keepends=True)
    for edit in sorted(item["fix"]["edits"], key=lambda e: (e["start"]["line"], e["start"]["column"]), reverse=True):
        (line, col), (end_line, end_col) = (edit["start"]["line"], edit["start"]["column"]), (
            edit["end"]["line"], edit["end"]["column"])
        assert line == end_line
        text = lines[line - 1]
        lines[line - 1] = text[:col - 1] + edit["content"] + text[end_col - 1:]
    fixed = "".join(lines)
    ast.parse(fixed)
    assert fixed == ('import torch\n\nwith torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16, '
                     'cache_enabled=True):\n    pass\n')


@pytest.mark.parametrize("name, text, covered", [
    ("requirements.txt", "torch\n  -e git+https://github.com/NVIDIA/apex#egg=apex  # fused\n",
     "-e git+https://github.com/NVIDIA/apex#egg=apex"),
    ("pyproject.toml", '[project]\ndependencies = ["torch", "apex==0.1"]\n', '"apex==0.1"'),
    ("setup.py", 'from setuptools import setup\nsetup(install_requires=["torch", "apex>=0.1"])\n', '"apex>=0.1"'),
    ("environment.yml", "channels: [conda-forge]\ndependencies:\n  - nvidia-apex=0.1\n  - pip\n", "nvidia-apex=0.1"),
    ("config.yaml", "trainer:\n  amp_backend: apex\n", "amp_backend"),
    ("run.sh", "python train.py --fp16_backend apex --fp16\n", "--fp16_backend"),
    ("ds_config.json", '{"amp": {"enabled": true, "opt_level": "O1"}}\n', '"amp"'),
])
def test_findings_outside_python_cover_what_they_are_about(tmp_path, name, text, covered):
    """A requirement, a YAML key, a shell word, a JSON key: the range an editor underlines is the
    text the finding is about, not a point."""
    (tmp_path / name).write_text(text)
    items = json.loads(check(tmp_path, "--format", "json", "--select", "APX").stdout)
    assert items, text
    item = items[0]
    line = text.splitlines()[item["line"] - 1]
    assert item["end_line"] == item["line"]
    assert line[item["column"] - 1:item["end_column"] - 1] == covered


def test_sarif_is_valid_2_1_0_with_rule_metadata(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    document = json.loads(check(tmp_path, "--format", "sarif").stdout)
    Sarif.model_validate(document)  # the SARIF 2.1.0 schema, as a model
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == CODES
    assert all(rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
               for rule in rules)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert not result["message"]["text"].startswith("APX")
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert {r["level"] for r in run["results"]} == {"error", "warning"}
    assert any("fixes" in r for r in run["results"])


def test_github_annotations_follow_the_workflow_command_syntax(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    output = check(tmp_path, "--format", "github").stdout.splitlines()
    pattern = re.compile(r"^::(error|warning|notice) file=train\.py,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
                         r"title=APX\d{3}::APX\d{3} [^\r\n]+$")
    assert output and all(pattern.match(line) for line in output), output
    assert report._escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


@pytest.mark.slow
def test_statistics_and_parallel_jobs(tmp_path):
    """Processes only where they pay: 66 files to analyse use them, 6 stay in one process."""
    for i in range(66):
        shutil.copy(EXAMPLE, tmp_path / f"train{i}.py")
    serial = check(tmp_path, "--statistics", "--no-cache")
    parallel, imported = run_with_imports("check", "-j", "2", "--statistics", "--no-cache", cwd=tmp_path)
    assert serial.stdout == parallel.stdout and "concurrent.futures.process" in imported
    assert re.search(r"^66\s+APX101 apex\.amp\.initialize", serial.stdout, re.MULTILINE)
    for i in range(6, 66):
        (tmp_path / f"train{i}.py").unlink()
    small, imported = run_with_imports("check", "-j", "2", "--no-cache", cwd=tmp_path)
    assert small.returncode == 1 and "concurrent.futures.process" not in imported


def test_parallel_jobs_say_what_one_process_says_of_files_they_check_while_surveying(tmp_path):
    """-j surveys which files pass the pre-filter to decide on processes: the files that do not
    are checked from that one reading, with what one process says of them (errors included)."""
    for i in range(70):
        (tmp_path / f"plain{i}.py").write_text(f"x = {i}\n")
    for i in range(3):
        shutil.copy(EXAMPLE, tmp_path / f"train{i}.py")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")  # not UTF-8, no coding line: cannot read
    (tmp_path / "broken.py").write_text("from apex import amp\ndef f(:\n")
    (tmp_path / "skipped_broken.py").write_text("def f(:\n")  # no rule word: not parsed
    serial = check(tmp_path, "--no-cache", "--format", "json")
    parallel, imported = run_with_imports("check", "-j", "2", "--no-cache", "--format", "json", cwd=tmp_path)
    said = "".join(line for line in parallel.stderr.splitlines(True) if not line.startswith("import time:"))
    assert (serial.returncode, serial.stdout, serial.stderr) == (parallel.returncode, parallel.stdout, said)
    assert serial.returncode == 2 and "latin.py: cannot read" in serial.stderr and "broken.py:2:7" in serial.stderr
    assert "skipped_broken" not in serial.stderr and "concurrent.futures.process" not in imported
    cached = tmp_path / "cache"
    for _ in range(2):  # what the survey checked is cached as a check of one process caches it
        again = check(tmp_path, "-j", "2", "--cache-dir", str(cached), "--format", "json")
        assert (again.returncode, again.stdout, again.stderr) == (serial.returncode, serial.stdout, serial.stderr)


def test_a_cold_check_imports_only_what_it_needs(tmp_path):
    """Checking code that passes the pre-filter but needs no fix imports neither flake8 nor the
    writers, YAML, the process pool, logging or packaging's requirement
    parser (the project's requirements name no library the rules know); nor, without a cache,
    hashlib, nor configparser where no INI file is, nor shutil (argparse's way to the width)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["numpy>=2"]\n')
    (tmp_path / "train.py").write_text("import torch\n\nwith torch.amp.autocast('cuda'):\n    pass\n")
    run, imported = run_with_imports("check", "--no-cache", cwd=tmp_path)
    assert run.returncode == 0 and "flake8_no_apex.engine" in imported
    unwanted = {"flake8", "yaml", "multiprocessing", "logging", "packaging.requirements", "tempfile",
                "difflib", "xml.etree.ElementTree", "signal", "shutil", "configparser", "hashlib"}
    assert not unwanted & imported, unwanted & imported


def test_fixes_that_remove_arguments_and_imports_need_no_concrete_syntax_tree(tmp_path):
    """The fixes take commas, parentheses and comments from Python's tokenizer: a `fix` that drops
    a keyword, an argument's comma and an import's name loads no ast-grep (it is only the test
    extra's oracle), and writes what it used to."""
    (tmp_path / "train.py").write_text(
        "from pytorch_lightning import Trainer\nfrom torch.cuda.amp import GradScaler, autocast\n"
        "trainer = Trainer(gpus=1,  # one\n    amp_backend='native', precision=16)\nscaler = GradScaler()\n")
    run, imported = run_with_imports("fix", "train.py", cwd=tmp_path)
    assert run.returncode == 1 and "1 file fixed (3 fixes), 1 finding needs manual changes" in run.stderr
    assert "ast_grep_py" not in imported and "flake8_no_apex.fixer" in imported
    assert (tmp_path / "train.py").read_text() == (  # the import of `autocast` is the finding left
        "import torch\nfrom pytorch_lightning import Trainer\nfrom torch.cuda.amp import autocast\n"
        "trainer = Trainer(gpus=1,  # one\n    precision=\"16-mixed\")\nscaler = torch.amp.GradScaler(\"cuda\")\n")


def test_noqa_and_config_files(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\nwith torch.cuda.amp.autocast():  # noqa: APX201\n    s = torch.cuda.amp.GradScaler()\n"
    )
    assert rows(check(tmp_path).stdout) == {("a.py", "3", "9", "APX203")}
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-ignore = APX203\n")
    assert check(tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-no-apex]\nextend-ignore = []\napex-target-versions = "torch=2.1"\n'
    )
    assert check(tmp_path).returncode == 0  # GradScaler's replacement needs torch 2.3
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-no-apex]\nselect = ["APX2"]\nextend-ignore = []\n')
    assert rows(check(tmp_path).stdout) == {("a.py", "3", "9", "APX203")}
    assert check(tmp_path, "--ignore", "APX2").returncode == 0  # the command line wins


def test_maintained_apex_parts_are_opt_in(tmp_path):
    (tmp_path / "a.py").write_text("from apex.optimizers import FusedAdam\n")
    assert check(tmp_path).returncode == 0
    assert check(tmp_path, "--extend-select", "APX107").returncode == 1
    assert check(tmp_path, "--select", "APX").returncode == 1


def test_lightning_cli_config_is_reported_line_accurately(tmp_path):
    (tmp_path / "config.yaml").write_text(textwrap.dedent("""\
        seed_everything: 42
        fit:
          trainer:
            max_epochs: 3
            precision: 16
            amp_backend: apex
            amp_level: O2  # noqa: APX003
            plugins:
              - class_path: pytorch_lightning.plugins.ApexMixedPrecisionPlugin
                init_args:
                  amp_level: O2
          model:
            precision: 16
    """))
    (tmp_path / "workflow.yml").write_text("jobs:\n  test:\n    precision: 16\n    amp_backend: apex\n")
    assert rows(check(tmp_path).stdout) == {
        ("config.yaml", "5", "5", "APX008"),
        ("config.yaml", "6", "5", "APX002"),
        ("config.yaml", "9", "21", "APX004"),
        ("config.yaml", "11", "11", "APX003"),
    }


def test_dependency_files_pinning_apex(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.4\napex @ git+https://github.com/NVIDIA/apex.git\napexpy\n")
    (tmp_path / "requirements-gpu.txt").write_text("# gpu\n./wheels/apex-0.1-cp311-cp311-linux_x86_64.whl\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = [\n  "torch",\n  "apex",\n]\n')
    found = rows(check(tmp_path).stdout)
    assert found == {("requirements.txt", "2", "1", "APX109"), ("requirements-gpu.txt", "2", "1", "APX109"),
                     ("pyproject.toml", "5", "3", "APX109")}
    assert "unrelated" in check(tmp_path, "pyproject.toml").stdout


def test_show_targets(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch>=2.1"]\n')
    (tmp_path / "a.py").write_text("import torch\n")
    assert f"targets: torch>=2.1 from {tmp_path / 'pyproject.toml'}" in check(tmp_path, "--show-targets").stderr


def test_rules_lists_every_row_and_explain_every_code():
    listing = run_command([*COMMAND, "rules"], capture_output=True, text=True).stdout
    assert "](#" not in listing and all(re.search(rf"^{rule.code}  +{re.escape(rule.title)} ", listing, re.M)
                                        for rule in RULES)
    markdown = io.StringIO()
    run_rules(argparse.Namespace(format="markdown"), out=markdown)
    assert all(f"| [{rule.code}](#{rule.code.lower()}) | {rule.title} |" in markdown.getvalue() for rule in RULES)
    as_json = io.StringIO()
    run_rules(argparse.Namespace(format="json"), out=as_json)
    assert [(row["code"], row["title"]) for row in json.loads(as_json.getvalue())] == [(r.code, r.title) for r in RULES]
    result = run_command([sys.executable, "-m", "flake8_no_apex", "explain", "apx101"], capture_output=True,
                         text=True)
    assert result.returncode == 0 and result.stdout.startswith("APX101") and "Fix: unsafe, because" in result.stdout
    for code in CODES:  # the others in this process: the binary's path is the same
        out = io.StringIO()
        assert run_explain(argparse.Namespace(code=code.lower(), format="text"), out=out) == 0
        text = out.getvalue()
        assert text.startswith(code) and "\nFix: " in text and "](" not in text and "```" not in text
        assert max(len(line) for line in text.splitlines() if not line.startswith("    ")) <= 100
        markdown = io.StringIO()
        run_explain(argparse.Namespace(code=code, format="markdown"), out=markdown)
        assert "Fix: *" in markdown.getvalue() and "```" in markdown.getvalue()
    unknown = run_command([sys.executable, "-m", "flake8_no_apex", "explain", "APX999"],
                          capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown code" in unknown.stderr


# --- pre-commit -------------------------------------------------------------------------------
@pytest.fixture
def git_repo(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "train.py").write_text(EXAMPLE.read_text())
    (tmp_path / "requirements.txt").write_text("apex @ git+https://github.com/NVIDIA/apex.git\n")
    (tmp_path / "train.ipynb").write_text(NOTEBOOK)
    (tmp_path / "launch.sh").write_text("#!/bin/sh\naccelerate launch --fp16 train.py\n")
    (tmp_path / "ds_config.json").write_text('{"train_batch_size": 8, "amp": {"enabled": true}}\n')
    git("add", ".")
    git("-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-qm", "legacy")
    return tmp_path


@pytest.mark.slow
def test_pre_commit_hooks(git_repo):
    """Both hooks in one run of the real pre-commit (each run builds the hook environment anew):
    the check hook reports the original files, then the fix hook rewrites them and fails."""
    before = (git_repo / "train.py").read_text()
    result = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "--all-files"],
                            cwd=git_repo, capture_output=True, text=True, timeout=900)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:9:18: APX001" in result.stdout and "requirements.txt:1:1: APX109" in result.stdout
    for where in ("train.ipynb:cell 2:1:14: APX109", "train.ipynb:cell 3:2:6: APX201", "launch.sh:2:19: APX405",
                  "ds_config.json:1:25: APX601"):
        assert where in result.stdout, result.stdout
    assert re.search(r"flake8-no-apex \(check\)\.+Failed", result.stdout)
    assert re.search(r"flake8-no-apex \(fix\)\.+Failed", result.stdout) and "files were modified" in result.stdout
    after = (git_repo / "train.py").read_text()
    assert after != before
    assert 'torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16, cache_enabled=True)' in after
    ast.parse(after)
    assert 'torch.amp.autocast(\\"cuda\\"' in (git_repo / "train.ipynb").read_text()
    assert (git_repo / "launch.sh").read_text() == "#!/bin/sh\naccelerate launch --mixed_precision fp16 train.py\n"


NOTEBOOK = json.dumps({"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["!pip install apex"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["import torch\n", "with torch.cuda.amp.autocast():\n", "    pass"]},
], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1, sort_keys=True) + "\n"


# --- inputs that must not stop the run ----------------------------------------------------------
@pytest.mark.parametrize("value, expected", [("0x10", 16), ("0b10000", 16), ("020", 16), ("1:30", None)])
def test_yaml_integers_in_every_notation(tmp_path, value, expected):
    (tmp_path / "config.yaml").write_text(f"trainer:\n  precision: {value}\n")
    result = check(tmp_path)
    assert "Traceback" not in result.stderr
    if expected == 16:
        assert result.returncode == 1 and "APX008 precision=16" in result.stdout
    else:
        assert result.returncode == 0, result.stdout + result.stderr


def test_yaml_anchors_cost_their_size_not_their_expansion(tmp_path):
    (tmp_path / "loop.yaml").write_text("trainer: &t\n  precision: 16\n  again: *t\n")
    laughs = ["trainer:", '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        previous = chr(ord(level) - 1)
        laughs.append(f"  {level}: &{level} [" + ",".join([f"*{previous}"] * 9) + "]")
    laughs.append("  precision: 16")
    (tmp_path / "laughs.yaml").write_text("\n".join(laughs) + "\n")
    assert len((tmp_path / "laughs.yaml").read_bytes()) < 1000
    start = time.process_time()
    result = check(tmp_path)
    assert time.process_time() - start < 30  # a guard against hanging, not a benchmark
    assert result.returncode == 1 and result.stdout.count("APX008") == 2, result.stdout + result.stderr


def test_malformed_yaml_with_trainer_settings_is_one_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("trainer:\n  precision: [16\n")
    (tmp_path / "ok.py").write_text("from apex import amp\n")
    result = check(tmp_path)
    assert result.returncode == 2 and "bad.yaml: cannot parse" in result.stderr and "APX001" in result.stdout


@pytest.mark.parametrize("pyproject", ['project = "x"\n', "tool = 3\n", "[project]\ndependencies = [5]\n",
                                       "[project]\noptional-dependencies = 3\n", "[tool.poetry]\ndependencies = 2\n"])
def test_pyproject_with_wrong_types_is_a_warning_in_check_and_in_flake8(tmp_path, pyproject):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "a.py").write_text("from apex import amp\n")
    result = check(tmp_path, "a.py")
    assert result.returncode == 1 and "APX001" in result.stdout and "Traceback" not in result.stderr
    flake8 = run_command([sys.executable, "-m", "flake8", "--select", "APX", "a.py"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert flake8.returncode == 1 and "APX001" in flake8.stdout and "Traceback" not in flake8.stderr


def test_setup_cfg_that_is_not_utf8_is_one_line(tmp_path):
    (tmp_path / "setup.cfg").write_bytes(b"[flake8]\nextend-ignore = APX001 \xff\xfe\n")
    (tmp_path / "a.py").write_text("from apex import amp\n")
    result = check(tmp_path, "a.py")
    assert result.returncode == 2 and "setup.cfg: cannot read its settings" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("value, message, status", [
    ("E501", "enables no APX code: nothing will be reported", 0),
    ("", "enables no APX code: nothing will be reported", 0),
    ("apx201", "'apx201' is no error code", 2),
    ("APX9", "no code starts with 'APX9'", 2),
])
def test_selections_that_cannot_select_anything_are_said(tmp_path, value, message, status):
    (tmp_path / "a.py").write_text("from apex import amp\n")
    for command in ("check", "fix"):
        result = run_command([sys.executable, "-m", "flake8_no_apex", command, "--select", value, "a.py"],
                             cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == status and message in result.stderr and "Traceback" not in result.stderr


# --- configuration and dependency files of real projects ---------------------------------------
def test_hydra_trainer_config_groups_hold_trainer_arguments_at_the_top(tmp_path):
    (tmp_path / "conf" / "trainer").mkdir(parents=True)
    (tmp_path / "conf" / "model").mkdir()
    (tmp_path / "conf" / "trainer" / "gpu.yaml").write_text("max_epochs: 3\namp_backend: apex\nprecision: 16\n")
    (tmp_path / "conf" / "model" / "net.yaml").write_text("amp_level: O1\nprecision: 16\n")  # no Lightning context
    result = check(tmp_path)
    assert rows_of(result.stdout) == [("conf/trainer/gpu.yaml", 2, "APX002"), ("conf/trainer/gpu.yaml", 3, "APX008")]


def test_conda_environments_and_setup_py_name_apex(tmp_path):
    (tmp_path / "environment.yml").write_text(
        "name: train\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.10\n  - nvidia-apex\n"
        "  - pip:\n      - torch>=2.4\n      - apex==0.9.10dev\n")
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\nREQUIRES = ["torch", "apex"]\n'
        'setup(name="x", install_requires=REQUIRES, extras_require={"amp": ["git+https://github.com/NVIDIA/apex"]})\n')
    (tmp_path / "other.yml").write_text("dependencies:\n  - nvidia-apex\n")  # no channels: not conda's
    assert rows_of(check(tmp_path).stdout) == [
        ("environment.yml", 6, "APX109"), ("environment.yml", 9, "APX109"),
        ("setup.py", 2, "APX109"), ("setup.py", 3, "APX109"),
    ]


def rows_of(output: str) -> list:
    """(path, line, code) of each text-format finding."""
    rows = []
    for line in output.splitlines():
        path, number, _, message = line.split(":", 3)
        rows.append((Path(path).as_posix(), int(number), message.split()[0]))
    return rows


def test_sarif_uris_are_percent_encoded(tmp_path):
    (tmp_path / "my file.py").write_text("from apex import amp\n")
    log = json.loads(check(tmp_path, "--format", "sarif").stdout)
    uris = {location["physicalLocation"]["artifactLocation"]["uri"]
            for result in log["runs"][0]["results"] for location in result["locations"]}
    assert uris == {"my%20file.py"}


def test_a_tree_without_files_to_check_says_so(tmp_path):
    (tmp_path / "notes.md").write_text("# nothing here\n")
    result = check(tmp_path)
    assert result.returncode == 0 and "no files to check found" in result.stderr
    fix = run_command([*COMMAND, "fix", "."], cwd=tmp_path, capture_output=True, text=True)
    assert fix.returncode == 0 and "no files to fix found" in fix.stderr


def test_a_closed_pipe_ends_check_without_a_traceback(tmp_path):
    for n in range(300):
        (tmp_path / f"m{n}.py").write_text("from apex import amp\n")
    pipeline = subprocess.run(f"{shlex.join(COMMAND)} check --format json . | head -c 100 > /dev/null", shell=True,
                              cwd=tmp_path, capture_output=True, text=True)
    assert "Traceback" not in pipeline.stderr and "BrokenPipe" not in pipeline.stderr


# --- output formats CI systems read -------------------------------------------------------------
def _in_process(cwd: Path, *argv: str):
    """`check` run in this process (fast): (exit code, stdout, stderr)."""
    from flake8_no_apex.cli import parser

    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        args = parser().parse_args(["check", *argv])
        code = args.run(args, out=out, err=err)
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def legacy_tree(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    (tmp_path / "my file.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    return tmp_path


def test_concise_output_marks_fixable_findings_and_sums_them_up(legacy_tree):
    code, out, err = _in_process(legacy_tree, "--output-format", "concise")
    marked = [line for line in out.splitlines() if " [*] " in line]
    assert code == 1 and marked and all(re.match(r"^.+:\d+:\d+: APX\d{3} \[\*\] ", line) for line in marked)
    assert "my file.py:2:6: APX201 [*] torch.cuda.amp.autocast(...)" in out
    total, fixable = len(out.splitlines()), len(marked)
    assert re.fullmatch(rf"Found {total} findings \({fixable} fixable with `flake8-no-apex fix`, \d+ more with "
                        r"`fix --unsafe-fixes`\)\.\n", err)
    assert _in_process(legacy_tree, "--format", "text")[1] == out  # the old names stay
    assert _in_process(legacy_tree, "--select", "APX9")[0] == 2


def test_json_lines_gitlab_and_junit(legacy_tree):
    from xml.etree import ElementTree

    rows = json.loads(_in_process(legacy_tree, "--format", "json")[1])
    lines = [json.loads(line) for line in _in_process(legacy_tree, "--output-format", "json-lines")[1].splitlines()]
    assert lines == rows
    issues = json.loads(_in_process(legacy_tree, "--output-format", "gitlab")[1])
    assert len(issues) == len(rows) == len({i["fingerprint"] for i in issues})
    assert {i["severity"] for i in issues} <= {"info", "minor", "major"}
    assert issues[0]["location"]["positions"]["begin"] == {"line": rows[0]["line"], "column": rows[0]["column"]}
    assert json.loads(_in_process(legacy_tree, "--output-format", "gitlab")[1]) == issues  # stable fingerprints
    suites = ElementTree.fromstring(_in_process(legacy_tree, "--output-format", "junit")[1])
    cases = suites.findall("./testsuite/testcase")
    assert suites.get("failures") == str(len(rows)) and len(cases) == len(rows)
    assert {c.get("classname") for c in cases} == {"train.py", "my file.py"}
    clean = ElementTree.fromstring(_in_process(legacy_tree, "--output-format", "junit", "--select", "APX305")[1])
    assert clean.get("failures") == "0" and clean.find("./testsuite/testcase").get("name") == "No findings"


def test_statistics_in_each_format(legacy_tree):
    code, out, _ = _in_process(legacy_tree, "--output-format", "json", "--statistics")
    statistics = json.loads(out)
    assert code == 1 and {s["code"] for s in statistics} >= {"APX001", "APX201"}
    assert sum(s["count"] for s in statistics) == len(json.loads(_in_process(legacy_tree, "--format", "json")[1]))
    jsonl = [json.loads(line) for line in _in_process(legacy_tree, "--output-format", "json-lines",
                                                      "--statistics")[1].splitlines()]
    assert jsonl == statistics
    code, out, err = _in_process(legacy_tree, "--output-format", "sarif", "--statistics")
    assert code == 2 and out == "" and "--statistics is for the concise, full, json and json-lines formats" in err


# --- standard input, as editors and pre-commit-style tools call it ------------------------------
def _with_stdin(monkeypatch, cwd: Path, text: str, *argv: str):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    from flake8_no_apex.cli import parser

    out, err = io.StringIO(), io.StringIO()
    monkeypatch.chdir(cwd)
    args = parser().parse_args(list(argv))
    return args.run(args, out=out, err=err), out.getvalue(), err.getvalue()


def test_check_and_fix_read_standard_input_as_the_named_file(monkeypatch, tmp_path):
    source = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
    (tmp_path / "setup.cfg").write_text("[flake8]\nper-file-ignores = legacy/*:APX201\n")
    code, out, _ = _with_stdin(monkeypatch, tmp_path, source, "check", "-", "--stdin-filename", "src/train.py")
    assert code == 1 and out.startswith("src/train.py:2:6: APX201 [*] ")
    code, out, _ = _with_stdin(monkeypatch, tmp_path, source, "check", "-", "--stdin-display-name", "legacy/a.py")
    assert code == 0 and out == ""  # the name decides the per-file ignores, as in flake8
    code, out, err = _with_stdin(monkeypatch, tmp_path, source, "fix", "-")
    assert out == 'import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):\n    pass\n'
    assert "1 file fixed" in err
    code, out, err = _with_stdin(monkeypatch, tmp_path, "from apex import amp\n", "fix", "-")
    assert out == "from apex import amp\n" and "stdin:1:18: APX001" in err  # unchanged code still comes out
    requirement = "apex @ git+https://github.com/NVIDIA/apex\n"
    code, out, _ = _with_stdin(monkeypatch, tmp_path, requirement, "check", "-", "--stdin-filename", "requirements.txt")
    assert code == 1 and out.startswith("requirements.txt:1:1: APX109")
    assert not list(tmp_path.glob("src")) and not (tmp_path / "stdin").exists()  # nothing written


def test_add_noqa_silences_every_finding_where_flake8_looks(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    (tmp_path / "multi.py").write_text(
        "import pytorch_lightning as pl\n\n"
        "trainer = pl.Trainer(\n    amp_backend='apex',\n    precision=16,\n)\n"
        "text = pl.Trainer(amp_level='''O2\n''')  # noqa: E501\n"
        "import torch; s = torch.cuda.amp.GradScaler()  # a comment\n")
    (tmp_path / "requirements.txt").write_text("torch\napex @ git+https://github.com/NVIDIA/apex\n")
    code, _, err = _in_process(tmp_path, "--add-noqa")
    assert code == 0 and re.search(r"Added \d+ noqa directives to 3 files\.", err)
    multi = (tmp_path / "multi.py").read_text()
    # flake8 reads one line at a time, but a string or a backslash continuation over several as one
    assert "amp_backend='apex',  # noqa: APX002\n    precision=16,  # noqa: APX008\n" in multi
    assert "''')  # noqa: E501,APX003\n" in multi
    assert "GradScaler()  # a comment  # noqa: APX203\n" in multi
    assert "apex  # noqa: APX109\n" in (tmp_path / "requirements.txt").read_text()
    for path in tmp_path.glob("*.py"):
        compile(path.read_text(), str(path), "exec")
    assert _in_process(tmp_path)[0] == 0  # check: nothing left
    flake8 = run_command([sys.executable, "-m", "flake8", "--select=APX", "--extend-ignore=APX107,APX108,APX110",
                          "."], cwd=tmp_path, capture_output=True, text=True)
    assert flake8.returncode == 0, flake8.stdout
    assert _in_process(tmp_path, "--add-noqa")[2].startswith("Added 0 noqa directives")


def _action_steps():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite" and set(action["inputs"]) >= {"paths", "args"}
    return action["runs"]["steps"]


def test_github_action_takes_no_input_as_code_and_leaves_the_jobs_python_alone():
    steps = _action_steps()
    for step in steps:  # inputs go through the environment: a crafted input cannot become shell code
        assert "${{" not in step.get("run", "")
    (setup,) = [step for step in steps if step.get("uses", "").startswith("actions/setup-python@")]
    assert setup["with"]["update-environment"] is False  # later steps keep the job's Python


def test_github_action_annotates_and_writes_every_finding_to_the_job_summary(tmp_path):
    folder = tmp_path / "my project"
    folder.mkdir()
    (folder / "train one.py").write_text("from apex import amp\n" * 12)  # more than GitHub's 10 annotations
    (tmp_path / "other.py").write_text("from apex import amp\n")  # not among the paths
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATHS": "my project\n", "ARGS": "--extend-ignore 'APX2' --no-cache",
           "GITHUB_STEP_SUMMARY": str(summary)}
    result = subprocess.run([sys.executable, str(ROOT / "action" / "run_check.py")], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    annotations = result.stdout.splitlines()
    assert len(annotations) == 12 and all(line.startswith("::error file=my project/train one.py,line=")
                                          for line in annotations)
    written = summary.read_text()
    assert written.startswith("### flake8-no-apex\n") and written.count("my project/train one.py:") == 12
    assert "other.py" not in written and "Found 12 findings" in written


@pytest.mark.slow
def test_github_action_steps_run_as_a_runner_runs_them(tmp_path):
    """The composite action's shell steps, in order, as bash on a runner: the tool goes into an
    environment of its own under RUNNER_TEMP, and the check step runs from there."""
    steps = [step for step in _action_steps() if "run" in step]
    (tmp_path / "a.py").write_text("from apex import amp\n")
    output = tmp_path / "output"
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path / "temp"), "GITHUB_OUTPUT": str(output),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "PYTHON": sys.executable, "PACKAGE": str(ROOT),
           "ACTION_PATH": str(ROOT), "PATHS": ".", "ARGS": ""}
    (tmp_path / "temp").mkdir()
    install, check_step = steps
    subprocess.run(["bash", "-c", install["run"]], cwd=tmp_path, env=env, check=True, timeout=300)
    tool_python = dict(line.split("=", 1) for line in output.read_text().splitlines())["python"]
    assert tool_python.startswith(str(tmp_path / "temp"))
    result = subprocess.run(["bash", "-c", check_step["run"]], cwd=tmp_path, env={**env, "TOOL_PYTHON": tool_python},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stdout.startswith("::error file=a.py,line=1"), result.stderr
    assert "a.py:1:18: APX001" in (tmp_path / "summary.md").read_text()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_full_output_shows_the_source_and_colour_only_on_a_terminal(legacy_tree, monkeypatch):
    from flake8_no_apex.cli import parser

    _, out, _ = _in_process(legacy_tree, "--output-format", "full")
    assert "2 | with torch.cuda.amp.autocast():\n  |      ^^^^^^^^^^^^^^^^^^^^^^^\n" in out
    assert "\033[" not in out and "\033[" not in _in_process(legacy_tree)[1]  # not a terminal: no colour

    def on_terminal(*argv):
        terminal = _Terminal()
        args = parser().parse_args(["check", *argv])
        args.run(args, out=terminal, err=io.StringIO())
        return terminal.getvalue()

    monkeypatch.chdir(legacy_tree)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert "\033[1;31mAPX201\033[0m" in on_terminal("my file.py")
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in on_terminal("my file.py")


def test_a_baseline_lets_ci_fail_only_on_new_findings(legacy_tree):
    assert _in_process(legacy_tree, "--update-baseline")[0] == 2  # needs --baseline
    code, _, err = _in_process(legacy_tree, "--baseline", "base.json", "--update-baseline")
    assert code == 0 and "baseline of" in err and (legacy_tree / "base.json").exists()
    assert _in_process(legacy_tree, "--baseline", "base.json") == (0, "", "All checks passed: no findings.\n")
    train = legacy_tree / "train.py"
    train.write_text("import os\nfrom apex import amp as amp2\n" + train.read_text())  # lines shift, one is new
    code, out, _ = _in_process(legacy_tree, "--baseline", "base.json")
    assert code == 1 and out.splitlines() == [out.splitlines()[0]] and out.startswith("train.py:2:18: APX001")
    code, _, err = _in_process(legacy_tree, "--baseline", "missing-dir/base.json", "--update-baseline")
    assert code == 2 and "cannot write the baseline" in err
    (legacy_tree / "broken.json").write_text("{}")
    code, _, err = _in_process(legacy_tree, "--baseline", "broken.json")
    assert code == 2 and "not a baseline written by --update-baseline" in err


def test_show_fixes_enumerates_what_fix_would_fix_and_fixed(legacy_tree, monkeypatch):
    from flake8_no_apex.cli import parser

    _, out, _ = _in_process(legacy_tree, "--show-fixes")
    assert "`flake8-no-apex fix` would fix " in out
    assert "- my file.py:\n    1 × APX201 (torch.cuda.amp.autocast)\n" in out
    monkeypatch.chdir(legacy_tree)
    report_to = io.StringIO()
    args = parser().parse_args(["fix", "--show-fixes", "my file.py"])
    args.run(args, out=report_to, err=io.StringIO())
    assert "Fixed 1 finding:\n- my file.py:\n    1 × APX201 (torch.cuda.amp.autocast)\n" in report_to.getvalue()


def test_docs_url_makes_the_rule_links_absolute(legacy_tree):
    base = "https://example.org/flake8-no-apex/blob/v0.1.0/docs/rules.md"
    rows = json.loads(_in_process(legacy_tree, "--format", "json", "--docs-url", base)[1])
    assert {row["url"] for row in rows} >= {f"{base}#apx001", f"{base}#apx201"}
    (legacy_tree / "pyproject.toml").write_text(f'[tool.flake8-no-apex]\ndocs-url = "{base}"\n')
    document = json.loads(_in_process(legacy_tree, "--output-format", "sarif")[1])
    Sarif.model_validate(document)
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    assert all(rule["helpUri"] == f"{base}#{rule['id'].lower()}" for rule in rules)
    rows = json.loads(_in_process(legacy_tree, "--format", "json", "--docs-url", "rules.md")[1])
    assert all(row["url"] == f"rules.md#{row['code'].lower()}" for row in rows)  # the command line wins


def test_sarif_levels_follow_the_timeline_at_the_targets(tmp_path):
    """What is removed in the supported releases is an error, what is only deprecated there a
    warning, a maintained apex part a note: from the rule's timeline, not from the wording."""
    (tmp_path / "train.py").write_text("import lightning.pytorch as pl\nimport apex\n"
                                       "pl.Trainer(amp_backend='apex')\nopt = apex.optimizers.FusedAdam(params)\n")

    def levels(*options):
        log = json.loads(check(tmp_path, "--format", "sarif", "--extend-select", "APX107", *options).stdout)
        return {r["ruleId"]: r["level"] for r in log["runs"][0]["results"]}

    assert levels() == {"APX002": "error", "APX107": "note"}
    # Lightning 1.9 deprecated the apex backend; 2.0 removed it
    assert levels("--apex-target-versions", "lightning=1.9")["APX002"] == "warning"


def test_malformed_toml_and_project_metadata_are_said_in_one_line_each(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[project\ndependencies = [")
    (tmp_path / "sub" / "train.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    result = check(tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert any(line.startswith("flake8-no-apex: warning: ignoring ") and "pyproject.toml" in line for line in lines)
    assert f"flake8-no-apex: {Path('sub', 'pyproject.toml')}: cannot parse: Expected ']'" in result.stderr
    assert "sub/train.py:2:6: APX201" in result.stdout  # the other files are still checked


def test_the_text_formats_mark_as_fixable_exactly_what_json_gives_a_fix():
    """The text formats build plans without the import cleanup (an analysis of each plan's
    result): the same findings fixable, at the same grades, over every rule's examples and the
    apex migration's scripts; and some plan there does differ, so the cleanup is left out."""
    from flake8_no_apex.config import Settings
    from flake8_no_apex.engine import Document, Session

    session = Session(Settings(select=["APX"]))
    texts = [rule.before for rule in RULES if rule.language == "python"]
    texts += [path.read_text() for path in sorted((Path(__file__).parent / "apex_migration").glob("*.py"))]
    cleaned = 0
    for text in texts:
        marked = session.analyse(Document(Path("train.py"), text)).fixable
        planned = session.analyse(Document(Path("train.py"), text)).plans
        assert [(m is None, m and m.grade) for m in marked] == [(p is None, p and p.grade) for p in planned]
        cleaned += sum(m is not None and m.edits != p.edits for m, p in zip(marked, planned))
    assert cleaned


@pytest.mark.parametrize("fixes", [report.FIX_MARKS, report.FIX_EDITS])
def test_an_analysis_leaves_no_cyclic_garbage(fixes):
    """`check` and `fix` pause the collector while a file is analysed (collector.paused): what the
    analysis made must then be freed by reference counting once it is dropped. A cycle (the
    resolver once kept its own bound methods) left each file's whole tree for the collector."""
    import gc

    from flake8_no_apex.cli import _check_one
    from flake8_no_apex.config import Settings
    from flake8_no_apex.engine import Session
    from flake8_no_apex.files import Candidate

    session = Session(Settings())
    candidates = [Candidate(EXAMPLE), *(Candidate(p) for p in sorted(FIXTURES.glob("*.py")))]
    _check_one(candidates[0], session, fixes, stamped=False)  # what a first analysis loads and keeps
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for candidate in candidates:
            found, error, _ = _check_one(candidate, session, fixes, stamped=False)
            assert error is None
        gc.set_debug(gc.DEBUG_SAVEALL)
        assert gc.collect() == 0, sorted({type(o).__name__ for o in gc.garbage})[:20]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
