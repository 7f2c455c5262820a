"""End-to-end runs of the `flake8-no-apex` console script on temporary trees."""
from __future__ import annotations

import difflib
import importlib.util
import os
import py_compile
import shutil
import stat
import signal
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import COMMAND, CONSOLE_SCRIPT, run_command

from flake8_no_apex.files import InputError, compiled_by_python, read, write

EXAMPLE = Path(__file__).parents[1] / "examples" / "legacy_train.py"
SAFE_ONLY = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast(False):\n    pass\n"
SAFE_FIXED = (
    'import torch\n\nscaler = torch.amp.GradScaler("cuda")\n'
    'with torch.amp.autocast("cuda", enabled=False, dtype=torch.float16, cache_enabled=True):\n    pass\n'
)


def run(cwd, *args, console_script=False):
    command = [CONSOLE_SCRIPT] if console_script else COMMAND
    return run_command([*command, *args], cwd=cwd, capture_output=True, text=True, check=False)


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
    result = run(tmp_path, "fix", ".")
    assert result.returncode == 0 and (tmp_path / "ok.py").read_text() == SAFE_FIXED


def test_the_installed_console_script_runs_both_commands(tmp_path):
    (tmp_path / "amp_only.py").write_text(SAFE_ONLY)
    assert run(tmp_path, "check", ".", console_script=True).returncode == 1
    assert run(tmp_path, "fix", ".", console_script=True).returncode == 0  # every finding fixed, as ruff exits
    assert (tmp_path / "amp_only.py").read_text() == SAFE_FIXED
    assert run(tmp_path, "check", ".", console_script=True).returncode == 0


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
    (tmp_path / "broken.py").write_text("from apex import amp\ndef f(:\n")
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    result = run(tmp_path, "fix", ".")
    assert result.returncode == 2 and "broken.py:2:7: cannot parse: invalid syntax" in result.stderr
    assert (tmp_path / "ok.py").read_text() == SAFE_FIXED


def test_fix_parses_a_file_without_a_rules_word_only_when_it_is_named(tmp_path):
    """As check: a file the pre-filter rules out is one fix cannot change, so a tree's are not
    parsed (the syntax check was most of a fix of a fresh tree); a file named is always parsed."""
    (tmp_path / "unrelated_broken.py").write_text("def f(:\n")
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    result = run(tmp_path, "fix", ".")
    assert result.returncode == 0 and "cannot parse" not in result.stderr
    assert (tmp_path / "ok.py").read_text() == SAFE_FIXED
    result = run(tmp_path, "fix", "unrelated_broken.py")
    assert result.returncode == 2 and "unrelated_broken.py:1:7: cannot parse: invalid syntax" in result.stderr
    (tmp_path / "misplaced_global.py").write_text("x = 1\ndef f():\n    x = 2\n    global x\n")
    result = run(tmp_path, "fix", "misplaced_global.py")  # what the symbol table finds, as fix compiles
    assert result.returncode == 2 and "misplaced_global.py:4" in result.stderr


def test_fix_takes_pythons_bytecode_cache_as_proof_that_a_named_file_parses(tmp_path):
    """A named file without a rule's word is parsed only to say it does not parse: a pyc of
    exactly it says that it does. A timestamp pyc vouches for the mtime and size, as for import
    (so a same-size edit within its second passes, here forged), a hash-based one for the bytes."""
    module = tmp_path / "module.py"
    modes = py_compile.PycInvalidationMode
    for mode, status in ((modes.TIMESTAMP, 0), (modes.CHECKED_HASH, 2)):
        module.write_text("x = 1\n")
        py_compile.compile(str(module), doraise=True, invalidation_mode=mode)
        stamp = os.stat(module)
        module.write_text("x = (\n")  # the same size, and the same time below
        os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        result = run(tmp_path, "fix", "module.py")
        assert result.returncode == status and ("module.py:1:5: cannot parse" in result.stderr) is bool(status)


@pytest.mark.parametrize("mode", list(py_compile.PycInvalidationMode))
def test_a_pyc_vouches_only_for_the_text_it_was_compiled_from(tmp_path, mode):
    module = tmp_path / "module.py"
    module.write_text("x = 1\n")
    assert not compiled_by_python(module, read(module))  # no cache yet
    py_compile.compile(str(module), doraise=True, invalidation_mode=mode)
    assert compiled_by_python(module, read(module))
    assert not compiled_by_python(module, read(module)._replace(seen=None))  # standard input: no file to vouch for
    stamp = os.stat(module)
    module.write_text("x = 2\n")
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same size and time: only a hash tells
    assert compiled_by_python(module, read(module)) is (mode is py_compile.PycInvalidationMode.TIMESTAMP)
    module.write_text("x = 12\n")
    assert not compiled_by_python(module, read(module))
    pyc = Path(importlib.util.cache_from_source(str(module)))
    for header in (b"", b"\0" * 16, importlib.util.MAGIC_NUMBER + b"\x04" + b"\0" * 11):  # short, no magic, bad flags
        pyc.write_bytes(header)
        assert not compiled_by_python(module, read(module))


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
    assert bom.read_bytes() == (b'\xef\xbb\xbfimport torch\n'
                                b'with torch.amp.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):\n'
                                b'    pass\n')
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_file_changed_on_disk_meanwhile_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    decoded = read(path)
    path.write_text("x = 2  # edited by the user meanwhile\n")
    with pytest.raises(InputError, match="changed on disk"):
        write(path, decoded, b"x = 3\n", [tmp_path])
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


# --- the run goes on: one line per bad input, exit 2, never a traceback ------------------------
def assert_one_clear_line(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Error:" not in result.stderr.replace("cannot", "")
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_missing_paths_and_symlink_loops_do_not_stop_the_others(tmp_path):
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    result = run(tmp_path, "fix", "missing.py", "loop", "ok.py")
    assert_one_clear_line(result, "missing.py: no such file or directory", "loop: a symbolic link that leads nowhere")
    assert (tmp_path / "ok.py").read_text() == SAFE_FIXED
    result = run(tmp_path, "check", "missing.py", "ok.py")
    assert result.returncode == 2 and "missing.py: no such file or directory" in result.stderr


@pytest.mark.parametrize("name, text", [("missing.py", None), ("broken.py", "x = (\n")])
def test_check_never_says_passed_after_an_error(tmp_path, name, text):
    if text is not None:
        (tmp_path / name).write_text(text)
    (tmp_path / "clean.py").write_text("import torch\n")
    result = run(tmp_path, "check", name, "clean.py")
    assert result.returncode == 2
    assert "passed" not in result.stderr
    assert result.stderr.endswith("No findings in the files checked; 1 file could not be checked.\n")


def as_nobody(command):
    """Root ignores file permissions: run the command as an unprivileged user where we are root."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]
    return command


def _unprivileged_python_runs() -> bool:
    probe = as_nobody([sys.executable, "-c", "import flake8_no_apex"])
    try:
        return subprocess.run(probe, capture_output=True, cwd=tempfile.gettempdir()).returncode == 0
    except OSError:
        return False


needs_permissions = pytest.mark.skipif(not _unprivileged_python_runs(),
                                       reason="this interpreter cannot run as an unprivileged user here")


def run_unprivileged(cwd, *args):
    command = as_nobody([sys.executable, "-m", "flake8_no_apex", *args])
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def shared_tmp():
    """A directory every user can reach (pytest's own is root's only), removed afterwards."""
    path = Path(tempfile.mkdtemp())
    path.chmod(0o777)
    yield path
    for directory, subdirectories, _ in os.walk(path):
        for name in subdirectories:
            Path(directory, name).chmod(0o777)
    shutil.rmtree(path)


@needs_permissions
def test_unwritable_unreadable_and_unsearchable_paths_are_one_line_each(shared_tmp):
    readonly = shared_tmp / "readonly"
    readonly.mkdir()
    (readonly / "a.py").write_text(SAFE_ONLY)
    (readonly / "a.py").chmod(0o666)
    readonly.chmod(0o555)  # mkstemp beside the file fails
    locked = shared_tmp / "locked"
    locked.mkdir()
    (locked / "b.py").write_text(SAFE_ONLY)
    locked.chmod(0o000)
    (shared_tmp / "nowrite.py").write_text(SAFE_ONLY)
    (shared_tmp / "nowrite.py").chmod(0o444)
    (shared_tmp / "ok.py").write_text(SAFE_ONLY)
    (shared_tmp / "ok.py").chmod(0o666)
    result = run_unprivileged(shared_tmp, "fix", "readonly", "locked", "locked/b.py", "nowrite.py", "ok.py")
    assert_one_clear_line(result, "readonly/a.py: cannot write: Permission denied",
                          "locked: cannot read the directory: Permission denied",
                          "locked/b.py: cannot read: Permission denied",
                          "nowrite.py: no permission to write it; left as it is")
    assert (shared_tmp / "ok.py").read_text() == SAFE_FIXED
    assert (readonly / "a.py").read_text() == SAFE_ONLY and not list(readonly.glob(".*.tmp"))


def test_a_bad_job_count_is_a_usage_error(tmp_path):
    result = run(tmp_path, "check", "-j", "abc")
    assert result.returncode == 2 and "expected a number of processes or 'auto'" in result.stderr
    assert "Traceback" not in result.stderr


def test_deeply_nested_code_is_one_line_and_the_others_go_on(tmp_path):
    nested = "(" * 5000 + "torch.cuda.amp.GradScaler()" + ")" * 5000
    (tmp_path / "deep.py").write_text(f"import torch\nx = {nested}\n")
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    result = run(tmp_path, "fix", ".")
    assert_one_clear_line(result, "deep.py")
    assert (tmp_path / "ok.py").read_text() == SAFE_FIXED
    result = run(tmp_path, "check", ".")
    assert result.returncode == 2 and "deep.py" in result.stderr and "Traceback" not in result.stderr


# --- writes that lose nothing -------------------------------------------------------------------
def test_the_file_is_checked_again_just_before_the_rename(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(SAFE_ONLY)
    decoded = read(path)
    with open(path, "a") as handle:  # an append between reading and writing
        handle.write("# appended\n")
    with pytest.raises(InputError, match="changed on disk"):
        write(path, decoded, SAFE_FIXED.encode(), [tmp_path])
    assert path.read_text() == SAFE_ONLY + "# appended\n"
    assert not list(tmp_path.glob(".*.tmp"))


def test_files_left_as_they_are_are_not_counted_as_fixed(tmp_path):
    (tmp_path / "ok.py").write_text(SAFE_ONLY)
    (tmp_path / "nowrite.py").write_text(SAFE_ONLY)
    (tmp_path / "target.py").write_text(SAFE_ONLY)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.py").write_text(SAFE_ONLY)
    inside = tmp_path / "inside"
    inside.mkdir()
    os.symlink(outside / "real.py", inside / "link.py")
    result = run(tmp_path, "fix", "ok.py", "inside")
    assert "link.py: a symbolic link to" in result.stderr and "outside the paths given" in result.stderr
    assert "1 file fixed (2 fixes)" in result.stderr
    assert (outside / "real.py").read_text() == SAFE_ONLY and (inside / "link.py").is_symlink()


def test_links_inside_the_paths_are_written_through_and_hard_links_stay_one_file(tmp_path):
    (tmp_path / "real.py").write_text(SAFE_ONLY)
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")
    os.link(tmp_path / "real.py", tmp_path / "hard.py")
    result = run(tmp_path, "fix", "link.py", ".")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "link.py").is_symlink() and (tmp_path / "real.py").read_text() == SAFE_FIXED
    assert os.path.samefile(tmp_path / "real.py", tmp_path / "hard.py")


@pytest.mark.slow
def test_sigterm_during_fix_leaves_no_temporary_file_and_no_half_file(tmp_path):
    big = "".join(f"s{i} = torch.cuda.amp.GradScaler()\n" for i in range(3000))
    for delay in (0.3, 0.6, 0.9, 1.2):
        folder = tmp_path / str(delay)
        folder.mkdir()
        for n in range(4):
            (folder / f"m{n}.py").write_text("import torch\n" + big)
        process = subprocess.Popen([sys.executable, "-m", "flake8_no_apex", "fix", str(folder)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
        assert not list(folder.glob(".*.tmp"))
        for n in range(4):
            text = (folder / f"m{n}.py").read_text()
            assert text == "import torch\n" + big or "torch.cuda.amp" not in text


@pytest.mark.parametrize("text", ["import torch\ns = torch.cuda.amp.GradScaler()",
                                  "import torch\rs = torch.cuda.amp.GradScaler()\r",
                                  "import torch\r\ns = torch.cuda.amp.GradScaler()"])
def test_diff_applies_with_patch_without_a_final_newline_and_with_cr_endings(tmp_path, text):
    (tmp_path / "a.py").write_bytes(text.encode())
    result = run_command([sys.executable, "-m", "flake8_no_apex", "fix", "--diff", "a.py"], cwd=tmp_path,
                         capture_output=True)  # bytes: text mode would turn a CR into a newline
    (tmp_path / "expected").mkdir()
    (tmp_path / "expected" / "a.py").write_bytes(text.encode())
    run(tmp_path / "expected", "fix", "a.py")
    patched = subprocess.run(["patch", "-p1", "--binary"], input=result.stdout, cwd=tmp_path,
                             capture_output=True)
    assert patched.returncode == 0, patched.stdout + patched.stderr
    assert (tmp_path / "a.py").read_bytes() == (tmp_path / "expected" / "a.py").read_bytes()


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB file system, mounted where root may mount one (skipped elsewhere)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small file system here")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=True)


def test_a_full_disk_is_one_line_and_the_original_stays(full_disk):
    source = "import torch\n" + "".join(f"s{i} = torch.cuda.amp.GradScaler()\n" for i in range(400))
    (full_disk / "a.py").write_text(source)
    with open(full_disk / "filler", "wb", buffering=0) as filler:  # fill the file system to the last byte
        try:
            while True:
                filler.write(b"\0" * 1024)
        except OSError:
            pass
    result = run(full_disk, "fix", "a.py")
    assert_one_clear_line(result, "a.py: cannot write: No space left on device; left as it is")
    assert (full_disk / "a.py").read_text() == source and not list(full_disk.glob(".*.tmp"))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")
def test_owner_and_group_are_kept(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(SAFE_ONLY)
    os.chown(path, 65534, 65534)
    result = run(tmp_path, "fix", "a.py")
    assert result.returncode == 0 and path.read_text() == SAFE_FIXED
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


SAFE_FIX = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


@pytest.mark.parametrize("flag, exits", [
    # (manual finding only, a file changed and a finding left, a file changed and nothing left)
    ((), (1, 1, 0)),  # ruff's `check --fix`: 1 while findings remain
    (("--exit-non-zero-on-fix",), (1, 1, 1)),  # ruff's: also 1 when it fixed anything
    (("--exit-non-zero-on-change-only",), (0, 1, 1)),  # the pre-commit fix hook: only a change fails it
    (("--diff",), (1, 1, 1)),  # a diff to apply fails, as ruff's --diff does
])
def test_fix_exit_status(tmp_path, flag, exits):
    (tmp_path / "manual.py").write_text("from apex import amp\n")  # a finding no fix handles
    assert run(tmp_path, "fix", *flag, ".").returncode == exits[0]
    (tmp_path / "safe.py").write_text(SAFE_FIX)
    assert run(tmp_path, "fix", *flag, ".").returncode == exits[1]
    (tmp_path / "manual.py").unlink()
    (tmp_path / "safe.py").write_text(SAFE_FIX)
    assert run(tmp_path, "fix", *flag, ".").returncode == exits[2]


def test_exit_non_zero_flags_exclude_each_other(tmp_path):
    result = run(tmp_path, "fix", "--exit-non-zero-on-fix", "--exit-non-zero-on-change-only", ".")
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_fix_diff_reports_positions_in_the_file_as_it_is(tmp_path):
    (tmp_path / "d.py").write_text("import torch\nfrom torch.cuda.amp import GradScaler\nfrom apex import amp\n\n"
                                   "with torch.cuda.amp.autocast():\n    pass\n"
                                   "s = GradScaler()\namp.half_function(f)\n")
    printed = run(tmp_path, "fix", "--diff", "d.py").stderr
    assert "d.py:3:18: APX001" in printed and "d.py:8:1: APX103" in printed  # not lines 2 and 7 of the fix


def test_original_offsets_go_back_through_every_round():
    from flake8_no_apex.fixer import fix_text

    before = "from torch.cuda.amp import autocast\nx = 1\nwith autocast():\n    y = 'é'\n"
    result = fix_text(before)
    assert result.rounds and result.text != before
    for marker in ("x = 1", "y = 'é'"):
        assert result.original_offset(result.text.index(marker)) == before.index(marker)


def test_fix_drops_an_apex_pin_as_an_unsafe_fix_and_reports_yaml_findings(tmp_path):
    pinned = "torch>=2.4\napex @ git+https://github.com/NVIDIA/apex  # fused kernels\nnumpy\n"
    (tmp_path / "requirements.txt").write_text(pinned)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = [\n  "torch",\n  "apex",\n]\n'
                                             '[project.optional-dependencies]\nfast = ["torch", "apex"]\n')
    (tmp_path / "config.yaml").write_text("trainer:\n  amp_backend: apex\n")
    result = run(tmp_path, "fix", "requirements.txt", "pyproject.toml", "config.yaml")
    assert result.returncode == 1 and "cannot parse" not in result.stderr
    assert "2 fixable with --unsafe-fixes" in result.stdout + result.stderr
    assert (tmp_path / "requirements.txt").read_text() == pinned  # the safe run leaves the pin
    result = run(tmp_path, "fix", "--unsafe-fixes", "requirements.txt", "pyproject.toml", "config.yaml")
    assert (tmp_path / "requirements.txt").read_text() == "torch>=2.4\nnumpy\n"
    # the array item on its own line goes; the one sharing its line with another is left to a person
    assert (tmp_path / "pyproject.toml").read_text() == ('[project]\nname = "p"\ndependencies = [\n  "torch",\n]\n'
                                                         '[project.optional-dependencies]\nfast = ["torch", "apex"]\n')
    assert "pyproject.toml:7:18: APX109" in result.stdout and "config.yaml:2:3: APX" in result.stdout
    assert (tmp_path / "config.yaml").read_text() == "trainer:\n  amp_backend: apex\n"


def test_a_conda_pin_goes_only_when_its_list_keeps_another_item(tmp_path):
    (tmp_path / "environment.yml").write_text("name: e\ndependencies:\n  - python=3.11\n  - nvidia-apex\n  - pip:\n"
                                              "    - apex\n")
    run(tmp_path, "fix", "--unsafe-fixes", "environment.yml")
    # the pip list would be emptied (and read as null): that item stays
    fixed = (tmp_path / "environment.yml").read_text()
    assert fixed == "name: e\ndependencies:\n  - python=3.11\n  - pip:\n    - apex\n"


def test_the_server_without_pygls_says_which_extra_to_install(tmp_path):
    blocked = ("import sys; sys.modules['pygls'] = None; from flake8_no_apex.cli import main; "
               "sys.exit(main(['server']))")
    result = subprocess.run([sys.executable, "-c", blocked], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2 and "install 'flake8-no-apex[server]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_s_warnings_about_the_code_read_are_not_printed(tmp_path):
    """The parser's and the compiler's SyntaxWarnings ('"is" with a literal'; 'invalid escape
    sequence' from 3.12) about a file, which Python prints under `<unknown>` or `<fixed>`, are
    no findings: neither check nor fix shows them, in this process or in the workers of -j."""
    code = 'import torch\nx = "\\d"\ny = 1 is 1\ns = torch.cuda.amp.GradScaler()\n'
    for name in ("a.py", *(f"sub/m{i}.py" for i in range(70))):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(code)
    for command in (["check", "--no-cache", "a.py"], ["check", "--no-cache", "-j", "2", "."], ["fix", "--diff", "a.py"],
                    ["fix", "a.py"]):
        result = run(tmp_path, *command, console_script=True)
        assert result.returncode == (0 if command == ["fix", "a.py"] else 1), result.stderr
        assert "APX203" in result.stdout + result.stderr or command[0] == "fix"
        assert "Warning" not in result.stderr, (command, result.stderr)
    assert 'torch.amp.GradScaler("cuda")' in (tmp_path / "a.py").read_text()


def test_a_file_whose_fix_is_refused_still_lists_and_counts_its_findings(tmp_path, monkeypatch):
    """Fault injection: a fixer that never settles (each round rewrites the call to itself) makes
    fix refuse the file; its findings are still listed and counted, beside the other files'."""
    import io

    from flake8_no_apex import fixer
    from flake8_no_apex.cli import parser
    from flake8_no_apex.rules import RULES

    rule = next(r for r in RULES if r.code == "APX201")

    def restless(ctx, finding):
        start, end = ctx.source.span(finding.site.node)
        return fixer.plan([fixer.TextEdit(start, end, ctx.source.text[start:end])], fixer.Grade.SAFE)

    planned = fixer._plan  # rows are immutable: the fixer's dispatch takes this one for the rule
    monkeypatch.setattr(fixer, "_plan", lambda ctx, f: restless(ctx, f) if f.rule is rule else planned(ctx, f))
    (tmp_path / "a.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    (tmp_path / "b.py").write_text("from apex import amp\n")
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.chdir(tmp_path)
    args = parser().parse_args(["fix", "a.py", "b.py"])
    code = args.run(args, out=out, err=err)
    assert code == 2
    assert "a.py:2:6: APX201 " in out.getvalue() and "b.py:1:18: APX001 " in out.getvalue()
    assert "a.py: not fixed, the fixes of APX201 still changed the code" in err.getvalue()
    assert err.getvalue().rstrip().endswith("0 files fixed (0 fixes), 2 findings need manual changes")


def test_fix_reports_each_files_migration_as_text_and_json(tmp_path):
    """A team tracks what is left: each file with apex AMP code is migrated (with its notes) or
    refused (with the blocker, file:line), after the run's lines, or in --output-format json."""
    migration = Path(__file__).parent / "apex_migration"
    (tmp_path / "gan.py").write_text((migration / "gan.py").read_text())
    (tmp_path / "loop.py").write_text("from apex import amp\n\nmodel, optimizer = amp.initialize(model, optimizer)\n")
    (tmp_path / "plain.py").write_text("import torch\n")
    result = run(tmp_path, "fix", "--diff", ".", console_script=True)
    assert "apex AMP migration: 1 file refused, 1 file to migrate with --unsafe-fixes" in result.stderr
    assert "  refused   loop.py:3: amp.scale_loss is not used in the module that calls amp.initialize" \
        in result.stderr
    assert "  unsafe    gan.py:27: migrates with --unsafe-fixes" in result.stderr
    result = run(tmp_path, "fix", "--unsafe-fixes", "--output-format", "json", ".", console_script=True)
    report = json.loads(result.stdout)  # stdout is the JSON document alone
    by_file = {entry["file"]: entry for entry in report["migration"]}
    assert set(by_file) == {"gan.py", "loop.py"}
    assert by_file["gan.py"]["status"] == "migrated" and by_file["loop.py"]["status"] == "refused"
    assert by_file["loop.py"]["line"] == 3 and "amp.scale_loss is not used" in by_file["loop.py"]["reason"]
    assert report["fixed"]["gan.py"]["APX102"] == 3
    assert {r["code"] for r in report["remaining"] if r["file"] == "loop.py"} >= {"APX101"}
    assert "scaler.scale(errG).backward()" in (tmp_path / "gan.py").read_text()
    assert "apex AMP migration: 1 file migrated, 1 file refused" in result.stderr
    refused = run(tmp_path, "fix", "--output-format", "json", "--diff", ".")
    assert refused.returncode == 2 and "not with --diff" in refused.stderr


@pytest.mark.parametrize("argv", [
    ["check", "src", "--select", "APX2", "--output-format", "json", "-j", "2", "--no-cache"],
    ["fix", "--diff", "--unsafe-fixes", "--exit-non-zero-on-fix", "a.py"],
    ["rules", "--format", "json"], ["explain", "APX002"], ["server"],
])
def test_the_parser_of_a_named_command_parses_as_the_whole_one(argv, capsys):
    """`parser(command)` builds only the options of the command a run names: the arguments,
    the help and the errors are those of the parser of every command."""
    from flake8_no_apex.cli import parser

    def parsed(made):
        return {key: value for key, value in vars(made.parse_args(argv)).items() if key != "usage_of"}

    assert parsed(parser(argv[0])) == parsed(parser())
    shown = []
    for made in (parser(argv[0]), parser()):
        for extra in (["--help"], ["--frobnicate"]):
            with pytest.raises(SystemExit):
                made.parse_args([argv[0], *extra])
            shown.append(capsys.readouterr())
    assert shown[:2] == shown[2:] and f"usage: flake8-no-apex {argv[0]}" in shown[0].out
