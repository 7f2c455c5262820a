"""Jupyter notebooks (`inputs.notebook`): their code cells read as one module (a name imported in cell 1 is the name
cell 5 uses), as ruff reads them, and their shell escapes read as shell.

IPython syntax that is not Python (`%pip install apex`, `!git clone ...`, `%%time`, `x = !ls`,
`obj?`) is masked: the line becomes `pass  #` and the line itself, so the module parses, a
`# noqa` on it still counts, and a fix cannot touch it. A cell magic other than the few whose
body is Python (`%%time`, `%%capture`...) masks its whole cell; `%%bash` and `%%sh` cells, `!`
lines and `%pip`/`%conda` lines are shell, where apex installs are found. A comment line
opens each cell in the module, so the cells are found again after a fix; the fixed cells are
written back into the JSON in place of their sources alone, every other byte as it was.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterable
from typing import Dict, List, Optional, Tuple

from .inputs import CellLine

if TYPE_CHECKING:
    from .engine import Analysis, Document, Session
    from .fixer import FixResult
    from .report import Reported

_MASK = "pass  #"
_SEPARATOR = "#%% flake8-no-apex cell {}\n"
_SEPARATOR_LINE = re.compile(r"#%% flake8-no-apex cell (\d+)\n")
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "px", "memit", "heat"}
_SHELL_CELL_MAGICS = {"bash", "sh", "!", "system"}
_SHELL_LINE_MAGICS = ("pip", "conda", "mamba", "uv", "sx", "system")
_IPYTHON_LINE = re.compile(r"[ \t]*(?:[!%?]|[\w.\[\], ]+=[ \t]*[!%])|.*[^\s#'\")\]]\?\??[ \t]*$")


@dataclass
class Cell:
    number: int  # over all cells, markdown included, from 1
    source: str
    start: int  # the source value's text in the JSON: text[start:end]
    end: int
    python: bool = True  # its body is Python (else every line is masked)
    shell: bool = False  # a %%bash cell: its body is shell
    masked: Dict[int, str] = field(default_factory=dict)  # line (from 1) -> the IPython line masked there


def read_cells(text: str) -> List[Cell]:
    """The code cells of a Python notebook (none for another kernel's, or nbformat 3's
    worksheets); MalformedFile when it is no JSON notebook."""
    from .files import MalformedFile
    from .json_positions import items, members

    try:
        top = {m.key: m for m in members(text, 0)}
        language = _language(top)
        if language not in ("python", None) or "cells" not in top:
            return []
        cells = []
        for number, (start, _) in enumerate(items(text, top["cells"].start), 1):
            fields = {m.key: m for m in members(text, start)}
            kind, source = fields.get("cell_type"), fields.get("source")
            if kind is None or kind.value != "code" or source is None:
                continue
            value = source.value
            body = "".join(value) if isinstance(value, list) else value
            if not isinstance(body, str):
                raise ValueError(f"cell {number}: a source that is no text")
            cells.append(_classified(Cell(number, body, source.start, source.end)))
        return cells
    except ValueError as error:
        raise MalformedFile(f"cannot parse as a notebook: {error}") from None


def _language(top) -> Optional[str]:
    metadata = top["metadata"].value if "metadata" in top else {}
    if not isinstance(metadata, dict):
        return None
    for key, name in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return value[name].lower()
    return None


def _classified(cell: Cell) -> Cell:
    lines = cell.source.split("\n")
    first = lines[0].strip()
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)
        name = magic[0] if magic else ""
        argument = magic[1] if len(magic) > 1 else ""
        cell.python = name in _PYTHON_CELL_MAGICS or name == "writefile" and argument.rstrip().endswith(".py")
        cell.shell = name in _SHELL_CELL_MAGICS or name == "script" and argument.split()[:1] in (["bash"], ["sh"])
        cell.masked[1] = lines[0]
    for number, line in enumerate(lines, 1):
        if number == 1 and cell.masked or not line.strip():
            continue
        if not cell.python or _IPYTHON_LINE.match(line) and not line.lstrip().startswith("#"):
            cell.masked[number] = line
    return cell


@dataclass
class Virtual:
    """The module the notebook's code cells make: `lines[n]` is (cell, line in cell) of line n."""

    text: str
    cells: List[Cell]
    lines: Dict[int, Tuple[int, int]]
    shift: Dict[int, int]  # a masked line: from this column on, the module's is the cell's + len(_MASK)

    def position(self, line: int, column: int) -> Tuple[Optional[int], int, int]:
        """(cell, line, column) of the module's (line, column) (1-based columns)."""
        cell, within = self.lines.get(line, (None, line))
        start = self.shift.get(line)
        if start is not None and column - 1 >= start + len(_MASK):
            column -= len(_MASK)
        elif start is not None and column - 1 > start:
            column = start + 1
        return cell, within, column

    def line_text(self, line: int, text: str) -> str:
        start = self.shift.get(line)
        return text if start is None else text[:start] + text[start + len(_MASK):]


def module_of(cells: List[Cell]) -> Virtual:
    parts: List[str] = []
    lines: Dict[int, Tuple[int, int]] = {}
    shift: Dict[int, int] = {}
    number = 1
    for cell in cells:
        parts.append(_SEPARATOR.format(cell.number))
        number += 1
        body = cell.source if cell.source.endswith("\n") or not cell.source else cell.source + "\n"
        for within, line in enumerate(body.split("\n")[:-1] if body else [], 1):
            lines[number] = (cell.number, within)
            if within in cell.masked:
                indent = len(line) - len(line.lstrip()) if cell.python else 0
                line = line[:indent] + _MASK + line[indent:]
                shift[number] = indent
            parts.append(line + "\n")
            number += 1
    return Virtual("".join(parts), cells, lines, shift)


def shell_text(cell: Cell) -> str:
    """The cell's shell, blanked elsewhere to the cell's own length: `!` lines, `%pip`/`%conda`
    lines, and a %%bash cell's body."""
    out = []
    for number, line in enumerate(cell.source.split("\n"), 1):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if cell.shell and number > 1:
            out.append(line)
        elif number in cell.masked and stripped.startswith("!"):
            out.append(" " * (indent + 1) + stripped[1:])
        elif number in cell.masked and re.match(r"[\w.\[\], ]+=[ \t]*!", stripped):
            bang = line.index("!")
            out.append(" " * (bang + 1) + line[bang + 1:])
        elif number in cell.masked and stripped.startswith("%") and stripped[1:].split(None, 1)[:1] and \
                stripped[1:].split(None, 1)[0] in _SHELL_LINE_MAGICS:
            out.append(" " * (indent + 1) + stripped[1:])
        else:
            out.append(" " * len(line))
    return "\n".join(out)


def _module(document) -> Virtual:
    from .engine import analysing

    with analysing():
        return module_of(read_cells(document.text))


def analyse(session: "Session", document: "Document") -> "Analysis":
    from .engine import Analysis, AnalysisError

    module = _module(document)
    python = replace(document, text=module.text, kind="python", on_disk=None, tree=None)
    try:
        analysis = session.analyse(python)
    except AnalysisError as error:
        raise _in_cell(error, module) from None
    shell = _shell(session, document, module, analysis.source)
    found = analysis.findings + shell
    order = sorted(range(len(found)), key=lambda i: (found[i].line, found[i].col))

    def plans() -> list:
        planned = analysis.plans + [None] * len(shell)
        return [planned[i] for i in order]

    return Analysis(document, analysis.source, [found[i] for i in order], analysis.floors, plans,
                    analysis.hidden, placement=module)


def _shell(session: "Session", document: "Document", module: Virtual, source) -> list:
    from .shell_commands import findings

    floors = session.targets(document.path).floors
    first_line = {cell: line for line, (cell, within) in module.lines.items() if within == 1}
    found = []
    for cell in module.cells:
        text = shell_text(cell)
        if not text.strip():
            continue
        for item in findings(text, text, floors, session.index.argv):
            line = first_line[cell.number] + item.finding.line - 1
            column = item.finding.col + (len(_MASK) if line in module.shift else 0)
            found.append(replace(item.finding, line=line, col=column))
    return session.filtered(document.path, source, found)


def fix(session: "Session", document: "Document", unsafe: bool) -> "FixResult":
    from .engine import AnalysisError
    from .fixer import FixError

    module = _module(document)
    python = replace(document, text=module.text, kind="python", on_disk=None, tree=None)
    try:
        result = session.fix(python, unsafe)
    except AnalysisError as error:
        raise _in_cell(error, module) from None
    fixed_cells = _split(result.text, module)
    if fixed_cells is None:
        raise FixError("a fix would move code across cells or change an IPython line; the notebook is left")
    text = _written(document.text, module.cells, fixed_cells)
    after = module_of([_classified(Cell(cell.number, fixed_cells[cell.number], cell.start, cell.end))
                       for cell in module.cells])
    before, fixed = _source(module.text), _source(after.text)
    shell_before = [_relocated(f, module, None, before) for f in _shell(session, document, module, before)]
    shell_after = [_relocated(f, after, None, fixed) for f in _shell(session, document, after, fixed)]
    moved = _source(result.text)
    on_disk = [_relocated(f, module, result.original_offset(moved.finding_span(f)[0]), before)
               for f in result.remaining] + shell_before
    remaining = [_relocated(f, after, None, moved) for f in result.remaining] + shell_after
    order = sorted(range(len(remaining)), key=lambda i: (remaining[i].line, remaining[i].col))
    result.remaining, result.on_disk = [remaining[i] for i in order], [on_disk[i] for i in order]
    result.fixed = [replace(f, line=_cell_line(module, f.line)) for f in result.fixed]
    from .doc_blocks import lines_named

    def named(number: int) -> str:
        place = _cell_line(module, number)
        return f"cell {place.cell}, line {place.line}" if isinstance(place, CellLine) else f"line {place}"

    result.notes = [(_cell_line(module, line), lines_named(note, named)) for line, note in result.notes]
    result.text, result.rounds = text, []
    return result


def add_noqa(text: str, found: Iterable["Reported"]) -> Tuple[str, int]:
    """The comments go into the cells' lines (a masked `!` line's too: the shell reads `#`
    as a comment), through the module the cells make."""
    from .fixer import statement_lines
    from .noqa import add_noqa

    cells = read_cells(text)
    module = module_of(cells)
    lines = {position: line for line, position in module.lines.items()}
    wanted = [(lines[(item.cell, item.line)], item.code) for item in found if (item.cell, item.line) in lines]
    noted, count = add_noqa(module.text, wanted, statement_lines(module.text))
    fixed = _split(noted, module)
    return (_written(text, cells, fixed), count) if fixed is not None else (text, 0)


def _source(text: str):
    from .edits import Source

    return Source(text)


def _in_cell(error, module: Virtual):
    from .engine import AnalysisError

    if error.line is None:
        return error
    cell, line, column = module.position(error.line, error.column or 1)
    return AnalysisError(str(error), line, column, cell=cell)


def _cell_line(module: Virtual, line: int):
    cell, within, _ = module.position(line, 1)
    return CellLine(cell, within) if cell is not None else line


def _relocated(finding, module: Virtual, offset: Optional[int], source):
    """The finding at its cell's line and column (`offset`: where it is in `source`, else its own)."""
    start = source.finding_span(finding)[0] if offset is None else offset
    line, column = source.position(start)
    cell, within, column = module.position(line, column)
    return replace(finding, line=CellLine(cell, within) if cell is not None else line, col=column - 1)


def _split(text: str, module: Virtual) -> Optional[Dict[int, str]]:
    """Each cell's source in a module the cells made (after a fix), its masked lines as they
    were; None when the cells cannot be found again as they were made."""
    pieces = _SEPARATOR_LINE.split(text)
    numbers = [int(n) for n in pieces[1::2]]
    if numbers != [cell.number for cell in module.cells]:
        return None
    bodies = pieces[2::2]
    if bodies and pieces[0]:  # what a fix put above the first cell (an import) opens it
        bodies[0] = pieces[0] + bodies[0]
    sources: Dict[int, str] = {}
    for cell, body in zip(module.cells, bodies):
        restored = _restored(body, cell)
        if restored is None:
            return None
        if cell.source and not cell.source.endswith("\n") and restored.endswith("\n"):
            restored = restored[:-1]
        sources[cell.number] = restored
    return sources


def _restored(body: str, cell: Cell) -> Optional[str]:
    lines = body.split("\n")
    at = 0
    for _, original in sorted(cell.masked.items()):
        stripped = original.lstrip() if cell.python else original
        while at < len(lines) and not lines[at].lstrip().startswith(_MASK + stripped):
            at += 1
        if at == len(lines):
            return None
        line = lines[at]
        indent = line[:len(line) - len(line.lstrip())] if cell.python else ""
        lines[at] = indent + line.lstrip()[len(_MASK):]
        at += 1
    return "\n".join(lines)


def _written(text: str, cells: List[Cell], sources: Dict[int, str]) -> str:
    """The notebook's JSON with the changed cells' sources replaced, nothing else touched."""
    from .json_positions import encode_like

    out, at = [], 0
    for cell in cells:
        new = sources[cell.number]
        if new == cell.source:
            continue
        old = text[cell.start:cell.end]
        value = new.splitlines(True) if old.lstrip().startswith("[") else new
        out += [text[at:cell.start], encode_like(old, value)]
        at = cell.end
    return "".join(out) + text[at:]
