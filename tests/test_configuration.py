"""The habits ruff and flake8 users bring: --config, --isolated, --color and FORCE_COLOR,
--disable-noqa, warnings for keys nobody reads, one line for a value of the wrong type,
`check --fix`, and the subcommand's usage on a usage error."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings, strategies as st

from helpers import COMMAND, run_command

from flake8_no_apex.config import KEYS

AUTOCAST = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


def run(cwd, *args, env=None):
    return run_command([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, env=env)


def codes(result):
    return sorted(line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": APX" in line)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.py").write_text(AUTOCAST + "scaler = torch.cuda.amp.GradScaler()\n")
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-no-apex]\nextend-ignore = ["APX203"]\n')
    return tmp_path


# --- which files are read ------------------------------------------------------------------------
def test_config_names_the_only_file_read(project):
    assert codes(run(project, "check")) == ["APX201"]
    (project / "strict.toml").write_text('extend-ignore = ["APX201"]\n')  # a dedicated file: its top level
    assert codes(run(project, "check", "--config", "strict.toml")) == ["APX203"]  # pyproject.toml unread
    (project / "other.toml").write_text('[tool.flake8-no-apex]\nselect = ["APX203"]\n')
    assert codes(run(project, "check", "--config", "other.toml")) == ["APX203"]
    (project / "lint.cfg").write_text("[flake8]\nextend-ignore = APX201,APX203\n")
    result = run(project, "fix", "--diff", "--config", "lint.cfg")
    assert result.returncode == 0 and not result.stdout  # fix reads it too: nothing selected to fix
    result = run(project, "check", "--config", "missing.toml")
    assert result.returncode == 2 and "missing.toml: the --config file does not exist" in result.stderr


def test_isolated_reads_no_config_file(project):
    (project / "setup.cfg").write_text("[flake8]\nextend-ignore = APX201\n")
    assert codes(run(project, "check", "--isolated")) == ["APX201", "APX203"]
    assert codes(run(project, "check", "--isolated", "--extend-ignore", "APX201")) == ["APX203"]


# --- what a config file may say -----------------------------------------------------------------
def test_unknown_keys_are_warned_of_with_the_closest_known_one(project):
    (project / "pyproject.toml").write_text('[tool.flake8-no-apex]\nextnd-ignore = ["APX203"]\nfrobnicate = 1\n')
    result = run(project, "check")
    assert "warning: " in result.stderr and "unknown key 'extnd-ignore'; did you mean 'extend-ignore'?" in result.stderr
    assert "unknown key 'frobnicate'; known keys: select, " in result.stderr
    assert codes(result) == ["APX201", "APX203"]  # the run goes on without them


def test_a_shared_flake8_section_warns_only_of_likely_misspellings_of_ours(tmp_path):
    """[flake8] holds flake8's and every plugin's options: a key far from ours is somebody else's."""
    from flake8.main import options
    from flake8.options.manager import OptionManager

    manager = OptionManager(version="0", plugin_versions="", parents=[], formatter_names=[])
    options.register_default_options(manager)
    others = [option.config_name for option in manager.options if option.config_name]
    others += ["max-complexity", "docstring-convention", "application-import-names", "import-order-style",
               "inline-quotes", "enable-extensions", "require-plugins", "doctests", "output-file", "builtins",
               "ban-relative-imports", "exit-zero", "append-config", "rst-roles", "rst-directives"]
    assert len(others) > 25
    lines = "".join(f"{name} = x\n" for name in others if name.replace("_", "-") not in KEYS)
    (tmp_path / "setup.cfg").write_text(f"[flake8]\n{lines}apex-target-version = torch=2.4\n")
    (tmp_path / "a.py").write_text(AUTOCAST)
    warnings = [line for line in run(tmp_path, "check").stderr.splitlines() if "unknown key" in line]
    assert warnings == [f"flake8-no-apex: warning: {tmp_path / 'setup.cfg'}: unknown key 'apex-target-version'; "
                        "did you mean 'apex-target-versions'?"]


@pytest.mark.parametrize("setting, message", [
    ("select = 5", "select in {}: expected a list of strings or a comma-separated string, got 5 (int)"),
    ("extend-ignore = [1, 2]", "extend-ignore in {}: expected a list of strings or a comma-separated string, "
                               "got [1, 2] (list)"),
    ('check-docs = "maybe"', "check-docs in {}: expected true or false, got 'maybe' (str)"),
    ("apex-target-versions = 2.1", "apex-target-versions in {}: expected a string, got 2.1 (float)"),
])
def test_a_value_of_the_wrong_type_is_one_line(tmp_path, setting, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.flake8-no-apex]\n{setting}\n")
    (tmp_path / "a.py").write_text(AUTOCAST)
    result = run(tmp_path, "check")
    assert result.returncode == 2
    assert result.stderr == f"flake8-no-apex: {message.format(tmp_path / 'pyproject.toml')}\n"


def test_per_file_ignores_as_a_toml_table(project):
    (project / "pyproject.toml").write_text('[tool.flake8-no-apex.per-file-ignores]\n"a.py" = ["APX201"]\n')
    assert codes(run(project, "check")) == ["APX203"]


# --- noqa, colour ---------------------------------------------------------------------------------
def test_disable_noqa_reports_what_noqa_suppresses(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nwith torch.cuda.amp.autocast():  # noqa: APX201\n    pass\n")
    (tmp_path / "b.py").write_text("# flake8: noqa\n" + AUTOCAST)
    (tmp_path / "run.sh").write_text("accelerate launch --fp16 train.py  # noqa\n")
    assert codes(run(tmp_path, "check")) == []
    audit = ["APX201", "APX201", "APX405"]
    assert codes(run(tmp_path, "check", "--disable-noqa")) == audit
    assert codes(run(tmp_path, "check", "--ignore-noqa")) == audit  # ruff's name for it
    assert codes(run(tmp_path, "check")) == []  # the cache keeps the two runs apart
    (tmp_path / "setup.cfg").write_text("[flake8]\ndisable-noqa = true\n")
    assert codes(run(tmp_path, "check")) == audit
    before = {name: (tmp_path / name).read_text() for name in ("a.py", "b.py", "run.sh")}
    run(tmp_path, "fix", "--unsafe-fixes")  # an audit setting: fix still leaves what `# noqa` guards
    assert {name: (tmp_path / name).read_text() for name in before} == before


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="flakeFLAKE8 :#noqaNOQA\n\u0130\u212a", max_size=40))
def test_the_file_noqa_is_found_in_any_case_as_flake8_finds_it(text):
    """`ignores_file` looks for "flake8" from its "8" (a case-free character): the same answer as
    lowering the text and matching flake8's own pattern on each line (\u0130 and \u212a lower
    to more than one character or to an ASCII letter)."""
    from flake8.defaults import NOQA_FILE

    from flake8_no_apex.noqa import ignores_file

    assert ignores_file(text) == any(NOQA_FILE.match(line) for line in text.splitlines())


def test_color_always_never_and_force_color(tmp_path):
    (tmp_path / "a.py").write_text(AUTOCAST)
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "NO_COLOR")}
    assert "\033[" not in run(tmp_path, "check", env=env).stdout  # a pipe: no colour
    assert "\033[1;31mAPX201" in run(tmp_path, "check", "--color", "always", env=env).stdout
    assert "\033[1;31mAPX201" in run(tmp_path, "check", env={**env, "FORCE_COLOR": "1"}).stdout
    assert "\033[" not in run(tmp_path, "check", "--color", "never", env={**env, "FORCE_COLOR": "1"}).stdout
    assert "\033[" not in run(tmp_path, "check", "--format", "json", env={**env, "FORCE_COLOR": "1"}).stdout


# --- check --fix, usage errors ---------------------------------------------------------------------
def test_check_fix_is_fix(tmp_path):
    (tmp_path / "a.py").write_text(AUTOCAST)
    (tmp_path / "b.py").write_text("from apex import amp\n")
    result = run(tmp_path, "check", "--fix")
    assert result.returncode == 1 and 'torch.amp.autocast("cuda",' in (tmp_path / "a.py").read_text()
    assert "b.py:1:18: APX001" in result.stdout and "1 file fixed (1 fix)" in result.stderr
    (tmp_path / "c.py").write_text("from apex import amp\nmodel, opt = amp.initialize(model, opt)\n")
    report = json.loads(run(tmp_path, "check", "--fix", "--format", "json").stdout)
    assert {item["file"] for item in report["remaining"]} == {"b.py", "c.py"}
    result = run(tmp_path, "check", "--fix", "--format", "sarif")
    assert result.returncode == 2 and "check --fix reports as text or json, not sarif" in result.stderr


@pytest.mark.parametrize("command", ["check", "fix", "rules", "explain APX001"])
def test_a_usage_error_prints_the_subcommands_usage(tmp_path, command):
    result = run(tmp_path, *command.split(), "--frobnicate")
    command = command.split()[0]
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: flake8-no-apex {command} ")
    assert f"flake8-no-apex {command}: error: unrecognized arguments: --frobnicate" in result.stderr


# --- watch ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_watch_checks_again_when_a_file_changes(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    # Ctrl-C as at a terminal: a run started in the background (`cmd &`) inherits SIGINT ignored
    default_interrupt = None if sys.platform == "win32" else lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    process = subprocess.Popen([*COMMAND, "check", "--watch", "--no-cache", "."], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=default_interrupt)
    try:
        seen = []

        def wait_for(text):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                line = process.stdout.readline()
                seen.append(line)
                if text in line:
                    return
            raise AssertionError(f"no {text!r} in {seen}")

        wait_for("All checks passed")
        (tmp_path / "a.py").write_text(AUTOCAST)
        wait_for("a.py:2:6: APX201")
        (tmp_path / "pyproject.toml").write_text('[tool.flake8-no-apex]\nextend-ignore = ["APX201"]\n')
        wait_for("All checks passed")  # a changed setting is a changed result
    finally:
        process.terminate() if sys.platform == "win32" else process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        process.stdout.close()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["close", "all"]), st.one_of(
    st.text(alphabet="abcdeilnoprstx-_", min_size=1, max_size=24), st.sampled_from(
        ["max-line-length", "max-complexity", "extnd-ignore", "selct", "per_file_ignores", "docs-ur", "exclud"])))
def test_an_unknown_key_is_warned_about_as_difflib_says(unknown, key):
    """Only a key difflib's quick bound lets through is matched (a warm run with another tool's
    keys in [flake8] then loads no difflib): the warnings are those of matching every key."""
    import difflib

    from flake8_no_apex.config import Settings

    found = Settings()
    found._unknown(key, "setup.cfg", unknown)
    closest = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1, cutoff=0.8 if unknown == "close" else 0.6)
    if unknown == "all" or closest:
        hint = f"; did you mean {closest[0]!r}?" if closest else f"; known keys: {', '.join(KEYS)}"
        assert found.warnings == [f"setup.cfg: unknown key {key!r}{hint}"]
    else:
        assert found.warnings == []
