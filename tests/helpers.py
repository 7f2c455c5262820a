"""Shared test helpers: what the checker reports for a snippet, and the commands run."""
from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from flake8_no_apex.checker import check_tree

# The command, run by the interpreter running the tests (whatever is first on the PATH may
# belong to another environment, or be missing); test_cli runs the installed console script too.
COMMAND = [sys.executable, "-m", "flake8_no_apex"]
CONSOLE_SCRIPT = str(Path(sys.executable).with_name("flake8-no-apex"))
FLAKE8 = [sys.executable, "-m", "flake8"]
# Set to "binary" (CI does, for the whole suite on other Pythons) and every command runs as a
# process of its own, exactly as a user starts it; by default this tool's commands and flake8 run
# in the test's process, as the same `main` on the same arguments, which keeps the default run fast.
BINARY = os.environ.get("FLAKE8_NO_APEX_TESTS") == "binary"


def run_command(argv: Sequence[str], cwd: Optional[Path] = None, input=None, env: Optional[dict] = None,
                text: bool = False, capture_output: bool = True, check: bool = False,
                timeout: Optional[float] = None) -> subprocess.CompletedProcess:
    """subprocess.run for `python -m flake8_no_apex ...` and `python -m flake8 ...`: their `main`
    in this process (standard streams, working directory and environment swapped for the call),
    or a real process where FLAKE8_NO_APEX_TESTS=binary; any other command is a process."""
    argv = list(argv)
    inner = argv[:3] in (COMMAND, FLAKE8) and not BINARY
    if not inner:
        return subprocess.run(argv, cwd=cwd, input=input, env=env, text=text, capture_output=capture_output,
                              check=check, timeout=timeout)
    data = input.encode() if isinstance(input, str) else (input or b"")
    stdout, stderr = io.BytesIO(), io.BytesIO()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    wrappers = (io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
                io.TextIOWrapper(stdout, encoding="utf-8", write_through=True),
                io.TextIOWrapper(stderr, encoding="utf-8", write_through=True))
    sys.stdin, sys.stdout, sys.stderr = wrappers
    saved_env, previous = dict(os.environ), os.getcwd()
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        with warnings.catch_warnings():  # a fresh interpreter's filters, printing to its stderr
            warnings.resetwarnings()
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.showwarning = _print_warning
            code = _main(argv[2], argv[3:])
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.stdin, sys.stdout, sys.stderr = streams
        for wrapper in wrappers:  # what was written stays in the buffers, which stay open
            wrapper.flush()
            wrapper.detach()

    def decoded(raw: bytes):  # as text=True reads a pipe: universal newlines
        return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline=None).read() if text else raw

    result = subprocess.CompletedProcess(argv, code, decoded(stdout.getvalue()), decoded(stderr.getvalue()))
    if check:
        result.check_returncode()
    return result


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """What an interpreter does with a warning nobody records (pytest records them)."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _main(module: str, args: List[str]) -> int:
    try:
        if module == "flake8":
            from flake8 import utils
            from flake8.main.cli import main

            utils.stdin_get_value.cache_clear()  # flake8 reads standard input once per process
            return main(args)
        from flake8_no_apex.cli import main

        return main(args)
    except SystemExit as exit:  # argparse's usage errors, --help, --version
        return exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)


def _imported(stderr: str) -> set:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def run_with_imports(*args: str, cwd: Path) -> Tuple[subprocess.CompletedProcess, set]:
    """Run the command with these arguments, and name the modules it imported beyond what the
    interpreter imports before any code runs (site and the environment's .pth files may import
    anything, tempfile among them: that is not ours to keep off the path)."""
    startup = subprocess.run([COMMAND[0], "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    run = subprocess.run([COMMAND[0], "-X", "importtime", *COMMAND[1:], *args], cwd=cwd, capture_output=True,
                         text=True)
    return run, _imported(run.stderr) - _imported(startup.stderr)


# timm's pattern: a name bound to a no-op context manager, and to autocast in one branch only
CONDITIONAL_AUTOCAST = """\
from contextlib import suppress
import torch
def main(native):
    amp_autocast = suppress
    if native:
        amp_autocast = torch.cuda.amp.autocast
    with amp_autocast():
        pass
"""


def report(source: str, **kwargs) -> List[Tuple[int, int, str]]:
    """(line, 1-based column, code) of every finding, as flake8 would print them."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    return [(f.line, f.col + 1, f.code) for f in check_tree(tree, **kwargs)]


def messages(source: str, **kwargs) -> List[str]:
    return [f.message for f in check_tree(ast.parse(textwrap.dedent(source)), **kwargs)]


def codes(source: str, **kwargs) -> List[str]:
    return [code for _, _, code in report(source, **kwargs)]


def check_no_findings(source: str) -> None:
    """Nothing to report: the precision half of every rule."""
    assert report(source) == []


# the canonical apex AMP training step, which `fix --unsafe-fixes` migrates
CANONICAL_STEP = ("from apex import amp\n\n"
                  "model, optimizer = amp.initialize(model, optimizer, opt_level=\"O1\")\n"
                  "for x, y in loader:\n"
                  "    optimizer.zero_grad()\n"
                  "    loss = criterion(model(x), y)\n"
                  "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
                  "        scaled_loss.backward()\n"
                  "    optimizer.step()\n")
