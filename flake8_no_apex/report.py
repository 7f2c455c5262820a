"""Output formats of `flake8-no-apex check`: concise text (flake8's lines, with ruff's `[*]` on
fixable findings), JSON, JSON lines, SARIF 2.1.0, GitHub workflow commands, JUnit XML and GitLab
Code Quality."""
from __future__ import annotations

import json
import os
from collections import Counter
from itertools import groupby
from pathlib import Path
from urllib.parse import quote

from . import __version__

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple
    from .engine import Analysis
else:
    from .records import NamedTuple

DOCS = "docs/rules.md"  # every code has an anchor there: docs/rules.md#apx201


def rule_url(code: str, docs: str = DOCS) -> str:
    """Where a code is documented: `docs` is the rules reference's path or URL (`docs-url`)."""
    return f"{docs}#{code.lower()}"


class Reported(NamedTuple):
    """One finding, located and ready for any format."""

    path: str
    line: int
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    code: str
    message: str  # without the code, which has its field (Finding.description)
    fix_grade: str  # of the available fix, else the rule's
    edits: Sequence[Dict[str, object]] = ()  # the available fix's edits
    source_line: str = ""  # the text of `line`, for --output-format full
    level: str = "warning"  # SARIF's, from the rule's timeline (Timeline.level)
    # a finding the version targets hide: the floor that hides it ("lightning>=1.6") and the
    # target that would show it ("lightning=2.0"); counted on one line, never listed
    hidden_by: str = ""
    shown_from: str = ""
    cell: Optional[int] = None  # a notebook's cell (from 1, over all cells): `line` and `column` are within it


# what a format shows of the fixes: none; which findings `fix` can fix (the [*] marker, the
# summary: a plan's existence and grade); those and each fix's edits
NO_FIXES, FIX_MARKS, FIX_EDITS = "", "marks", "edits"


def located(analysis: "Analysis", path: str, fixes: str = FIX_EDITS) -> List[Reported]:
    """An analysis's findings with character columns (flake8's are UTF-8 bytes), their ends,
    their levels and, unless NO_FIXES, their fixes (building the plans costs more than finding;
    with FIX_MARKS, plans that may lack their import cleanup: the same findings fixable, at the
    same grades)."""
    source, placement = analysis.source, analysis.placement

    def where(offset: int) -> Tuple[Optional[int], int, int]:
        line, column = source.position(offset)
        return placement.position(line, column) if placement is not None else (None, line, column)

    def text_of(offset: int) -> str:
        line = source.position(offset)[0]
        text = source.line(line).rstrip("\r\n")
        return placement.line_text(line, text) if placement is not None else text

    found = []
    plans = (analysis.plans if fixes == FIX_EDITS else analysis.fixable if fixes == FIX_MARKS
             else [None] * len(analysis.findings))
    for finding, plan in zip(analysis.findings, plans):
        start, end = source.finding_span(finding)
        (cell, line, column), (_, end_line, end_column) = where(start), where(end)
        edits = []
        for edit in plan.edits if plan is not None else ():
            first, last = where(edit.start), where(edit.end)
            (first_cell, first_line, first_column), (last_cell, last_line, last_column) = first, last
            edits.append({"start": _point(first_cell, first_line, first_column),
                          "end": _point(last_cell, last_line, last_column), "content": edit.text})
        grade = (plan.grade if plan is not None else finding.rule.fix.grade).value
        found.append(Reported(path, line, column, end_line, end_column, finding.code, finding.description, grade, edits,
                              text_of(start), analysis.level(finding), cell=cell))
    for finding in analysis.hidden:
        from .table import short_version

        timeline = finding.rule.timeline
        threshold = timeline.replacement_since or timeline.deprecated_in
        cell, line, column = where(source.finding_span(finding)[0])
        found.append(Reported(path, line, column, line, column, finding.code, finding.description,
                              finding.rule.fix.grade.value,
                              hidden_by=f"{timeline.library}>={analysis.floors[timeline.library]}",
                              shown_from=f"{timeline.library}={short_version(threshold)}", cell=cell))
    return found


def _point(cell: Optional[int], line: int, column: int) -> Dict[str, object]:
    return {"cell": cell, "line": line, "column": column} if cell is not None else {"line": line, "column": column}


def where(r: Reported) -> str:
    """`path:line:column`, or ruff's `path:cell N:line:column` in a notebook."""
    return f"{r.path}:{'' if r.cell is None else f'cell {r.cell}:'}{r.line}:{r.column}"


def hidden_line(hidden: List[Reported]) -> str:
    """One line for the findings the version targets hide, and how to see them: a project
    planning an upgrade needs to know what waits for it."""
    if not hidden:
        return ""
    from packaging.version import Version

    floors = ", ".join(sorted({r.hidden_by for r in hidden}))
    newest: Dict[str, str] = {}
    for r in hidden:
        library, _, version = r.shown_from.partition("=")
        if library not in newest or Version(version) > Version(newest[library]):
            newest[library] = version
    option = ",".join(f"{library}={version}" for library, version in sorted(newest.items()))
    noun = "finding" if len(hidden) == 1 else "findings"
    return (f"{len(hidden)} {noun} hidden by the version targets ({floors}); "
            f"`--apex-target-versions {option}` shows them\n")


def fixable(r: Reported) -> bool:
    """A safe fix is at hand: `fix` applies it."""
    return bool(r.edits) and r.fix_grade == "safe"


_BOLD, _RED, _CYAN, _RESET = "\033[1m", "\033[1;31m", "\033[36m", "\033[0m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color else text


def text(items: List[Reported], color: bool = False) -> str:
    """flake8's line per finding, `[*]` after the code where `fix` would fix it (as ruff marks)."""
    return "".join(_header(r, color) + "\n" for r in items)


def _header(r: Reported, color: bool) -> str:
    marker = _paint("[*] ", _CYAN, color) if fixable(r) else ""
    cell = "" if r.cell is None else f"cell {r.cell}:"
    code = _paint(r.code, _RED, color)
    return f"{_paint(r.path, _BOLD, color)}:{cell}{r.line}:{r.column}: {code} {marker}{r.message}"


def full(items: List[Reported], color: bool = False) -> str:
    """Each finding with its source line and a caret under what it is about."""
    blocks = []
    for r in items:
        gutter = len(str(r.line))
        width = (r.end_column if r.end_line == r.line else len(r.source_line) + 1) - r.column
        caret = " " * (r.column - 1) + _paint("^" * max(width, 1), _RED, color)
        blocks.append(f"{_header(r, color)}\n{r.line} | {r.source_line}\n{' ' * gutter} | {caret}\n")
    return "\n".join(blocks)


def summary(items: List[Reported], errors: int = 0) -> str:
    """ruff's closing line: how many findings, how many `fix` and `fix --unsafe-fixes` handle.
    A run that could not read every file never says it passed."""
    unread = f"; {errors} {'file' if errors == 1 else 'files'} could not be checked" if errors else ""
    if not items:
        return f"No findings in the files checked{unread}.\n" if errors else "All checks passed: no findings.\n"
    safe = sum(1 for r in items if fixable(r))
    unsafe = sum(1 for r in items if r.edits and r.fix_grade == "unsafe")
    parts = [f"{safe} fixable with `flake8-no-apex fix`"] if safe else []
    parts += [f"{unsafe} more with `fix --unsafe-fixes`"] if unsafe else []
    noun = "finding" if len(items) == 1 else "findings"
    return f"Found {len(items)} {noun}" + (f" ({', '.join(parts)})" if parts else "") + f"{unread}.\n"


def enumerate_fixes(fixed: Dict[str, Counter], verb: str) -> str:
    """ruff's --show-fixes: per file, how many findings of each code `fix` handled."""
    total = sum(sum(counts.values()) for counts in fixed.values())
    if not total:
        return ""
    from .rules import RULES

    titles = {rule.code: rule.title for rule in reversed(RULES)}
    lines = [f"{verb} {total} {'finding' if total == 1 else 'findings'}:"]
    for path, counts in fixed.items():
        lines.append(f"- {path}:")
        lines += [f"    {count} × {code} ({titles[code]})" for code, count in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def _statistics(items: List[Reported]) -> List[Dict[str, object]]:
    counts = Counter(r.code for r in items)
    first: Dict[str, Reported] = {}
    for r in items:
        first.setdefault(r.code, r)
    return [{"code": code, "count": counts[code], "message": first[code].message,
             "fixable": sum(1 for r in items if r.code == code and fixable(r))} for code in sorted(counts)]


def statistics(items: List[Reported]) -> str:
    """flake8's --statistics: count, code, the first message of the code."""
    return "".join(f"{s['count']:<5} {s['code']} {s['message']}\n" for s in _statistics(items))


def statistics_json(items: List[Reported]) -> str:
    return json.dumps(_statistics(items), indent=2) + "\n"


def statistics_json_lines(items: List[Reported]) -> str:
    return "".join(json.dumps(s) + "\n" for s in _statistics(items))


def _row(r: Reported, docs: str = DOCS) -> Dict[str, object]:
    row = r._asdict()
    del row["source_line"]
    if r.cell is None:
        del row["cell"]
    row["url"] = rule_url(r.code, docs)
    row["fix"] = {"grade": row.pop("fix_grade"), "edits": row.pop("edits")}
    return row


def as_json(items: List[Reported], docs: str = DOCS) -> str:
    """One object per finding; `fix.edits` is empty where no automatic fix exists."""
    return json.dumps([_row(r, docs) for r in items], indent=2) + "\n"


def json_lines(items: List[Reported], docs: str = DOCS) -> str:
    """The JSON objects one per line, for tools that stream."""
    return "".join(json.dumps(_row(r, docs)) + "\n" for r in items)


_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "note": "info"}


def gitlab(items: List[Reported]) -> str:
    """GitLab Code Quality: a fingerprint stable across runs for the same finding."""
    import hashlib  # only for this format

    seen: Counter = Counter()
    issues = []
    for r in items:
        key = f"{r.path}\0{r.code}\0{r.code} {r.message}"  # the fingerprints of earlier releases
        fingerprint = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
        seen[key] += 1
        issues.append({
            "description": _in_cell(r), "check_name": r.code, "fingerprint": fingerprint,
            "severity": _GITLAB_SEVERITY[r.level],
            "location": {"path": r.path, "positions": {"begin": {"line": r.line, "column": r.column},
                                                       "end": {"line": r.end_line, "column": r.end_column}}},
        })
    return json.dumps(issues, indent=2) + "\n"


def junit(items: List[Reported]) -> str:
    """JUnit XML, a test suite per file and a failing test case per finding (ruff's layout)."""
    import xml.etree.ElementTree as ElementTree  # for this format only

    suites = ElementTree.Element("testsuites", name="flake8-no-apex", tests=str(max(len(items), 1)),
                                 failures=str(len(items)), errors="0")
    if not items:
        suite = ElementTree.SubElement(suites, "testsuite", name="flake8-no-apex", tests="1", failures="0",
                                       errors="0")
        ElementTree.SubElement(suite, "testcase", name="No findings", classname="flake8-no-apex")
    for path, found in groupby(sorted(items, key=lambda r: r.path), key=lambda r: r.path):
        found = list(found)
        suite = ElementTree.SubElement(suites, "testsuite", name=path, tests=str(len(found)),
                                       failures=str(len(found)), errors="0")
        for r in found:
            case = ElementTree.SubElement(suite, "testcase", name=f"flake8-no-apex.{r.code}", classname=path,
                                          line=str(r.line), column=str(r.column))
            failure = ElementTree.SubElement(case, "failure", message=_in_cell(r))
            failure.text = f"line {r.line}, col {r.column}, {_in_cell(r)}"
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _in_cell(r: Reported) -> str:
    """flake8's message (its code first), saying the notebook cell where formats without a place
    for it give lines."""
    message = f"{r.code} {r.message}"
    return message if r.cell is None else f"cell {r.cell}: {message}"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(items: List[Reported]) -> str:
    """GitHub Actions workflow commands: `::error file=...,line=...::message`."""
    command = {"error": "error", "warning": "warning", "note": "notice"}
    lines = []
    for r in items:
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (("file", r.path), ("line", r.line), ("col", r.column), ("endLine", r.end_line),
                               ("endColumn", r.end_column), ("title", r.code))
        )
        lines.append(f"::{command[r.level]} {properties}::{_escape_data(_in_cell(r))}\n")
    return "".join(lines)


def _rule_metadata(readme: str = DOCS) -> List[Dict[str, object]]:
    """One SARIF rule per code, its rows' titles, docs and fix grades joined."""
    rules = []
    from .rules import RULES

    for code, rows in groupby(RULES, key=lambda rule: rule.code):
        rows = list(rows)
        titles = "; ".join(dict.fromkeys(r.title for r in rows))
        docs = " ".join(r.doc for r in rows)
        fixes = " ".join(f"Fix ({r.title}): {r.fix.grade.value}, because {r.fix.why}." for r in rows)
        examples = "\n\n".join(f"Before:\n{r.before}\nAfter:\n{r.after}" for r in rows)
        rules.append({
            "id": code,
            "name": "".join(ch for ch in rows[0].title.title() if ch.isalnum()) or code,
            "shortDescription": {"text": titles},
            "fullDescription": {"text": docs},
            "help": {"text": f"{docs}\n\n{fixes}\n\n{examples}", "markdown": f"{docs}\n\n{fixes}"},
            "defaultConfiguration": {"level": "note" if rows[0].default_off else "warning"},
            "properties": {"tags": ["deprecation", rows[0].timeline.library], "docs": rule_url(code, readme)},
        })
        if "://" in readme:  # SARIF's helpUri must be an absolute URI
            rules[-1]["helpUri"] = rule_url(code, readme)
    return rules


def _uri(path: str) -> str:
    """A relative URI reference for a path: `my file.py` is `my%20file.py` (RFC 3986)."""
    return quote(path.replace("\\", "/"))


def sarif(items: List[Reported], root: Optional[str] = None, docs: str = DOCS) -> str:
    rules = _rule_metadata(docs)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for r in items:
        result = {
            "ruleId": r.code,
            "ruleIndex": index[r.code],
            "level": r.level,
            "message": {"text": r.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(r.path), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": r.line, "startColumn": r.column,
                               "endLine": r.end_line, "endColumn": r.end_column},
                },
            }],
        }
        if r.cell is not None:  # the region is within the cell (ruff's JSON does the same); no fix: SARIF's
            result["properties"] = {"cell": r.cell}  # replacements address the file's own lines
        elif r.edits:
            result["fixes"] = [{
                "description": {"text": f"{r.fix_grade} fix"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _uri(r.path), "uriBaseId": "%SRCROOT%"},
                    "replacements": [{
                        "deletedRegion": {"startLine": e["start"]["line"], "startColumn": e["start"]["column"],
                                          "endLine": e["end"]["line"], "endColumn": e["end"]["column"]},
                        "insertedContent": {"text": e["content"]},
                    } for e in r.edits],
                }],
            }]
        results.append(result)
    run = {
        "tool": {"driver": {"name": "flake8-no-apex", "version": __version__, "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if root:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": root}}
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(document, indent=2) + "\n"


# --- choosing a format -------------------------------------------------------------------------
FORMATS = {"concise": text, "text": text, "full": full, "json": as_json, "json-lines": json_lines, "github": github,
           "junit": junit, "gitlab": gitlab, "sarif": sarif}
_LINKED = ("json", "json-lines", "sarif")  # formats that link each rule to its documentation
_FOR_PEOPLE = ("concise", "text", "full")  # colour on a terminal, statistics appended, a summary
# --statistics replaces the findings in the JSON formats (as ruff's does); text appends (as flake8's)
_STATISTICS = {"json": statistics_json, "json-lines": statistics_json_lines}


def has_statistics(output_format: str) -> bool:
    return output_format in _STATISTICS or output_format in _FOR_PEOPLE


def shows_fixes(output_format: str) -> str:
    """What the format shows of what `fix` would do: NO_FIXES, FIX_MARKS or FIX_EDITS."""
    return FIX_EDITS if output_format in _LINKED else FIX_MARKS if output_format in _FOR_PEOPLE else NO_FIXES


def colour(stream, choice: str = "auto") -> bool:
    """`--color`: always, never, or auto: where FORCE_COLOR is set (force-color.org, for CI logs),
    else on a terminal unless NO_COLOR is set (no-color.org) or it is a dumb one."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and stream.isatty()


def write(items: List[Reported], output_format: str, out, err, docs: str = DOCS, with_statistics: bool = False,
          show_fixes: bool = False, errors: int = 0, color: str = "auto") -> None:
    """The findings in a format on `out`; for people, the summary line on `err` (`errors`: the
    files that could not be checked)."""
    if with_statistics and output_format in _STATISTICS:
        out.write(_STATISTICS[output_format](items))
    elif output_format in _FOR_PEOPLE:
        out.write(FORMATS[output_format](items, colour(out, color)))
    elif output_format == "sarif":
        out.write(sarif(items, Path.cwd().as_uri() + "/", docs))
    elif output_format in _LINKED:
        out.write(FORMATS[output_format](items, docs=docs))
    else:
        out.write(FORMATS[output_format](items))
    if output_format in _FOR_PEOPLE:
        if with_statistics:
            out.write(statistics(items))
        if show_fixes:
            fixable_counts: Dict[str, Counter] = {}
            for item in items:
                if fixable(item):
                    fixable_counts.setdefault(item.path, Counter())[item.code] += 1
            out.write(enumerate_fixes(fixable_counts, "`flake8-no-apex fix` would fix"))
        err.write(summary(items, errors))
