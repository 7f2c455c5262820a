"""Measure `check` on the input kinds beyond Python (notebooks, shell scripts, Dockerfiles, CI
workflows, JSON configs, and with `--check-docs` Markdown/RST) on real files nobody here wrote:
recall and false positives per kind and per code.

scripts/input_corpus.txt pins repositories at commits (`repo OWNER/NAME COMMIT`) and lists the
true findings a person read off their files (`expect PATH PLACE CODE`, PLACE a line or
`cell N:LINE`). Every file of those kinds in each pinned tree is materialized from the git
mirrors that a session's `fetch github:OWNER/NAME` brings (under $FLAKE8_NO_APEX_MIRRORS,
default /work/.mirror) into a cache outside the repository, and `check` runs over the tree as a
user would. A finding not listed is a false positive; a listed one not found is a miss. The
mirrors exist in sessions, not in CI: this is a session measurement.

    python scripts/input_corpus.py [--json FILE] [--show]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path, PurePath

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "scripts" / "input_corpus.txt"
MIRRORS = Path(os.environ.get("FLAKE8_NO_APEX_MIRRORS", "/work/.mirror"))
CACHE = Path(os.environ.get("FLAKE8_NO_APEX_CACHE", Path.home() / ".cache" / "flake8-no-apex")) / "input-corpus"
KINDS = ("notebook", "shell", "json", "docs")  # the kinds measured here (Python has its own corpora)

sys.path.insert(0, str(ROOT))
from flake8_no_apex.inputs import kind_of  # noqa: E402  (the checkout's own registry)


def read_list():
    """[(repository, commit)] and {(repository, path, place, code)} expected."""
    repositories, expected, current = [], set(), None
    for line in LIST.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "repo":
            current = (words[1], words[2])
            repositories.append(current)
        elif words[0] == "expect":
            *path, place, code = words[1:]
            if path[-1] == "cell":  # `cell N:LINE`
                path, place = path[:-1], f"cell {place}"
            expected.add((current[0], " ".join(path), place, code))
    return repositories, expected


def git_dir(repository: str) -> Path:
    mirror = MIRRORS / repository.replace("/", "+") / "repo"
    return mirror / ".git" if (mirror / ".git").is_dir() else mirror


def materialize(repository: str, commit: str) -> Path:
    """The files of the measured kinds of the pinned tree, written once into the cache."""
    home = CACHE / f"{repository.replace('/', '+')}@{commit[:12]}"
    done = home / ".complete"
    if done.exists() and done.read_text() == f"{commit} {' '.join(KINDS)}":
        return home
    names = subprocess.run(["git", "--git-dir", str(git_dir(repository)), "ls-tree", "-r", "--name-only", "-z", commit],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        if kind_of(PurePath(name)).name not in KINDS:
            continue
        shown = subprocess.run(["git", "--git-dir", str(git_dir(repository)), "show", f"{commit}:{name}"],
                               capture_output=True)
        if shown.returncode != 0:  # a large file the snapshot lists but does not hold
            continue
        content = shown.stdout
        target = home / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    done.write_text(f"{commit} {' '.join(KINDS)}")
    return home


def findings(home: Path):
    result = subprocess.run([sys.executable, "-m", "flake8_no_apex", "check", "--no-cache", "--exit-zero",
                             "--check-docs", "--output-format", "json", "."], cwd=home, capture_output=True, text=True)
    if result.returncode not in (0, 2) or not result.stdout:  # 2: files (or cells) that could not be read
        sys.exit(f"check failed in {home}:\n{result.stderr}")
    errors = [line for line in result.stderr.splitlines() if line.startswith("flake8-no-apex: ")]
    rows = json.loads(result.stdout)
    return {(row["path"], f"cell {row['cell']}:{row['line']}" if "cell" in row else str(row["line"]), row["code"])
            for row in rows}, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the measurement here")
    parser.add_argument("--show", action="store_true", help="list every finding, true or not")
    args = parser.parse_args()
    repositories, expected = read_list()
    files = Counter()
    found_all, errors_all = set(), []
    for repository, commit in repositories:
        home = materialize(repository, commit)
        for path in home.rglob("*"):
            if path.is_file() and path.name != ".complete":
                files[kind_of(path.relative_to(home)).name] += 1
        found, errors = findings(home)
        errors_all += [f"{repository}: {error}" for error in errors]
        found_all |= {(repository, path.replace("\\", "/"), place, code) for path, place, code in found}
    true = found_all & expected
    missed, false = expected - found_all, found_all - expected
    per_kind = defaultdict(Counter)
    per_code = defaultdict(Counter)
    for label, rows in (("expected", expected), ("found", true), ("missed", missed), ("false", false)):
        for repository, path, place, code in rows:
            per_kind[kind_of(PurePath(path)).name][label] += 1
            per_code[code][label] += 1
    print(f"files read: {dict(files)}; errors: {len(errors_all)}")
    for name, counts in [*sorted(per_kind.items()), ("all", Counter())] + sorted(per_code.items()):
        counts = counts or Counter(expected=len(expected), found=len(true), missed=len(missed), false=len(false))
        recall = counts["found"] / counts["expected"] if counts["expected"] else float("nan")
        print(f"{name:10} expected {counts['expected']:3}  found {counts['found']:3}  missed {counts['missed']:3}  "
              f"false positives {counts['false']:3}  recall {recall:.2f}")
    for label, rows in (("missed", missed), ("false positive", false), *((("found", true),) if args.show else ())):
        for repository, path, place, code in sorted(rows):
            print(f"  {label}: {repository} {path}:{place} {code}")
    for error in errors_all:
        print(f"  error: {error}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "files": files, "expected": len(expected), "found": len(true), "missed": sorted(missed),
            "false_positives": sorted(false), "errors": errors_all,
            "per_kind": per_kind, "per_code": per_code}, indent=2, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
