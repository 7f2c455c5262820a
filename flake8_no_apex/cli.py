"""The `flake8-no-apex` command: `check`, `fix`, `rules`, `explain` and `server`."""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections import Counter
from functools import partial
from pathlib import Path

from . import __version__, report
from .config import ConfigError, Settings, load
from .files import STDIN, Candidate, Decoded, InputError, discover, read, terminated_cleanly, unified_diff, write
from .baseline import new_findings, read_baseline, write_baseline
from .cache import DEFAULT_DIRECTORY, Cache, SettingsMemo, content_hash
from .codes import CODES, DEFAULT_OFF
from .collector import collect_less, paused
from .targets import MetadataWarning, TargetError, parse_option

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:  # the engine is imported when a file must be analysed (not on a warm cached run)
    from typing import Callable, Dict, List, Optional, Sequence, Tuple
    from .engine import AnalysisError, Session

    # A file's content as checked: (size, modification time in ns, SHA-256), for the cache.
    Stamp = Tuple[int, int, str]
    Outcome = Tuple[List[report.Reported], Optional[str], Optional[Stamp]]  # findings, the file's error, its stamp


# --- settings --------------------------------------------------------------------------------
def settings_of(args: argparse.Namespace, parses: Optional[SettingsMemo] = None) -> Settings:
    """Config files, then the command line; `parses`: the files' parses the cache keeps."""
    try:
        settings = load(Path.cwd(), args.config, args.isolated, parses)
    except ConfigError as error:
        raise InputError(str(error)) from None
    if parses is not None:
        parses.save()
    for warning in settings.warnings:
        print(f"flake8-no-apex: warning: {warning}", file=sys.stderr)
    keys = ("select", "extend_select", "ignore", "extend_ignore", "per_file_ignores", "exclude", "extend_exclude",
            "docs_url")
    given = {key: getattr(args, key) for key in keys if getattr(args, key, None) is not None}
    if given:
        settings.update(given, "command line")
    if args.apex_target_versions is not None:
        settings.targets, settings.targets_source = args.apex_target_versions, "--apex-target-versions"
    for switch in ("check_docs", "disable_noqa"):
        if getattr(args, switch, False):
            setattr(settings, switch, True)
    try:
        settings.validate()
        selector = settings.selector()
        parse_option(settings.targets)
    except (ConfigError, TargetError) as error:
        raise InputError(str(error)) from None
    if not any(selector(code) for code in CODES):
        chosen = ",".join([*(settings.select or []), *settings.extend_select]) or "''"
        print(f"flake8-no-apex: warning: the selection ({chosen}, from {', '.join(settings.sources)}) enables "
              "no APX code: nothing will be reported", file=sys.stderr)
    return settings


# --- check -----------------------------------------------------------------------------------
def check_file(candidate: Candidate, session: "Session", fixes: str = report.FIX_EDITS, stamped: bool = True,
               surveyed: Optional[Tuple[Decoded, bool]] = None
               ) -> Tuple[List[report.Reported], Optional[Stamp], List[str]]:
    """Findings of one file, of any kind, (if `stamped`: for the cache) the file's stamp as it
    was read, and the parts of it that could not be read (a notebook's cell that does not
    parse: its error, beside the other cells' findings); raises InputError. A Python file
    without a word of any rule is not parsed, unless it was named on the command line. `fixes`:
    what the format shows of them (report.shows_fixes; no plan is built for NO_FIXES).
    `surveyed`: the file as already read and the pre-filter's verdict on it."""
    from .engine import AnalysisError, Document

    decoded, rule_words = surveyed or (read(candidate.path, candidate.stdin), None)
    try:
        analysis = session.analyse(Document(candidate.path, decoded.text, named=candidate.named, on_disk=decoded,
                                            rule_words=rule_words))
        found = report.located(analysis, str(candidate.path), fixes)
    except AnalysisError as error:
        raise InputError(_located_error(candidate.path, error)) from None
    problems = [f"{candidate.path}:{problem}" for problem in analysis.problems]
    seen = decoded.seen
    if not (stamped and seen) or problems:  # a file read in part is not cached
        return found, None, problems
    return found, (seen.st_size, seen.st_mtime_ns, content_hash(decoded.raw)), problems


def _located_error(path: Path, error: "AnalysisError") -> str:
    if error.line is None:
        return f"{path}: {error}"
    cell = "" if error.cell is None else f"cell {error.cell}:"
    return f"{path}:{cell}{error.line}:{error.column}: {error}"


def _internal_error(path: Path, action: str, error: BaseException) -> str:
    """One line for a bug (or a panic inside a native library) met on one file."""
    return f"{path}: {action}, internal error ({type(error).__name__}: {error}); please report it"


_WORKER: Optional["Session"] = None  # a worker process's session, made once by `_start_worker`


def _start_worker(settings: Settings) -> None:
    global _WORKER
    from .engine import Session

    _quiet_compiler()
    _WORKER = Session(settings)
    collect_less()


def _check_one(candidate: Candidate, session: Optional["Session"] = None, fixes: str = report.FIX_EDITS,
               stamped: bool = True, surveyed: Optional[Tuple[Decoded, bool]] = None) -> Outcome:
    path = candidate.path
    try:
        with paused():
            found, stamp, problems = check_file(candidate, session or _WORKER, fixes, stamped, surveyed)
        return found, "\n".join(problems) or None, stamp
    except InputError as error:
        return [], str(error), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: B036 (a native panic may be one) the file's error, not the run's
        return [], _internal_error(path, "not checked", error), None


def _jobs(value: str) -> int:
    """argparse type of -j: a positive count of processes, or 'auto'."""
    if value == "auto":
        return os.cpu_count() or 1
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise argparse.ArgumentTypeError(f"expected a number of processes or 'auto', got {value!r}")


def run_check(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    if args.watch:
        return _watched(args, out, err)
    if args.fix or args.unsafe_fixes:
        return _check_with_fixes(args, out, err)
    if args.statistics and not report.has_statistics(args.format):
        print(f"flake8-no-apex: --statistics is for the concise, full, json and json-lines formats, not "
              f"{args.format}", file=err)
        return 2
    if args.update_baseline and not args.baseline:
        print("flake8-no-apex: --update-baseline needs --baseline FILE", file=err)
        return 2
    cached = not (args.no_cache or args.show_targets)
    try:
        settings = settings_of(args, SettingsMemo(Path(args.cache_dir)) if cached else None)
        known = read_baseline(Path(args.baseline)) if args.baseline and not args.update_baseline else None
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    candidates, errors = discover(args.paths or ["."], [*settings.exclude, *settings.extend_exclude],
                                  other_files=True, stdin_name=args.stdin_filename, docs=settings.check_docs)
    if not candidates and not errors:
        print("flake8-no-apex: no files to check found", file=err)
    fixes = report.shows_fixes(args.format)
    cache = Cache(Path(args.cache_dir), settings, fixes) if cached else None
    outcomes = _checked(candidates, settings, fixes, args.jobs, cache)
    # sorted by path as flake8 prints them (a stable sort: each file's findings keep their order)
    items = sorted((item for found, _, _ in outcomes for item in found if not item.hidden_by), key=lambda r: r.path)
    hidden = [item for found, _, _ in outcomes for item in found if item.hidden_by]
    errors += [line for _, error, _ in outcomes if error for line in error.split("\n")]
    for error in errors:
        print(f"flake8-no-apex: {error}", file=err)
    if args.show_targets:
        from .engine import Session

        session = Session(settings)
        for root in sorted({session.targets(candidate.path).describe() for candidate in candidates}):
            print(f"targets: {root}", file=err)
    if args.add_noqa:
        return _add_noqa(items, candidates, args, err) if not errors else 2
    if args.update_baseline:
        return _update_baseline(items, args, err) if not errors else 2
    if args.baseline:
        items = new_findings(items, known)
    report.write(items, args.format, out, err, docs=settings.docs_url or report.DOCS, with_statistics=args.statistics,
                 show_fixes=args.show_fixes, errors=len(errors), color=args.color)
    err.write(report.hidden_line(hidden))
    if errors:
        return 2
    return 1 if items and not args.exit_zero else 0


def _watched(args: argparse.Namespace, out, err) -> int:
    from .watch import watch

    try:
        settings = settings_of(args)
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    if STDIN in args.paths:
        print("flake8-no-apex: --watch reads files, not standard input", file=err)
        return 2
    once = argparse.Namespace(**{**vars(args), "watch": False})
    return watch(lambda: run_check(once, out, err), args.paths or ["."],
                 [*settings.exclude, *settings.extend_exclude], settings.check_docs, err)


def _check_with_fixes(args: argparse.Namespace, out, err) -> int:
    """`check --fix` is `fix`, as ruff's is, reporting what is left in fix's text or JSON."""
    if args.format not in ("concise", "text", "full", "json"):
        print(f"flake8-no-apex: check --fix reports as text or json, not {args.format}", file=err)
        return 2
    for option in ("statistics", "baseline", "add_noqa", "show_targets", "disable_noqa"):
        if getattr(args, option):
            print(f"flake8-no-apex: --{option.replace('_', '-')} is not for check --fix", file=err)
            return 2
    fixing = argparse.Namespace(**{**vars(args), "format": "json" if args.format == "json" else "text",
                                   "diff": False, "exit_non_zero_on_fix": False,
                                   "exit_non_zero_on_change_only": False})
    return run_fix(fixing, out, err)


def _checked(candidates: List[Candidate], settings: Settings, fixes: str, jobs: int, cache: Optional[Cache]
             ) -> List[Outcome]:
    """Each candidate's outcome, in order: from the cache where it is valid, else analysed; the
    cache learns the new ones."""
    outcomes: List[Optional[Outcome]] = [None] * len(candidates)
    if cache is not None:
        for index, candidate in enumerate(candidates):
            rows = None if candidate.stdin else cache.get(candidate.path, candidate.named)
            if rows is not None:
                outcomes[index] = (rows, None, None)
    missing = [index for index, outcome in enumerate(outcomes) if outcome is None]
    analysed = _analysed(candidates, missing, settings, fixes, jobs, stamped=cache is not None) if missing else {}
    for index, outcome in analysed.items():
        outcomes[index] = outcome
        found, error, stamp = outcome
        if cache is not None and error is None and stamp is not None:
            cache.put(candidates[index].path, candidates[index].named, stamp, found)
    if cache is not None:
        cache.save()
    return [outcome for outcome in outcomes if outcome is not None]


def _analysed(candidates: List[Candidate], missing: List[int], settings: Settings, fixes: str, jobs: int,
              stamped: bool) -> Dict[int, Outcome]:
    """The outcomes of the files the cache could not give: in other processes when enough of
    them pass the pre-filter to pay for the processes, the rest in this one."""
    from .engine import Session

    session = Session(settings)
    analysed: Dict[int, Outcome] = {}
    heavy: List[int] = []
    if jobs > 1 and not any(candidates[i].stdin for i in missing) and len(missing) >= 2 * _FILES_PER_PROCESS:
        for index in missing:  # which files pass the pre-filter; the others are checked as they are read, once
            candidate = candidates[index]
            try:
                decoded = read(candidate.path)
            except InputError:
                continue  # said by the in-process check of that file
            if not candidate.path.name.endswith(".py") or session.prefilter.may_match(decoded.text):
                heavy.append(index)
            else:
                analysed[index] = _check_one(candidate, session, fixes, stamped, (decoded, False))
    if len(heavy) >= 2 * _FILES_PER_PROCESS:  # enough to pay for the processes
        from concurrent.futures import ProcessPoolExecutor  # multiprocessing only when it pays

        processes = min(jobs, len(heavy) // _FILES_PER_PROCESS)
        with ProcessPoolExecutor(max_workers=processes, initializer=_start_worker, initargs=(settings,)) as pool:
            check_one = partial(_check_one, fixes=fixes, stamped=stamped)
            work = pool.map(check_one, [candidates[i] for i in heavy], chunksize=4)
            analysed.update(zip(heavy, work))
    for index in missing:
        if index not in analysed:
            analysed[index] = _check_one(candidates[index], session, fixes, stamped)
    return analysed


_FILES_PER_PROCESS = 32  # a process costs its start and imports: worth it only for this many files to analyse


def _update_baseline(items: List[report.Reported], args: argparse.Namespace, err) -> int:
    try:
        write_baseline(Path(args.baseline), items)
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    print(f"flake8-no-apex: {args.baseline}: baseline of {_plural(len(items), 'finding', 'findings')} written",
          file=err)
    return 0


def _add_noqa(items: List[report.Reported], candidates: List[Candidate], args: argparse.Namespace, err) -> int:
    from .inputs import kind_of

    if any(candidate.stdin for candidate in candidates):
        print("flake8-no-apex: --add-noqa writes files: it cannot take standard input", file=err)
        return 2
    by_path: Dict[str, List[report.Reported]] = {}
    for item in items:
        by_path.setdefault(item.path, []).append(item)
    roots = [Path(os.path.realpath(name)) for name in args.paths or ["."]]
    added = files = 0
    for name, found in by_path.items():
        path = Path(name)
        kind = kind_of(path)
        if kind.comment is None:
            print(f"flake8-no-apex: {name}: {_plural(len(found), 'finding', 'findings')} left: this kind of file "
                  "holds no comments; `--baseline FILE --update-baseline` records them", file=err)
            continue
        try:
            decoded = read(path)
            text, count = kind.add_noqa(decoded.text, found)
            if count:
                write(path, decoded, text.encode(decoded.encoding), roots)
        except InputError as error:
            print(f"flake8-no-apex: {error}", file=err)
            return 2
        added += count
        files += 1
    print(f"Added {_plural(added, 'noqa directive', 'noqa directives')} to "
          f"{_plural(files, 'file', 'files')}.", file=err)
    return 0


# --- fix -------------------------------------------------------------------------------------
class Summary:
    """What a `fix` run did, for its last lines."""

    def __init__(self) -> None:
        self.files = self.fixes = self.manual = self.unsafe = self.shims = 0
        self.errors: List[str] = []
        self.recipes: List[str] = []
        self.fixed: Dict[str, Counter] = {}  # path -> codes of the findings fixed
        self.remaining: List[dict] = []  # for --output-format json: the findings left, and the notes
        self.migrations: list = []  # migration.Outcome of each file with apex AMP code


def fix_file(candidate: Candidate, args: argparse.Namespace, session: "Session", summary: Summary, out, report_to,
             roots: Sequence[Path] = ()) -> None:
    """Fix one file; from standard input, the fixed text goes to `out` (all of it, changed or not)."""
    from .engine import AnalysisError, Document
    from . import migration
    from .fixer import FixError, is_shim
    from .spellings import spell
    from .inputs import CellLine

    path, stdin = candidate.path, candidate.stdin
    decoded = read(path, stdin)
    document = Document(path, decoded.text, named=candidate.named, on_disk=decoded)
    try:
        result = session.fix(document, unsafe=args.unsafe_fixes)
    except AnalysisError as error:
        raise InputError(_located_error(path, error)) from None
    except FixError as error:  # the file stays as it is: each of its findings still needs a person
        analysis = session.analyse(document)
        left = analysis.findings
        for item in report.located(analysis, str(path), report.NO_FIXES):  # where they are (a notebook's cells)
            print(f"{report.where(item)}: {item.code} {item.message}", file=report_to)
        summary.manual += len(left)
        apex_amp = [f for f in left if f.code in migration.APEX_AMP_CODES]
        if apex_amp:
            summary.migrations.append(migration.Outcome(str(path), migration.REFUSED, apex_amp[0].line,
                                                        f"the file was not fixed: {error}"))
        if stdin and not args.diff:
            out.write(decoded.text)
        raise InputError(f"{path}: not fixed, {error}") from None
    summary.errors += [f"{path}:{problem}" for problem in result.problems]  # read in part: the rest is fixed
    for problem in result.problems:
        print(f"flake8-no-apex: {path}:{problem}", file=report_to)
    spelled = spell(session.targets(path).floors) if result.remaining else {}  # for the recipes
    on_disk = _positions_on_disk(decoded.text, result) if args.diff and not stdin else None
    as_json = args.format == "json"
    for index, finding in enumerate(result.remaining):
        shim = " (in a compatibility shim: left as it is)" if is_shim(finding) else ""
        line, column = on_disk(finding, index) if on_disk else (finding.line, finding.col + 1)
        if as_json:
            where = {"cell": line.cell, "line": line.line} if isinstance(line, CellLine) else {"line": line}
            summary.remaining.append({"file": str(path), **where, "column": column, "code": finding.code,
                                      "message": finding.description, "shim": bool(shim)})
        else:
            print(f"{path}:{line}:{column}: {finding.message}{shim}", file=report_to)
        recipe = finding.rule.recipe.format(**spelled)
        if recipe and recipe not in summary.recipes:
            summary.recipes.append(recipe)
    if not as_json:  # the lines of a note are those of the file as the run found it
        for line, note in sorted(result.notes):
            print(f"{path}:{line}: note: {note}", file=report_to)
    migrated = migration.outcome(str(path), result, args.unsafe_fixes)
    if migrated is not None:
        summary.migrations.append(migrated)
    summary.manual += len(result.remaining)
    summary.unsafe += result.unsafe
    summary.shims += result.shims
    if stdin and not args.diff:
        out.write(result.text)
    if result.text == decoded.text:
        return
    if args.diff:
        out.write(unified_diff(path, decoded.text, result.text))
    elif not stdin:
        write(path, decoded, result.text.encode(decoded.encoding), roots)
    summary.files += 1  # counted once written: a file left as it was is no fixed file
    summary.fixes += len(result.fixed)
    summary.fixed[str(path)] = Counter(finding.code for finding in result.fixed)


def _positions_on_disk(text: str, result) -> Callable:
    """(line, column) of a remaining finding in the file as it is: `--diff` writes nothing, so the
    positions in the fixed text would point at the wrong lines."""
    from .edits import Source

    if result.on_disk is not None:  # the kind knows (a notebook's cells)
        return lambda finding, index: (result.on_disk[index].line, result.on_disk[index].col + 1)
    fixed, original = Source(result.text), Source(text)

    def position(finding, index: int) -> Tuple[int, int]:
        return original.position(result.original_offset(fixed.finding_span(finding)[0]))

    return position


def _plural(count: int, word: str, plural: str) -> str:
    return f"{count} {word if count == 1 else plural}"


def run_fix(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    summary = Summary()
    stdin = STDIN in (args.paths or [])
    report_to = err if args.diff or stdin else out  # stdout is a clean patch, or the fixed code
    if args.format == "json" and (args.diff or stdin):
        print("flake8-no-apex: --output-format json writes the report to standard output: not with --diff "
              "or standard input", file=err)
        return 2
    try:
        settings = settings_of(args)
    except InputError as error:
        print(f"flake8-no-apex: {error}", file=err)
        return 2
    settings.disable_noqa = False  # `disable-noqa` is for audits: fix never changes a line `# noqa` guards
    names = args.paths or ["."]
    candidates, summary.errors = discover(names, [*settings.exclude, *settings.extend_exclude], other_files=True,
                                          stdin_name=args.stdin_filename, docs=settings.check_docs)
    if not candidates and not summary.errors:
        print("flake8-no-apex: no files to fix found", file=err)
    from .engine import Session
    from .inputs import kind_of
    from .project import ProjectImports

    session = Session(settings)
    exclude = [*settings.exclude, *settings.extend_exclude]
    session.project = ProjectImports([c.path for c in candidates if not c.stdin], exclude)
    # Python first: a dependency line that installs apex goes only if no module needs apex once fixed;
    # each group by path, the order check reports in
    candidates.sort(key=lambda candidate: (kind_of(candidate.path).fixed_after_modules, str(candidate.path)))
    for error in summary.errors:
        print(f"flake8-no-apex: {error}", file=err)
    roots = [Path(os.path.realpath(name)) for name in names]
    with terminated_cleanly():
        for candidate in candidates:
            path = candidate.path
            try:
                with paused():
                    fix_file(candidate, args, session, summary, out, report_to, roots)
            except InputError as error:
                summary.errors.append(str(error))
                print(f"flake8-no-apex: {error}", file=err)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:  # noqa: B036 (a native panic may be one) the file's error, not the run's
                summary.errors.append(_internal_error(path, "not fixed", error))
                print(f"flake8-no-apex: {summary.errors[-1]}", file=err)
    from . import migration

    if args.format == "json":
        out.write(migration.as_json(summary.fixed, summary.remaining, summary.migrations))
        report_to = err
    for recipe in summary.recipes:
        print(recipe, file=report_to)
    report_to.write(migration.text(summary.migrations))
    if args.show_fixes:
        report_to.write(report.enumerate_fixes(summary.fixed, "Would fix" if args.diff else "Fixed"))
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
    if args.exit_non_zero_on_change_only:  # the fix hook: only a change fails it (findings are the check hook's)
        return 1 if summary.files else 0
    changed = summary.files and (args.diff or args.exit_non_zero_on_fix)
    return 1 if changed or summary.manual else 0


# --- rules and explain -----------------------------------------------------------------------
def run_rules(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    from . import docs

    if args.format == "json":
        out.write(docs.rules_json())
    else:
        table = docs.timeline_table() if args.format == "markdown" else docs.timeline_text()
        out.write("\n".join(table) + "\n")
    return 0


def run_explain(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    from . import docs

    code = args.code.upper()
    from .rules import RULES

    rows = [rule for rule in RULES if rule.code == code]
    if not rows:
        print(f"flake8-no-apex: unknown code {args.code!r}; known: {', '.join(CODES)}", file=err)
        return 2
    if args.format == "markdown":
        lines = [line for rule in rows for line in docs.rule_entry(rule)]
    else:
        from shutil import get_terminal_size

        width = min(get_terminal_size((100, 24)).columns, 100) - 1
        lines = [line for rule in rows for line in docs.rule_text(rule, width)]
    out.write(f"{code}\n\n" + "\n".join(lines))
    return 0


def run_server(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    try:
        from .server import serve
    except ImportError as error:  # pygls is an extra: the plugin and the commands do without it
        print(f"flake8-no-apex: the language server needs pygls ({error}); install 'flake8-no-apex[server]'",
              file=err)
        return 2
    return serve()


# --- the parser ------------------------------------------------------------------------------
def _selection_options(command: argparse.ArgumentParser) -> None:
    for flag, what in (("--select", f"code prefixes to report (default: all but {', '.join(DEFAULT_OFF)})"),
                       ("--extend-select", "code prefixes to add to the selection"),
                       ("--ignore", "code prefixes to leave out, replacing the default ignore list"),
                       ("--extend-ignore", "code prefixes to leave out"),
                       ("--exclude", "patterns of files and directories to skip, replacing the defaults"),
                       ("--extend-exclude", "more patterns to skip")):
        command.add_argument(flag, metavar="LIST", help=f"comma-separated {what}")
    command.add_argument("--per-file-ignores", metavar="MAPPING",
                         help="flake8's `pattern:codes` pairs, e.g. 'tests/*:APX201 legacy.py:APX'")
    command.add_argument("--stdin-filename", "--stdin-display-name", default="stdin", metavar="NAME",
                         help="the file name standard input (the path -) stands for, for its kind, per-file "
                              "ignores, version targets and output (default: stdin)")
    command.add_argument("--apex-target-versions", metavar="LIB=VERSION,...",
                         help="oldest supported releases, e.g. torch=2.1,lightning=1.9 (default: auto)")
    command.add_argument("--check-docs", action="store_true", default=None,
                         help="also read the Python code of Markdown and reStructuredText files (fenced blocks, "
                              "code-block directives, >>> examples) and the >>> examples of docstrings")
    command.add_argument("--config", metavar="FILE",
                         help="read the settings from this file alone: TOML ([tool.flake8-no-apex], or the whole "
                              "file when it is not a pyproject.toml) or flake8's INI ([flake8])")
    command.add_argument("--isolated", action="store_true",
                         help="read no config file: the defaults and the command line only")


def _terminal_columns() -> int:
    """shutil.get_terminal_size's width: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own help, as wide as the terminal: argparse asks shutil for the width, and
    importing shutil (with bz2 and lzma) cost every run a few milliseconds."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_columns() - 2)


def _check_options(check: argparse.ArgumentParser) -> None:
    """The options of `check`."""
    check.add_argument("paths", nargs="*", help="files and directories (default: .)")
    _selection_options(check)
    check.add_argument("--output-format", "--format", dest="format", default="concise", choices=tuple(report.FORMATS),
                       help="concise (flake8's lines; 'text' is the same), full (with the source line), json, "
                            "json-lines, sarif, github, junit or gitlab (default: concise)")
    check.add_argument("-j", "--jobs", default="1", type=_jobs, help="processes to check with, or 'auto' (default: 1)")
    check.add_argument("--statistics", action="store_true", help="count the findings of each code")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--show-fixes", action="store_true",
                       help="list, per file, how many findings of each code `fix` would fix")
    check.add_argument("--docs-url", metavar="URL",
                       help="where the rules reference is, for the links in JSON and SARIF: an absolute URL of "
                            "docs/rules.md at the tag you run, for CI annotations (default: docs/rules.md)")
    check.add_argument("--baseline", metavar="FILE",
                       help="report only the findings this baseline does not list (known by file, code and line text)")
    check.add_argument("--update-baseline", action="store_true",
                       help="write the current findings to the --baseline FILE and exit 0")
    check.add_argument("--add-noqa", action="store_true",
                       help="write `# noqa: APXnnn` where each finding is, to adopt the gate before the migration "
                            "is done")
    check.add_argument("--no-cache", action="store_true",
                       help="analyse every file afresh, without reading or writing the cache")
    check.add_argument("--cache-dir", default=DEFAULT_DIRECTORY, metavar="DIR",
                       help=f"where each file's findings are kept between runs (default: {DEFAULT_DIRECTORY})")
    check.add_argument("--show-targets", action="store_true",
                       help="print the version targets used, and where they were read from")
    check.add_argument("--disable-noqa", "--ignore-noqa", action="store_true", default=None,
                       help="report what `# noqa` comments (and `# flake8: noqa`) suppress, for an audit")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the concise and full output: auto (on a terminal, unless NO_COLOR is set; "
                            "always where FORCE_COLOR is), always or never (default: auto)")
    check.add_argument("--fix", action="store_true",
                       help="apply the safe fixes and report what is left, as `fix` does")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix: also the fixes that may change "
                       "behaviour")
    check.add_argument("--watch", action="store_true",
                       help="check again whenever a file under the paths changes, until interrupted")


def _fix_options(fix: argparse.ArgumentParser) -> None:
    """The options of `fix`."""
    fix.add_argument("paths", nargs="*", help="files and directories (default: .)")
    fix.add_argument("--diff", action="store_true", help="print a unified diff instead of writing files")
    fix.add_argument("--show-fixes", action="store_true", help="list how many findings of each code were fixed, "
                     "per file")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    fix.add_argument("--output-format", "--format", dest="format", default="text", choices=("text", "json"),
                     help="text (flake8's lines, the notes and the apex AMP migration report) or json (what was "
                          "fixed, what is left and each file's migration, on standard output) (default: text)")
    exits = fix.add_mutually_exclusive_group()
    exits.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 also when files changed (or would, with --diff), as ruff does")
    exits.add_argument("--exit-non-zero-on-change-only", action="store_true",
                       help="exit 1 only when files changed (or would), not for the findings that need a person: "
                            "the pre-commit fix hook's, beside the check hook that reports them")
    _selection_options(fix)


def parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser. With the `command` a run names, only that command's options
    are built (building every command's, with argparse's message lookups, was a twentieth of a
    warm check); with none, or a name no command has, all of them."""
    named = ("check", "fix", "rules", "explain", "server")

    def wanted(name: str) -> bool:
        return command not in named or command == name

    main = argparse.ArgumentParser(
        prog="flake8-no-apex", description="Find and fix NVIDIA apex and deprecated mixed-precision (AMP) code.",
        epilog="Settings also come from [flake8] in setup.cfg, tox.ini or .flake8, and from "
        "[tool.flake8-no-apex] in pyproject.toml.", formatter_class=_HelpFormatter,
    )
    main.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = main.add_subparsers(dest="command", required=True,
                                   parser_class=partial(argparse.ArgumentParser, formatter_class=_HelpFormatter))

    check = commands.add_parser(
        "check", help="report findings, like flake8 --select APX, also in YAML configs and requirements",
        description="Exit status: 0 clean, 1 findings, 2 usage or input errors.",
    )
    if wanted("check"):
        _check_options(check)
    check.set_defaults(run=run_check, usage_of=check)

    fix = commands.add_parser(
        "fix", help="rewrite deprecated AMP code in place",
        description="Apply the safe fixes (and the unsafe ones with --unsafe-fixes); report what needs a person. "
        "Exit status: 0 no findings left (with --diff: and nothing to change), 1 findings need a person (or, with "
        "--diff, files would change), 2 usage or input errors.",
    )
    if wanted("fix"):
        _fix_options(fix)
    fix.set_defaults(run=run_fix, usage_of=fix)

    rules = commands.add_parser("rules", help="list the rules with their timelines and fix grades")
    rules.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                       help="text for a terminal, markdown as in docs/rules.md, json for tools (default: text)")
    rules.set_defaults(run=run_rules, usage_of=rules)
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="e.g. APX002")
    explain.add_argument("--format", choices=("text", "markdown"), default="text",
                         help="text wrapped to the terminal, or markdown as in docs/rules.md (default: text)")
    explain.set_defaults(run=run_explain, usage_of=explain)
    server = commands.add_parser(
        "server", help="run the language server over stdio (diagnostics and quick fixes for editors)",
        description="Speaks the Language Server Protocol on standard input and output; settings come from the "
        "workspace's config files, as for check. Needs the 'server' extra (pygls).")
    server.set_defaults(run=run_server, usage_of=server)
    return main


def _say_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Project metadata that cannot be read is one line (the run goes on without it)."""
    if issubclass(category, MetadataWarning):
        print(f"{str(message).replace('flake8-no-apex: ', 'flake8-no-apex: warning: ', 1)}", file=sys.stderr)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


def _quiet_compiler() -> None:
    """Python's own warnings about the code it parses ('invalid escape sequence', '"is" with a
    literal') are not findings of this tool: printed under `<unknown>` or `<fixed>`, without the
    file's name, they only confused. Silenced for the run."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)


def command() -> int:
    """The `flake8-no-apex` command, in a process of its own: its collector is tuned first
    (`main` is what tests and other programs call in theirs)."""
    collect_less()
    return main()


def main(argv: Optional[Sequence[str]] = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    args, unknown = parser(given[0] if given else None).parse_known_args(given)
    if unknown:  # the subcommand's usage, not the top level's: `check --frobnicate`
        args.usage_of.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _say_warning
            _quiet_compiler()
            return args.run(args, sys.stdout, sys.stderr)  # the streams now, not at import
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a write in progress has removed its temporary file
        print("flake8-no-apex: interrupted; the files not written yet are as they were", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `check | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1


if __name__ == "__main__":
    sys.exit(command())
