"""Shared test helpers: what the checker reports for a snippet."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

from flake8_no_apex.checker import check_tree

# The command, run by the interpreter running the tests (whatever is first on the PATH may
# belong to another environment, or be missing); test_cli runs the installed console script too.
COMMAND = [sys.executable, "-m", "flake8_no_apex"]
CONSOLE_SCRIPT = str(Path(sys.executable).with_name("flake8-no-apex"))


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
