"""The `flake8-no-apex` command: `check`, `fix`, `rules` and `explain`."""
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
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from . import __version__, docs, prefilter, report
from .config import ConfigError, Settings, load
from .edits import Source
from .fixer import FixError, analyse, fix_text, is_shim, noqa_lines
from .nonpython import YAML_SUFFIXES, check_dependencies, check_yaml, is_dependency_file, looks_like_lightning_config
from .rules import CODES, RULES
from .spellings import spell
from .targets import TargetError, Targets, detect, parse_option


class InputError(Exception):
    """A file that cannot be read, decoded or parsed, or a setting that cannot be used."""


# --- files ------------------------------------------------------------------------------------
def _excluded(path: Path, patterns: Sequence[str]) -> bool:
    """flake8's rule: a pattern matches the base name or the absolute path."""
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(str(path.resolve()), p) for p in patterns)


def _wanted(path: Path, other_files: bool) -> bool:
    name = path.name
    return name.endswith(".py") or (other_files and (name.endswith(YAML_SUFFIXES) or is_dependency_file(name)))


def files(paths: Sequence[str], exclude: Sequence[str], other_files: bool = False) -> Iterator[Path]:
    """Python modules below `paths` (and, for `check`, YAML and dependency files); a file
    named explicitly is taken whatever its name."""
    for name in paths:
        path = Path(name)
        if path.is_file():
            if not _excluded(path, exclude):
                yield path
            continue
        if not path.is_dir():
            raise InputError(f"{name}: no such file or directory")
        for directory, subdirectories, names in os.walk(path):
            subdirectories[:] = sorted(d for d in subdirectories if not _excluded(Path(directory, d), exclude))
            for file in sorted(names):
                candidate = Path(directory, file)
                if _wanted(candidate, other_files) and not _excluded(candidate, exclude):
                    yield candidate


@dataclass
class Decoded:
    raw: bytes
    text: str
    encoding: str  # "utf-8-sig" keeps a BOM; an encoding cookie keeps its codec


def read(path: Path) -> Decoded:
    try:
        raw = path.read_bytes()
        if not path.name.endswith(".py"):
            return Decoded(raw, raw.decode("utf-8-sig"), "utf-8-sig")
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


# --- settings --------------------------------------------------------------------------------
def settings_of(args: argparse.Namespace) -> Settings:
    """Config files, then the command line."""
    try:
        settings = load(Path.cwd())
    except ConfigError as error:
        raise InputError(str(error)) from None
    keys = ("select", "extend_select", "ignore", "extend_ignore", "exclude", "extend_exclude")
    given = {key: getattr(args, key) for key in keys if getattr(args, key, None) is not None}
    if given:
        settings.update(given, "command line")
    if args.apex_target_versions is not None:
        settings.targets = args.apex_target_versions
    try:
        settings.selector()
        parse_option(settings.targets)
    except (ConfigError, TargetError) as error:
        raise InputError(str(error)) from None
    return settings


def targets_for(settings: Settings, path: Path) -> Targets:
    return parse_option(settings.targets) or detect(str(path))


# --- check -----------------------------------------------------------------------------------
def _located(source: Source, finding, path: str, plan) -> report.Reported:
    """A finding with character columns (flake8's are UTF-8 bytes), its end and its fix."""
    node = finding.site.node
    line, column = source.position(source.offset(finding.line, finding.col))
    end_line, end_column = line, column
    if getattr(node, "end_lineno", None) is not None:
        end_line, end_column = source.position(source.offset(node.end_lineno, node.end_col_offset))
    edits = []
    if plan is not None:
        for edit in plan.edits:
            (first_line, first_column), (last_line, last_column) = map(source.position, (edit.start, edit.end))
            edits.append({"start": {"line": first_line, "column": first_column},
                          "end": {"line": last_line, "column": last_column}, "content": edit.text})
    grade = (plan.grade if plan is not None else finding.rule.fix.grade).value
    return report.Reported(path, line, column, end_line, end_column, finding.code, finding.message, grade, edits)


def check_file(path: Path, settings: Settings) -> List[report.Reported]:
    """Findings of one file, of any kind; raises InputError."""
    decoded = read(path)
    selected = settings.selector()
    floors = targets_for(settings, path).floors
    if path.name.endswith(".py"):
        if not prefilter.default().may_match(decoded.text):
            return []
        try:
            source, planned = analyse(decoded.text, floors, selected)
        except SyntaxError as error:
            raise InputError(f"{path}: cannot parse: {error.msg} (line {error.lineno})") from None
        return [_located(source, finding, str(path), plan) for finding, plan in planned]
    if path.name.endswith(YAML_SUFFIXES):
        found = check_yaml(decoded.text, floors) if looks_like_lightning_config(decoded.text) else []
    else:
        found = check_dependencies(path.name, decoded.text, floors)
    noqa = noqa_lines(Source(decoded.text))
    return [
        report.Reported(str(path), f.line, f.col + 1, f.line, f.col + 1, f.code, f.message, f.rule.fix.grade.value)
        for f in found if selected(f.code) and not noqa(f.line, f.code)
    ]


def _internal_error(path: Path, action: str, error: BaseException) -> str:
    """One line for a bug (or a panic inside a native library) met on one file."""
    return f"{path}: {action}, internal error ({type(error).__name__}: {error}); please report it"


def _check_one(job: Tuple[Path, Settings]) -> Tuple[List[report.Reported], Optional[str]]:
    path, settings = job
    try:
        return check_file(path, settings), None
    except InputError as error:
        return [], str(error)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # the file's error, not the run's: the other files go on
        return [], _internal_error(path, "not checked", error)


def run_check(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    try:
        settings = settings_of(args)
        paths = list(files(args.paths or ["."], [*settings.exclude, *settings.extend_exclude], other_files=True))
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    jobs = [(path, settings) for path in paths]
    workers = (os.cpu_count() or 1) if args.jobs == "auto" else int(args.jobs)
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(_check_one, jobs, chunksize=8))
    else:
        outcomes = [_check_one(job) for job in jobs]
    items = [item for found, _ in outcomes for item in found]
    errors = [error for _, error in outcomes if error]
    for error in errors:
        print(f"flake8-no-apex: {error}", file=err)
    if args.show_targets:
        for root in sorted({targets_for(settings, path).describe() for path in paths}):
            print(f"targets: {root}", file=err)
    formats = {"text": report.text, "json": report.as_json, "github": report.github,
               "sarif": lambda found: report.sarif(found, Path.cwd().as_uri() + "/")}
    out.write(formats[args.format](items))
    if args.statistics:
        out.write(report.statistics(items))
    if errors:
        return 2
    return 1 if items and not args.exit_zero else 0


# --- fix -------------------------------------------------------------------------------------
@dataclass
class Summary:
    files: int = 0
    fixes: int = 0
    manual: int = 0
    unsafe: int = 0
    shims: int = 0
    errors: List[str] = field(default_factory=list)
    recipes: List[str] = field(default_factory=list)


def fix_file(path: Path, args: argparse.Namespace, settings: Settings, summary: Summary, out, report_to) -> None:
    decoded = read(path)
    targets = targets_for(settings, path)
    try:
        result = fix_text(decoded.text, targets.floors, settings.selector(), unsafe=args.unsafe_fixes)
    except SyntaxError as error:
        raise InputError(f"{path}: cannot parse: {error.msg} (line {error.lineno})") from None
    except FixError as error:
        raise InputError(f"{path}: not fixed, {error}") from None
    spelled = spell(targets.floors)
    for finding in result.remaining:
        shim = " (in a compatibility shim: left as it is)" if is_shim(finding) else ""
        print(f"{path}:{finding.line}:{finding.col + 1}: {finding.message}{shim}", file=report_to)
        recipe = finding.rule.recipe.format(**spelled)
        if recipe and recipe not in summary.recipes:
            summary.recipes.append(recipe)
    summary.manual += len(result.remaining)
    summary.unsafe += result.unsafe
    summary.shims += result.shims
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


def _plural(count: int, word: str, plural: str) -> str:
    return f"{count} {word if count == 1 else plural}"


def run_fix(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    summary = Summary()
    report_to = err if args.diff else out  # with --diff, stdout is a clean patch
    try:
        settings = settings_of(args)
        paths = list(files(args.paths or ["."], [*settings.exclude, *settings.extend_exclude]))
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    for path in paths:
        try:
            fix_file(path, args, settings, summary, out, report_to)
        except InputError as error:
            summary.errors.append(str(error))
            print(f"flake8-no-apex: {error}", file=err)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # the file's error, not the run's: the other files go on
            summary.errors.append(_internal_error(path, "not fixed", error))
            print(f"flake8-no-apex: {summary.errors[-1]}", file=err)
    for recipe in summary.recipes:
        print(recipe, file=report_to)
    line = (f"{_plural(summary.files, 'file', 'files')} {'would be fixed' if args.diff else 'fixed'} "
            f"({_plural(summary.fixes, 'fix', 'fixes')}), "
            f"{_plural(summary.manual, 'finding needs', 'findings need')} manual changes")
    notes = [f"{summary.unsafe} fixable with --unsafe-fixes"] if summary.unsafe and not args.unsafe_fixes else []
    if summary.shims:
        notes.append(f"{summary.shims} in compatibility shims, left as they are")
    if notes:
        line += f" ({'; '.join(notes)})"
    print(line, file=err)
    if summary.errors:
        return 2
    return 1 if summary.files or summary.manual else 0


# --- rules and explain -----------------------------------------------------------------------
def run_rules(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    out.write("\n".join(docs.timeline_table()) + "\n")
    return 0


def run_explain(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    code = args.code.upper()
    rows = [rule for rule in RULES if rule.code == code]
    if not rows:
        print(f"flake8-no-apex: unknown code {args.code!r}; known: {', '.join(CODES)}", file=err)
        return 2
    out.write(f"{code}\n\n" + "\n".join(line for rule in rows for line in docs.rule_entry(rule)))
    return 0


# --- the parser ------------------------------------------------------------------------------
def _selection_options(command: argparse.ArgumentParser) -> None:
    for flag, what in (("--select", "code prefixes to report (default: all but APX107, APX108)"),
                       ("--extend-select", "code prefixes to add to the selection"),
                       ("--ignore", "code prefixes to leave out, replacing the default ignore list"),
                       ("--extend-ignore", "code prefixes to leave out"),
                       ("--exclude", "patterns of files and directories to skip, replacing the defaults"),
                       ("--extend-exclude", "more patterns to skip")):
        command.add_argument(flag, metavar="LIST", help=f"comma-separated {what}")
    command.add_argument("--apex-target-versions", metavar="LIB=VERSION,...",
                         help="oldest supported releases, e.g. torch=2.1,lightning=1.9 (default: auto)")


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="flake8-no-apex", description="Find and fix NVIDIA apex and deprecated mixed-precision (AMP) code.",
        epilog="Settings also come from [flake8] in setup.cfg, tox.ini or .flake8, and from "
        "[tool.flake8-no-apex] in pyproject.toml.",
    )
    main.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = main.add_subparsers(dest="command", required=True)

    check = commands.add_parser(
        "check", help="report findings, like flake8 --select APX, also in YAML configs and requirements",
        description="Exit status: 0 clean, 1 findings, 2 usage or input errors.",
    )
    check.add_argument("paths", nargs="*", help="files and directories (default: .)")
    _selection_options(check)
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("-j", "--jobs", default="1", help="processes to check with, or 'auto' (default: 1)")
    check.add_argument("--statistics", action="store_true", help="count the findings of each code")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--show-targets", action="store_true",
                       help="print the version targets used, and where they were read from")
    check.set_defaults(run=run_check)

    fix = commands.add_parser(
        "fix", help="rewrite deprecated AMP code in place",
        description="Apply the safe fixes (and the unsafe ones with --unsafe-fixes); report what needs a person. "
        "Exit status: 0 nothing to change, 1 files changed (or would be, with --diff) or findings remain, "
        "2 usage or input errors.",
    )
    fix.add_argument("paths", nargs="*", help="files and directories (default: .)")
    fix.add_argument("--diff", action="store_true", help="print a unified diff instead of writing files")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    _selection_options(fix)
    fix.set_defaults(run=run_fix)

    rules = commands.add_parser("rules", help="list the rules with their timelines and fix grades")
    rules.set_defaults(run=run_rules)
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="e.g. APX002")
    explain.set_defaults(run=run_explain)
    return main


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
