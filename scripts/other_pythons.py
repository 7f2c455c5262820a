"""Run the whole test suite (the slow group too, every command as a real process) on other
CPython versions (the lowest and highest supported, in CI).

Each version gets a virtual environment in the cache (`~/.cache/flake8-no-apex/`), made once;
the interpreter is `pythonX.Y` on the PATH, or pyenv's. Arguments: versions, e.g. 3.10 3.13.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex"))


def interpreter(version: str) -> str:
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(pyenv.glob(f"{version}.*/bin/python{version}")) if pyenv.is_dir() else []
    if not candidates:
        sys.exit(f"no CPython {version} found (python{version} on the PATH, or pyenv's)")
    return str(candidates[-1])


def run(version: str) -> int:
    venv = CACHE / f"tests-{version}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([interpreter(version), "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e",
                    f"{ROOT}[test]"], check=True)
    print(f"--- the whole suite on CPython {version}, each command a real process", flush=True)
    environment = {**os.environ, "FLAKE8_NO_APEX_TESTS": "binary"}  # tests/helpers.py: run_command
    return subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", ""], cwd=ROOT,
                          env=environment).returncode


def main(versions) -> int:
    failed = [version for version in versions if run(version) != 0]
    if failed:
        print(f"the tests failed on CPython {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
