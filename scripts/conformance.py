"""Run the conformance group: make its environment once, then `pytest conformance`.

The environment (torch, Lightning, transformers, pinned in conformance/requirements*.txt) lives
in a cache outside the repository and is rebuilt when the pins change. Released wheels for the
boundary checks are cached beside it. Extra arguments go to pytest.

    python scripts/conformance.py [-k APX201] [-x]
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex"))
REQUIREMENTS = ROOT / "conformance" / "requirements.txt"
NO_DEPS = ROOT / "conformance" / "requirements-no-deps.txt"
PYTHON = "3.11"  # the CPU build of torch on these machines is for CPython 3.11


def interpreter() -> str:
    if f"{sys.version_info.major}.{sys.version_info.minor}" == PYTHON:
        return sys.executable
    found = shutil.which(f"python{PYTHON}")
    if found is None:
        sys.exit(f"the conformance group needs python{PYTHON} (torch 2.13.0's CPU wheel is built for it)")
    return found


def environment() -> Path:
    """The virtual environment for the pins, made (or remade) as needed."""
    pins = hashlib.sha256(REQUIREMENTS.read_bytes() + NO_DEPS.read_bytes()).hexdigest()[:12]
    venv = CACHE / f"conformance-{PYTHON}-{pins}"
    python = venv / "bin" / "python"
    done = venv / ".installed"
    if not done.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([interpreter(), "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
        subprocess.run([*pip, "--no-deps", "-r", str(NO_DEPS)], check=True)
        done.write_text(pins)
    # the project itself, from this checkout (CI clones it somewhere new each time)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", str(ROOT)],
                   check=True)
    return python


def main(argv) -> int:
    python = environment()
    # in one process: the default run's `-n auto` (pytest-xdist) is not installed beside the libraries
    return subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=-ra",
                           str(ROOT / "conformance"), *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
