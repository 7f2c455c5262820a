"""Measure the apex AMP migration on real training code nobody here wrote.

scripts/apex_corpus.txt pins each script (repository, commit, path) with the modules of its
project it works with. This script materializes them from the git mirrors that a session's
`fetch github:OWNER/NAME` brings (under $FLAKE8_NO_APEX_MIRRORS, default /work/.mirror) into a
cache outside the repository, runs `fix --unsafe-fixes` over each project as a user would (one
run per project, so helpers in other modules are planned with the script), and reports, per
script: migrated (and whether the result, with the helper modules fixed in the same run,
compiles, keeps no apex AMP and adds no undefined name; other new pyflakes messages are listed)
or refused, with the blocker the migration report names.

    python scripts/apex_corpus.py [--json FILE] [-k SUBSTRING]

Entries named `pypi:NAME` pin a release (its version in place of the commit) whose wheel holds
the code: example trainers of the 2019-2020 libraries people fine-tuned with. The mirrors exist
in sessions, not in CI: this is a session measurement.
"""
from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "scripts" / "apex_corpus.txt"
MIRRORS = Path(os.environ.get("FLAKE8_NO_APEX_MIRRORS", "/work/.mirror"))
CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex")) / "apex-corpus"
APEX_AMP_CODES = {"APX101", "APX102", "APX103", "APX106"}


def entries():
    """(repository, commit, script, helpers) for each pinned script."""
    for line in LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            repository, commit, script, *helpers = line.split()
            yield repository, commit, script, helpers


def git_dir(repository: str) -> Path:
    mirror = MIRRORS / repository.replace("/", "+") / "repo"
    return mirror / ".git" if (mirror / ".git").is_dir() else mirror


def released(name: str, version: str, path: str) -> bytes:
    """A file of a release on PyPI (`pypi:NAME VERSION` in the list), from its wheel."""
    wheels = CACHE.parent / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(f"{name.replace('-', '_')}-{version}-")]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        f"{name}=={version}", "-d", str(wheels)], check=True)
        found = [w for w in wheels.glob("*.whl")
                 if w.name.lower().startswith(f"{name.replace('-', '_')}-{version}-")]
    with zipfile.ZipFile(found[0]) as wheel:
        return wheel.read(path)


def materialize() -> dict:
    """project directory -> the scripts of it to judge; each file read from its mirror (or the
    release's wheel) once."""
    projects = defaultdict(list)
    for repository, commit, script, helpers in entries():
        home = CACHE / f"{repository.replace('/', '+').replace(':', '+')}@{commit[:12]}"
        for path in [script, *helpers]:
            target = home / path
            if target.exists():
                continue
            if repository.startswith("pypi:"):
                content = released(repository[len("pypi:"):], commit, path)
            else:
                shown = subprocess.run(["git", "--git-dir", str(git_dir(repository)), "show", f"{commit}:{path}"],
                                       capture_output=True)
                if shown.returncode:
                    sys.exit(f"{repository}@{commit[:12]}:{path} is not in the mirror: "
                             f"fetch github:{repository} first ({shown.stderr.decode().strip()})")
                content = shown.stdout
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        projects[home].append((script, helpers))
    return projects


def pyflakes(text: str, name: str) -> set:
    from pyflakes.api import check
    from pyflakes.reporter import Reporter

    out = io.StringIO()
    check(text, name, Reporter(out, out))
    return {line.split(":", 2)[2].split(" ", 1)[1] for line in out.getvalue().splitlines() if line.count(":") >= 2}


def apex_amp_left(text: str) -> list:
    tree = ast.parse(text)
    left = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module.startswith(("apex.amp", "apex.fp16_utils"))
                                                                 or node.module == "apex" and any(
                    a.name in ("amp", "fp16_utils") for a in node.names)):
            left.append(node.lineno)
        if isinstance(node, ast.Import) and any(a.name.startswith(("apex.amp", "apex.fp16_utils")) for a in node.names):
            left.append(node.lineno)
    return left


def measure(home: Path, scripts: list) -> list:
    work = Path(tempfile.mkdtemp(prefix="apex-corpus-"))
    try:
        project = work / home.name
        shutil.copytree(home, project)
        fixed = subprocess.run([sys.executable, "-m", "flake8_no_apex", "fix", "--unsafe-fixes",
                                "--output-format", "json", "."], cwd=project, capture_output=True, text=True)
        try:
            report = json.loads(fixed.stdout)
        except ValueError:
            return [{"script": f"{home.name}/{s}", "status": "error", "why": fixed.stderr.strip()[-400:]}
                    for s in scripts]
        migrations = {Path(entry["file"]).as_posix(): entry for entry in report["migration"]}
        results = []
        for script, helpers in scripts:
            entry = migrations.get(script, {"status": "untouched"})
            result = {"script": f"{home.name}/{script}", "status": entry["status"]}
            if entry["status"] == "refused":
                result["why"] = f"{script}:{entry['line']}: {entry['reason']}"
            elif entry["status"] == "migrated":
                problems, lint = [], []
                for path in [script, *helpers]:
                    before = (home / path).read_text(errors="replace")
                    after = (project / path).read_text(errors="replace")
                    try:
                        compile(after, path, "exec")
                    except SyntaxError as error:
                        problems.append(f"{path} does not compile: {error}")
                        continue
                    if migrations.get(path, {}).get("status") == "migrated" and apex_amp_left(after):
                        problems.append(f"{path}: apex AMP imports left on lines {apex_amp_left(after)}")
                    new = pyflakes(after, path) - pyflakes(before, path)
                    undefined = sorted(m for m in new if "undefined name" in m or "referenced before" in m)
                    if undefined:
                        problems.append(f"{path}: new undefined names: {undefined}")
                    lint += [f"{path}: {m}" for m in sorted(set(new) - set(undefined))]
                result["notes"] = entry.get("notes", [])
                if lint:
                    result["lint"] = lint
                if problems:
                    result["status"], result["why"] = "wrong", "; ".join(problems)
            results.append(result)
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--json", metavar="FILE", help="write every result as JSON")
    options.add_argument("-k", metavar="SUBSTRING", help="only projects whose name holds it")
    args = options.parse_args(argv)
    results = []
    for home, scripts in materialize().items():
        if args.k and args.k not in home.name:
            continue
        results += measure(home, scripts)
    counts = Counter(r["status"] for r in results)
    for result in results:
        print(f"{result['status']:9} {result['script']}" + (f"\n          {result['why']}" if "why" in result else ""))
    migrated = counts["migrated"]
    print(f"\n{migrated} of {len(results)} scripts migrated ({100 * migrated / max(len(results), 1):.0f} %); "
          + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if status != "migrated"))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
