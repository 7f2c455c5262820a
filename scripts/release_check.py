"""Check that the project is releasable: `python -m build` makes an sdist and a wheel, `twine
check --strict` passes, the wheel carries the rule docs (its description is the README followed
by docs/rules.md, with a section per code) and installs cleanly in a new virtual environment, where the plugin, the
commands and the language server run.

Run from a checkout: `python scripts/release_check.py` (CI runs it). It installs `build` and
`twine` into the running environment if they are missing, and works in a temporary directory.
"""
from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from flake8_no_apex.rules import CODES  # noqa: E402


def run(*command, cwd=None, expect=0) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    if result.returncode != expect:
        sys.exit(f"{' '.join(map(str, command))} exited {result.returncode}, not {expect}:\n"
                 f"{result.stdout}{result.stderr}")
    return result


def main() -> int:
    run(sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "build", "twine")
    with tempfile.TemporaryDirectory() as scratch:
        dist = Path(scratch, "dist")
        run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", dist, ROOT)
        (wheel,), (sdist,) = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
        run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            metadata = email.message_from_string(
                archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
            entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        description = metadata.get_payload()
        missing = [code for code in CODES if f"### {code}" not in description]
        assert not missing, f"the wheel's description lacks the docs of {missing}"
        assert description.lstrip().startswith("# flake8-no-apex"), "the description starts with the README"
        assert metadata["Description-Content-Type"] == "text/markdown"
        assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
        assert "flake8_no_apex/rules/apex_amp.py" in names and "flake8_no_apex/server.py" in names
        assert "APX = flake8_no_apex.plugin:Plugin" in entry_points
        assert "flake8-no-apex = flake8_no_apex.cli:command" in entry_points
        assert not [n for n in names if n.startswith(("tests/", "conformance/", "scripts/"))]
        with tarfile.open(sdist) as archive:
            members = {Path(*Path(m).parts[1:]).as_posix() for m in archive.getnames()}
        for needed in ("README.md", "CONTRIBUTING.md", "LICENSE", "docs/timeline.md", "docs/rules.md",
                       "docs/configuration.md", "action/run_check.py", "examples/legacy_train.py", "pyproject.toml",
                       ".pre-commit-hooks.yaml", "tests/test_rules.py"):
            assert needed in members, f"the sdist lacks {needed}"

        environment = Path(scratch, "venv")
        venv.create(environment, with_pip=True)
        python, bin_dir = environment / "bin" / "python", environment / "bin"
        run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[server]")
        example = ROOT / "examples" / "legacy_train.py"
        flake8 = run(bin_dir / "flake8", "--select", "APX", example, expect=1).stdout
        check = run(bin_dir / "flake8-no-apex", "check", example, expect=1).stdout
        assert flake8.count(": APX") == check.count(": APX") > 0, (flake8, check)
        for code in CODES:
            assert code in run(bin_dir / "flake8-no-apex", "explain", code).stdout
        run(python, "-c", "import flake8_no_apex.server")
        print(f"releasable: {wheel.name} and {sdist.name} built, twine check passed, the wheel documents "
              f"{len(CODES)} codes and installs cleanly ({flake8.count(': APX')} findings on the example)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
