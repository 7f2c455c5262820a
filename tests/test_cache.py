"""check's cache: the same output as an uncached run, no engine on a warm run, and every
change that matters seen (the file, its project's metadata, the settings, the tool)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flake8_no_apex.cache import SettingsMemo
from helpers import COMMAND, run_with_imports, run_command

EXAMPLE = Path(__file__).parents[1] / "examples" / "legacy_train.py"
CACHE = ".flake8-no-apex-cache"


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_command([*COMMAND, "check", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n')
    (tmp_path / "src").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "src" / "train.py")
    (tmp_path / "src" / "clean.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").write_text("apex @ git+https://github.com/NVIDIA/apex\n")
    (tmp_path / "config.yaml").write_text("trainer:\n  amp_backend: apex\n")
    return tmp_path


@pytest.mark.parametrize("output_format", ["concise", "json", "sarif"])
def test_a_warm_run_prints_exactly_what_an_uncached_run_prints(project, output_format):
    uncached = check(project, "--output-format", output_format, "--no-cache")
    assert not (project / CACHE).exists()  # --no-cache writes nothing
    cold = check(project, "--output-format", output_format)
    warm = check(project, "--output-format", output_format)
    assert uncached.stdout and uncached.returncode == cold.returncode == warm.returncode == 1
    assert uncached.stdout == cold.stdout == warm.stdout and uncached.stderr == cold.stderr == warm.stderr


def test_a_warm_run_imports_no_engine_and_the_cache_is_git_ignored(project):
    check(project)
    warm, imported = run_with_imports("check", cwd=project)
    assert warm.returncode == 1
    assert "flake8_no_apex.engine" not in imported and "flake8_no_apex.rules" not in imported
    assert not {"ast_grep_py", "yaml", "multiprocessing", "dataclasses", "packaging.version", "tokenize", "shutil",
                "configparser", "typing"} & imported  # (typing: records.NamedTuple)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert "pyproject.toml" in status and CACHE not in status  # the .gitignore inside it keeps it out


def test_what_changes_findings_is_seen(project):
    train = project / "src" / "train.py"
    first = check(project).stdout
    train.write_text(train.read_text() + "\nwith torch.cuda.amp.autocast():\n    pass\n")
    assert check(project).stdout.count("APX201") == first.count("APX201") + 1  # a changed file
    again = check(project).stdout
    os.utime(train, ns=(1, 1))  # touched, same content: still right, from the cache
    assert check(project).stdout == again
    (project / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.1"]\n')
    older = check(project).stdout  # torch 2.1 has no torch.amp.GradScaler("cuda"): other advice
    assert older != again and check(project).stdout == older
    assert "APX201" not in check(project, "--extend-ignore", "APX201").stdout  # other settings, other entries


def test_a_corrupt_cache_is_ignored_and_rebuilt(project):
    expected = check(project, "--no-cache").stdout
    check(project)
    for file in (project / CACHE).glob("*.json"):
        file.write_text("{not json")
    assert check(project).stdout == expected
    assert all(isinstance(json.loads(f.read_text()), dict) for f in (project / CACHE).glob("*.json"))


def test_a_cache_file_of_another_description_is_never_used(project):
    """The file name is only a checksum: a file under it that describes other settings or other
    code (here it would hide every finding) is ignored and replaced."""
    expected = check(project, "--no-cache").stdout
    check(project)
    for file in (project / CACHE).glob("*.json"):
        if file.name == SettingsMemo.NAME:
            continue
        kept = json.loads(file.read_text())
        kept["description"] = kept["description"].replace('"extend_ignore": []', '"extend_ignore": ["APX"]', 1)
        for entry in kept["entries"].values():
            entry["rows"] = []
        assert '"extend_ignore": ["APX"]' in kept["description"]
        file.write_text(json.dumps(kept))
    assert check(project).stdout == expected
    assert check(project).stdout == expected  # rebuilt, and used


def test_a_warm_run_parses_no_settings_file_whose_text_it_has_seen(project):
    """The parses of pyproject.toml and setup.cfg are kept with their texts: a warm run loads
    neither parser, and any change of a text (even one that keeps its size and time) is read."""
    pyproject, setup = project / "pyproject.toml", project / "setup.cfg"
    pyproject.write_text(pyproject.read_text() + '[tool.flake8-no-apex]\nextend-ignore = ["APX201"]\n')
    setup.write_text("[flake8]\nper-file-ignores =\n    src/train.py:APX301\n")

    def codes(result: subprocess.CompletedProcess) -> set:
        return {line.split()[1] for line in result.stdout.splitlines() if line.startswith("src/")}

    first = check(project)
    warm, imported = run_with_imports("check", cwd=project)
    assert warm.stdout == first.stdout and not {"APX201", "APX301"} & codes(warm) and "APX203" in codes(warm)
    assert not {"tomllib", "tomli", "configparser"} & imported
    stamp = pyproject.stat()
    pyproject.write_text(pyproject.read_text().replace("APX201", "APX203"))  # same size
    os.utime(pyproject, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and time
    changed = check(project)
    assert "APX201" in codes(changed) and not {"APX203", "APX301"} & codes(changed)
    assert changed.stdout == check(project, "--no-cache").stdout


def test_a_settings_file_that_does_not_parse_says_so_on_every_run(project):
    (project / "pyproject.toml").write_text("[tool.flake8-no-apex\n")
    for _ in range(2):
        result = check(project)
        assert result.returncode == 2 and "pyproject.toml: cannot read its settings" in result.stderr


def test_a_parse_json_cannot_hold_is_not_kept(tmp_path):
    memo = SettingsMemo(tmp_path / CACHE)
    parsed = {"when": __import__("datetime").date(2026, 12, 7)}
    assert memo.of("toml", tmp_path / "a.toml", "x", lambda text: parsed) is parsed
    assert memo.of("toml", tmp_path / "b.toml", "y", lambda text: {"n": [1, 2.5]}) == {"n": [1, 2.5]}
    memo.save()
    again = SettingsMemo(tmp_path / CACHE)
    assert again.of("toml", tmp_path / "b.toml", "y", lambda text: 1 / 0) == {"n": [1, 2.5]}
    assert list(again.kept) == [f"toml:{tmp_path / 'b.toml'}"]


def test_the_description_changes_with_any_source_of_the_tool(tmp_path, monkeypatch):
    """Each of the package's sources is in it with its size and time: an edited rule or fix
    invalidates the cache, though no source is read."""
    import flake8_no_apex
    from flake8_no_apex import cache
    from flake8_no_apex.config import Settings
    from flake8_no_apex.report import FIX_MARKS

    monkeypatch.chdir(tmp_path)
    described = json.loads(cache.description(Settings(), FIX_MARKS))
    sources = {entry[0] for entry in described[1][1:]}
    package = Path(flake8_no_apex.__file__).parent
    assert sources == {str(p.relative_to(package)) for p in package.rglob("*.py")}
    assert all(entry[1] > 0 and entry[2] > 0 for entry in described[1][1:])


def test_the_cache_directory_can_be_moved(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "cache"
    check(project, "--cache-dir", str(elsewhere))
    assert list(elsewhere.glob("*.json")) and not (project / CACHE).exists()


def test_files_that_could_not_be_checked_are_not_cached(project):
    (project / "src" / "broken.py").write_text("import torch\ntorch.cuda.amp.autocast(\n")
    for _ in range(2):
        result = check(project)
        assert result.returncode == 2 and "broken.py:2:" in result.stderr
