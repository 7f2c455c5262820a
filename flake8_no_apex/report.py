"""Output formats of `flake8-no-apex check`: text (flake8's), JSON, SARIF 2.1.0, GitHub."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from itertools import groupby
from typing import Dict, List, Optional
from urllib.parse import quote

from . import __version__
from .rules import RULES

DOCS = "README.md"  # every code has an anchor there: README.md#apx201


@dataclass(frozen=True)
class Reported:
    """One finding, located and ready for any format."""

    path: str
    line: int
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    code: str
    message: str  # "APX201 ..." as flake8 prints it
    fix_grade: str  # of the available fix, else the rule's
    edits: List[Dict[str, object]] = field(default_factory=list)  # the available fix's edits

    @property
    def level(self) -> str:
        """SARIF level: what is gone is an error, what is going a warning, the rest a note."""
        if " was removed in " in self.message:
            return "error"
        if " is maintained" in self.message:
            return "note"
        return "warning"


def text(items: List[Reported]) -> str:
    return "".join(f"{r.path}:{r.line}:{r.column}: {r.message}\n" for r in items)


def statistics(items: List[Reported]) -> str:
    """flake8's --statistics: count, code, the first message of the code."""
    counts = Counter(r.code for r in items)
    first = {}
    for r in items:
        first.setdefault(r.code, r.message.split(" ", 1)[1])
    return "".join(f"{counts[code]:<5} {code} {first[code]}\n" for code in sorted(counts))


def as_json(items: List[Reported]) -> str:
    """One object per finding; `fix.edits` is empty where no automatic fix exists."""
    rows = []
    for r in items:
        row = asdict(r)
        row["url"] = f"{DOCS}#{r.code.lower()}"
        row["fix"] = {"grade": row.pop("fix_grade"), "edits": row.pop("edits")}
        rows.append(row)
    return json.dumps(rows, indent=2) + "\n"


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
        lines.append(f"::{command[r.level]} {properties}::{_escape_data(r.message)}\n")
    return "".join(lines)


def _rule_metadata() -> List[Dict[str, object]]:
    """One SARIF rule per code, its rows' titles, docs and fix grades joined."""
    rules = []
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
            "properties": {"tags": ["deprecation", rows[0].timeline.library], "docs": f"{DOCS}#{code.lower()}"},
        })
    return rules


def _uri(path: str) -> str:
    """A relative URI reference for a path: `my file.py` is `my%20file.py` (RFC 3986)."""
    return quote(path.replace("\\", "/"))


def sarif(items: List[Reported], root: Optional[str] = None) -> str:
    rules = _rule_metadata()
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
        if r.edits:
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
