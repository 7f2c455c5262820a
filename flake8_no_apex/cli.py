"""The `flake8-no-apex` command: `fix` rewrites deprecated AMP code in place."""
from __future__ import annotations

import argparse
import difflib
import fnmatch
import io
import os
import stat
import sys
import tempfile
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence

from . import __version__
from .fixer import FixError, fix_text
from .rules import CODES, DEFAULT_OFF
from .spellings import spell
from .targets import TargetError, Targets, detect, parse_option

# flake8's default exclusions, and the trees a tool that writes must never touch
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg",
                   ".venv", "venv", "site-packages", "node_modules", "build", "dist")


class InputError(Exception):
    """A file that cannot be read, decoded or parsed."""


# --- files ------------------------------------------------------------------------------------
def _excluded(path: Path, patterns: Sequence[str]) -> bool:
    """flake8's rule: a pattern matches the base name or the absolute path."""
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(str(path.resolve()), p) for p in patterns)


def python_files(paths: Sequence[str], exclude: Sequence[str]) -> Iterator[Path]:
    for name in paths:
        path = Path(name)
        if path.is_file():
            if not _excluded(path, exclude):
                yield path
            continue
        if not path.is_dir():
            raise InputError(f"{name}: no such file or directory")
        for directory, subdirectories, files in os.walk(path):
            subdirectories[:] = sorted(d for d in subdirectories if not _excluded(Path(directory, d), exclude))
            for file in sorted(files):
                candidate = Path(directory, file)
                if file.endswith(".py") and not _excluded(candidate, exclude):
                    yield candidate


@dataclass
class Decoded:
    raw: bytes
    text: str
    encoding: str  # "utf-8-sig" keeps a BOM; an encoding cookie keeps its codec


def read(path: Path) -> Decoded:
    try:
        raw = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return Decoded(raw, raw.decode(encoding), encoding)  # newlines kept as they are
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None


def write_atomically(path: Path, original: bytes, new: bytes) -> None:
    """Replace the file in one step, keeping its mode; skip it if it changed meanwhile."""
    if path.read_bytes() != original:
        raise InputError(f"{path}: changed on disk while being fixed; left as it is")
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(new)
        os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


# --- selection -------------------------------------------------------------------------------
def selector(select: Optional[str], ignore: Optional[str]) -> Callable[[str], bool]:
    """Codes by prefix, as flake8 selects them; APX107/APX108 only when selected."""
    chosen = [p.strip() for p in (select or "").split(",") if p.strip()]
    ignored = tuple(p.strip() for p in (ignore or "").split(",") if p.strip())
    for prefix in chosen + list(ignored):
        if not any(code.startswith(prefix) for code in CODES):
            raise InputError(f"no code starts with {prefix!r}")

    def selected(code: str) -> bool:
        picked = code.startswith(tuple(chosen)) if chosen else code not in DEFAULT_OFF
        return picked and not code.startswith(ignored or ("\0",))

    return selected


# --- the fix command -------------------------------------------------------------------------
@dataclass
class Summary:
    files: int = 0
    fixes: int = 0
    manual: int = 0
    unsafe: int = 0
    errors: List[str] = field(default_factory=list)
    recipes: List[str] = field(default_factory=list)


def fix_file(path: Path, args: argparse.Namespace, selected, summary: Summary, out, report) -> None:
    decoded = read(path)
    targets = args.targets or detect(str(path))
    try:
        result = fix_text(decoded.text, targets.floors, selected, unsafe=args.unsafe_fixes)
    except SyntaxError as error:
        raise InputError(f"{path}: cannot parse: {error.msg} (line {error.lineno})") from None
    except FixError as error:
        raise InputError(f"{path}: not fixed, {error}") from None
    for finding in result.remaining:
        print(f"{path}:{finding.line}:{finding.col + 1}: {finding.message}", file=report)
        recipe = finding.rule.recipe.format(**spell(targets.floors))
        if recipe and recipe not in summary.recipes:
            summary.recipes.append(recipe)
    summary.manual += len(result.remaining)
    summary.unsafe += result.unsafe
    if result.text == decoded.text:
        return
    summary.files += 1
    summary.fixes += len(result.fixed)
    if args.diff:
        diff = difflib.unified_diff(
            decoded.text.splitlines(keepends=True), result.text.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        )
        out.writelines(line if line.endswith(("\n", "\r")) else line + "\n" for line in diff)
    else:
        write_atomically(path, decoded.raw, result.text.encode(decoded.encoding))


def run_fix(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    summary = Summary()
    report = err if args.diff else out  # with --diff, stdout is a clean patch
    try:
        selected = selector(args.select, args.ignore)
        files = list(python_files(args.paths or ["."], [*args.exclude.split(","), *args.extend_exclude.split(",")]))
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    for path in files:
        try:
            fix_file(path, args, selected, summary, out, report)
        except InputError as error:
            summary.errors.append(str(error))
            print(f"flake8-no-apex: {error}", file=err)
    for recipe in summary.recipes:
        print(recipe, file=report)
    verb = "would be fixed" if args.diff else "fixed"
    line = f"{summary.files} file{'s' * (summary.files != 1)} {verb} ({summary.fixes} fix{'es' * (summary.fixes != 1)})"
    line += f", {summary.manual} finding{'s' * (summary.manual != 1)} need{'s' * (summary.manual == 1)} manual changes"
    if summary.unsafe and not args.unsafe_fixes:
        line += f" ({summary.unsafe} fixable with --unsafe-fixes)"
    print(line, file=err)
    if summary.errors:
        return 2
    return 1 if summary.files or summary.manual else 0


def _targets(text: str) -> Optional[Targets]:
    try:
        return parse_option(text)
    except TargetError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="flake8-no-apex", description="Find and fix deprecated AMP code.")
    main.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = main.add_subparsers(dest="command", required=True)
    fix = commands.add_parser(
        "fix",
        help="rewrite deprecated AMP code in place",
        description="Apply the safe fixes (and the unsafe ones with --unsafe-fixes); report what needs a person. "
        "Exit status: 0 nothing to change, 1 files changed (or would be, with --diff) or findings remain, "
        "2 usage or input errors.",
    )
    fix.add_argument("paths", nargs="*", help="files and directories (default: .)")
    fix.add_argument("--diff", action="store_true", help="print a unified diff instead of writing files")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    fix.add_argument("--select", help="comma-separated code prefixes to fix (default: all but APX107, APX108)")
    fix.add_argument("--ignore", help="comma-separated code prefixes to leave alone")
    fix.add_argument("--exclude", default=",".join(DEFAULT_EXCLUDE), help="comma-separated patterns to skip")
    fix.add_argument("--extend-exclude", default="", help="more patterns to skip")
    fix.add_argument("--apex-target-versions", dest="targets", type=_targets, default=None,
                     help="oldest supported releases, e.g. torch=2.1,lightning=1.9 (default: auto)")
    fix.set_defaults(run=run_fix)
    return main


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
