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
from typing import TYPE_CHECKING, Iterable
from typing import Dict, List, Optional, Tuple

from .inputs import CellLine

if TYPE_CHECKING:
    from .engine import Analysis, Document, Session
    from .fixer import FixResult
    from .report import Reported
    from dataclasses import dataclass, field, replace
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import dataclass, field, replace

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
    masked: Dict[int, str] = field(default_factory=dict)  # line (from 1) -> the IPython line masked there
    shell: Dict[int, int] = field(default_factory=dict)  # line -> the column its shell command starts at
    # a masked line -> the indentation its `pass` needs in the module: its own, the first line's for
    # the lines a backslash continues, none in a cell that is no Python
    indent: Dict[int, int] = field(default_factory=dict)


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
    """Which lines are IPython (masked) and where the shell of each shell line starts: a `!`
    escape, `x = !cmd`, a `%pip`/`%conda` magic, an automagic `pip install ...` (no `%`: IPython
    runs it as the magic) and the lines a trailing backslash continues; a %%bash cell's body."""
    lines = _lines(cell.source)
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)
        name = magic[0] if magic else ""
        argument = magic[1] if len(magic) > 1 else ""
        cell.python = name in _PYTHON_CELL_MAGICS or name == "writefile" and argument.rstrip().endswith(".py")
        shell = name in _SHELL_CELL_MAGICS or name == "script" and argument.split()[:1] in (["bash"], ["sh"]) or \
            name == "writefile" and argument.rstrip().endswith((".sh", ".bash"))  # a script the notebook writes
        cell.masked[1], cell.indent[1] = lines[0], 0
        if shell:
            cell.shell.update((number, 0) for number in range(2, len(lines) + 1))
    continued = False  # the line before is an IPython line that a backslash continues
    depth, joined = 0, False  # Python's open brackets, and a backslash, before this line
    for number, line in enumerate(lines, 1):
        if number == 1 and cell.masked:
            continue
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if cell.python and not continued and (depth or joined):  # inside a Python statement: `% args` is Python
            depth, joined = _brackets(line, depth), line.rstrip().endswith("\\")
            continue
        if continued:  # the rest of an IPython line a backslash continues
            cell.masked[number], cell.indent[number] = line, cell.indent[number - 1]
            if number - 1 in cell.shell:
                cell.shell.setdefault(number, 0)
        elif not cell.python:
            cell.masked[number], cell.indent[number] = line, 0
        elif stripped and not stripped.startswith("#") and (_IPYTHON_LINE.match(line) or _automagic(stripped)):
            cell.masked[number], cell.indent[number] = line, indent
            start = _shell_start(line, stripped, indent)
            if start is not None:
                cell.shell[number] = start
        continued = number in cell.masked and line.rstrip().endswith("\\")
        if cell.python and number not in cell.masked:
            depth, joined = _brackets(line, depth), line.rstrip().endswith("\\")
    return cell


def _lines(source: str) -> List[str]:
    """A cell's lines (a last line break ends the last line: no empty line after it)."""
    lines = source.split("\n")
    return lines[:-1] if source.endswith("\n") else lines


def _brackets(line: str, depth: int) -> int:
    """The brackets open after a line of Python (strings and comments skipped, one line at a
    time: enough to tell a `%` operator that continues an expression from a magic)."""
    quote, i = None, 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 1  # what it escapes
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#":
            break
        elif char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        i += 1
    return depth


def unread(cell: Cell) -> None:
    """Mask a whole cell that does not parse, so the others are still read."""
    cell.python, cell.shell = False, {}
    cell.masked = dict(enumerate(_lines(cell.source), 1))
    cell.indent = {number: 0 for number in cell.masked}


_AUTOMAGIC = ("pip", "pip3", "conda", "mamba", "cd", "ls", "pwd", "mkdir", "cat", "rm", "cp", "mv", "wget")


def _automagic(stripped: str) -> bool:
    """A line IPython's automagic runs as a magic (`pip install apex`): a magic's name and words
    that are no Python statement."""
    if stripped.split(None, 1)[0] not in _AUTOMAGIC:
        return False
    try:
        compile(stripped, "<line>", "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return True
    return False


def _shell_start(line: str, stripped: str, indent: int) -> Optional[int]:
    """Where the shell command of a masked line starts, or None for a magic that runs no shell."""
    if stripped.startswith("!"):
        return indent + 1 + stripped.startswith("!!")
    match = re.match(r"[\w.\[\], ]+=[ \t]*!", stripped)
    if match:
        return indent + match.end()
    if stripped.startswith("%") and stripped[1:].split(None, 1)[:1] and stripped[1:].split(None, 1)[0] in \
            _SHELL_LINE_MAGICS:
        return indent + 1
    if _automagic(stripped) and stripped.split(None, 1)[0] in _SHELL_LINE_MAGICS + ("pip3",):
        return indent
    return None


@dataclass
class Virtual:
    """The module the notebook's code cells make: `lines[n]` is (cell, line in cell) of line n."""

    text: str
    cells: List[Cell]
    lines: Dict[int, Tuple[int, int]]
    # a masked line of the module -> (the indentation of its `pass`, the cell line's own, the cell line):
    # the module's line is the `pass`, then the cell's line less its indentation
    masks: Dict[int, Tuple[int, int, str]]
    dedents: Dict[int, int] = field(default_factory=dict)  # a line of an indented cell -> what it lost

    def position(self, line: int, column: int) -> Tuple[Optional[int], int, int]:
        """(cell, line, column) of the module's (line, column) (1-based columns)."""
        cell, within = self.lines.get(line, (None, line))
        column += self.dedents.get(line, 0)
        if line in self.masks:
            indent, own, _ = self.masks[line]
            column = max(column - indent - len(_MASK), 1) + own
        return cell, within, column

    def module_column(self, line: int, column: int) -> int:
        """The module's 0-based column of a cell line's 0-based column."""
        if line not in self.masks:
            return column - self.dedents.get(line, 0)
        indent, own, _ = self.masks[line]
        return indent + len(_MASK) + max(column - own, 0)

    def line_text(self, line: int, text: str) -> str:
        if line in self.masks:
            return self.masks[line][2]
        return " " * self.dedents.get(line, 0) + text if line in self.dedents else text


def module_of(cells: List[Cell]) -> Virtual:
    parts: List[str] = []
    lines: Dict[int, Tuple[int, int]] = {}
    masks: Dict[int, Tuple[int, int, str]] = {}
    dedents: Dict[int, int] = {}
    number = 1
    for cell in cells:
        parts.append(_SEPARATOR.format(cell.number))
        number += 1
        prefix = _prefix(cell)  # IPython removes the indentation of a cell indented as a whole
        body = cell.source if cell.source.endswith("\n") or not cell.source else cell.source + "\n"
        for within, line in enumerate(body.split("\n")[:-1] if body else [], 1):
            lines[number] = (cell.number, within)
            if within in cell.masked:
                indent, stripped = cell.indent[within], line.lstrip()
                indent = max(indent - len(prefix), 0) if cell.python else indent
                masks[number] = (indent, len(line) - len(stripped), line)
                line = " " * indent + _MASK + stripped
            elif prefix and line.startswith(prefix):
                line, dedents[number] = line[len(prefix):], len(prefix)
            parts.append(line + "\n")
            number += 1
    return Virtual("".join(parts), cells, lines, masks, dedents)


def _prefix(cell: Cell) -> str:
    """The indentation of a Python cell whose first line is indented, where every line of it has it."""
    if not cell.python or cell.source[:1] not in (" ", "\t"):
        return ""
    first = cell.source.split("\n", 1)[0]
    prefix = first[:len(first) - len(first.lstrip())]
    rest = cell.source.split("\n")
    return prefix if all(line.startswith(prefix) or not line.strip() for line in rest) else ""


def shell_text(cell: Cell) -> str:
    """The cell's shell, blanked elsewhere to the cell's own length: `!` lines, `%pip`/`%conda`
    lines and their continuations (each a shell of its own), and a %%bash cell's body."""
    from .shell_commands import BREAK

    out = []
    for number, line in enumerate(cell.source.split("\n"), 1):
        start = cell.shell.get(number)
        if number > 1:
            joined = number - 1 in cell.shell and cell.source.split("\n")[number - 2].rstrip().endswith("\\")
            out.append("\n" if joined or start is None or not cell.python else BREAK)
        out.append(" " * len(line) if start is None else " " * start + line[start:])
    return "".join(out)


def _read(session: "Session", document: "Document", run):
    """run(module) on the module of the notebook's cells; a cell that does not parse is masked
    whole and the rest read again: (run's result, the module, the cells' parse errors)."""
    from .engine import AnalysisError, analysing

    with analysing():
        cells = read_cells(document.text)
    problems: List[str] = []
    while True:
        module = module_of(cells)
        try:
            return run(replace(document, text=module.text, kind="python", on_disk=None, tree=None)), module, problems
        except AnalysisError as error:
            located = _in_cell(error, module)
            broken = next((cell for cell in cells if cell.number == located.cell and cell.python), None)
            if broken is None:
                raise located from None
            unread(broken)
            problems.append(f"cell {located.cell}:{located.line}:{located.column}: {located} (the other cells "
                            "were read)")


def analyse(session: "Session", document: "Document") -> "Analysis":
    from .engine import Analysis

    analysis, module, problems = _read(session, document, session.analyse)
    shell = _shell(session, document, module, analysis.source)
    found = analysis.findings + shell
    order = sorted(range(len(found)), key=lambda i: (found[i].line, found[i].col))

    def plans() -> list:
        planned = analysis.plans + [None] * len(shell)
        return [planned[i] for i in order]

    return Analysis(document, analysis.source, [found[i] for i in order], analysis.floors, plans,
                    analysis.hidden, placement=module, problems=problems)


def _shell(session: "Session", document: "Document", module: Virtual, source) -> list:
    from .shell_commands import findings, noqa_on_command

    floors = session.targets(document.path).floors
    first_line = {cell: line for line, (cell, within) in module.lines.items() if within == 1}
    found, ends = [], {}
    for cell in module.cells:
        text = shell_text(cell)
        if not text.strip():
            continue
        for item in findings(text, cell.source, floors, session.index):
            line = first_line[cell.number] + item.finding.line - 1
            found.append(item.finding._replace(line=line, col=module.module_column(line, item.finding.col)))
            ends[line] = first_line[cell.number] + item.end_line - 1
    return session.filtered(document.path, source, found, noqa=noqa_on_command(source, ends))


def fix(session: "Session", document: "Document", unsafe: bool) -> "FixResult":
    from .fixer import FixError

    result, module, problems = _read(session, document, lambda python: session.fix(python, unsafe))
    result.problems = problems
    fixed_cells = _split(result.text, module)
    if fixed_cells is None:
        raise FixError("a fix would move code across cells or change an IPython line; the notebook is left")
    text = _written(document.text, module.cells, fixed_cells)
    after = module_of([_classified(Cell(cell.number, fixed_cells[cell.number], cell.start, cell.end))
                       for cell in module.cells])
    for old, new in zip(module.cells, after.cells):
        if old.python != new.python:  # a cell that did not parse stays masked whole
            unread(new)
    after = module_of(after.cells)
    before, fixed = _source(module.text), _source(after.text)
    shell_before = [_relocated(f, module, None, before) for f in _shell(session, document, module, before)]
    shell_after = [_relocated(f, after, None, fixed) for f in _shell(session, document, after, fixed)]
    moved = _source(result.text)
    on_disk = [_relocated(f, module, result.original_offset(moved.finding_span(f)[0]), before)
               for f in result.remaining] + shell_before
    remaining = [_relocated(f, after, None, moved) for f in result.remaining] + shell_after
    order = sorted(range(len(remaining)), key=lambda i: (remaining[i].line, remaining[i].col))
    result.remaining, result.on_disk = [remaining[i] for i in order], [on_disk[i] for i in order]
    result.fixed = [f._replace(line=_cell_line(module, f.line)) for f in result.fixed]
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
    return finding._replace(line=CellLine(cell, within) if cell is not None else line, col=column - 1)


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
    """The cell's text from its part of the module: each masked line found again in order and
    written back as it was (what a fix appended, a `# noqa`, kept; moved by as much as a fix
    re-indented its block), the cell's own indentation given back to the other lines."""
    lines = body.split("\n")
    prefix = _prefix(cell)
    restored = set()
    at = 0
    for number, original in sorted(cell.masked.items()):
        stripped = original.lstrip()
        while at < len(lines) and not lines[at].lstrip().startswith(_MASK + stripped):
            at += 1
        if at == len(lines):
            return None
        line = lines[at]
        expected = max(cell.indent[number] - len(prefix), 0) if cell.python else cell.indent[number]
        moved = len(line) - len(line.lstrip()) - expected
        suffix = line.lstrip()[len(_MASK) + len(stripped):]
        own = len(original) - len(stripped)
        lines[at] = (original if not moved else " " * max(own + moved, 0) + stripped) + suffix
        restored.add(at)
        at += 1
    if prefix:
        lines = [line if i in restored or not line.strip() else prefix + line for i, line in enumerate(lines)]
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
