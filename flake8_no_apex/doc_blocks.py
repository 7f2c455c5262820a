"""The Python code of documentation (`check --check-docs`): fenced blocks of Markdown
(```` ```python ````, `~~~py`, `pycon`), reStructuredText's `code-block`/`code`/`sourcecode`/
`testcode`/`doctest` directives and `>>>` examples, and the `>>>` examples of a module's
docstrings, so a project's docs stop teaching the removed API.

The blocks of a file are read as one module (a tutorial imports in one block and calls in the
next), a block that is no Python on its own (a fragment with `...`) left out. Findings are at
the file's own lines and columns; `fix` rewrites a block in place (a `>>>` example only where
the fix keeps its lines), and docstring examples are reported, not rewritten.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    from .engine import Analysis, Document, Session
    from .fixer import FixResult
    from dataclasses import dataclass, field, replace
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import dataclass, field, replace

_LANGUAGES = {"python", "py", "python3", "py3", "pycon", "ipython", "ipython3", "pyi"}
_FENCE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*\{?[ \t]*\.?(?P<lang>[\w+-]*)")
_DIRECTIVE = re.compile(r"(?P<indent>[ \t]*)\.\. (?P<name>code-block|code|sourcecode|testcode|doctest|ipython)::"
                        r"[ \t]*(?P<lang>[\w+-]*)[ \t]*$")
_PROMPT = re.compile(r"[ \t]*(>>>|\.\.\.)( |$)")
_SEPARATOR = "#%% flake8-no-apex block {}\n"
_SEPARATOR_LINE = re.compile(r"#%% flake8-no-apex block (\d+)\n")


@dataclass
class Block:
    """Lines of code: `lines[i]` is (file line, column where the code starts, the code)."""

    lines: List[Tuple[int, int, str]] = field(default_factory=list)
    prompts: bool = False  # a `>>>` example: its prompts are not code
    indent: int = 0  # the columns of indentation the block's code lines have in the file

    @property
    def code(self) -> str:
        return "".join(code + "\n" for _, _, code in self.lines)


def markdown_blocks(text: str) -> List[Block]:
    lines = text.split("\n")
    blocks: List[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, indent = match.group("fence"), len(match.group("indent"))
        language = match.group("lang").lower()
        body: List[Tuple[int, str]] = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and not lines[i].strip().strip(fence[0])):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        if language in _LANGUAGES:
            blocks += _code_of(body, indent, prompts=language == "pycon")
    return blocks


def rst_blocks(text: str) -> List[Block]:
    lines = text.split("\n")
    blocks: List[Block] = []
    i = 0
    while i < len(lines):
        match = _DIRECTIVE.match(lines[i])
        if match and (match.group("lang").lower() in _LANGUAGES or match.group("name") in ("testcode", "doctest")
                      or not match.group("lang") and match.group("name") == "code-block"):
            indent = len(match.group("indent"))
            i += 1
            while i < len(lines) and lines[i].strip().startswith(":"):  # the directive's options
                i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append((i + 1, lines[i]))
                i += 1
            while body and not body[-1][1].strip():
                body.pop()
            inner = min((len(line) - len(line.lstrip()) for _, line in body if line.strip()), default=indent)
            blocks += _code_of(body, inner, prompts=match.group("name") == "doctest")
        elif _PROMPT.match(lines[i]) and lines[i].lstrip().startswith(">>>"):  # a doctest block
            body = []
            while i < len(lines) and lines[i].strip():
                body.append((i + 1, lines[i]))
                i += 1
            blocks += _code_of(body, 0, prompts=True)
        else:
            i += 1
    return blocks


def _code_of(body: List[Tuple[int, str]], indent: int, prompts: bool) -> List[Block]:
    """The block's code: its lines less the indentation, or the `>>>`/`...` lines less the prompt
    (the output lines of an example are no code)."""
    while body and not body[0][1].strip():
        body = body[1:]
    while body and not body[-1][1].strip():
        body = body[:-1]
    if not prompts and body and body[0][1].lstrip().startswith(">>>"):
        prompts = True
    block = Block(prompts=prompts)
    for number, line in body:
        if prompts:
            match = _PROMPT.match(line)
            if match:
                block.lines.append((number, match.end(), line[match.end():]))
        else:
            cut = min(indent, len(line) - len(line.lstrip()))
            block.lines.append((number, cut, line[cut:]))
    block.indent = min((cut for _, cut, code in block.lines if code.strip()), default=0)
    return [block] if block.lines else []


def docstring_blocks(text: str, tree) -> List[Block]:
    """The `>>>` examples of the module's, classes' and functions' docstrings."""
    import ast

    lines = text.split("\n")
    blocks: List[Block] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        first = node.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str) and ">>>" in first.value.value):
            continue
        example: List[Tuple[int, str]] = []
        for number in range(first.lineno, first.end_lineno + 1):
            line = lines[number - 1]
            if _PROMPT.match(line) and (line.lstrip().startswith(">>>") or example):
                example.append((number, line))
            elif example:
                blocks += _code_of(example, 0, prompts=True)
                example = []
        blocks += _code_of(example, 0, prompts=True) if example else []
    return blocks


class Placement:
    """Where a line of the module the blocks make is in the file."""

    def __init__(self, lines: Dict[int, Tuple[int, int]], file_texts: Dict[int, str]):
        self.lines = lines  # module line -> (file line, column of the code)
        self.file_texts = file_texts  # module line -> the file's line

    def position(self, line: int, column: int) -> Tuple[Optional[int], int, int]:
        at, indent = self.lines.get(line, (line, 0))
        return None, at, column + indent

    def file_line(self, line: int) -> int:
        return self.lines.get(line, (line, 0))[0]

    def line_text(self, line: int, text: str) -> str:
        return self.file_texts.get(line, text)


def module_of(blocks: List[Block], file_text: str) -> Tuple[str, Placement, List[Block]]:
    """The module of the blocks that compile on their own, where its lines are, and those blocks."""
    parts, lines, kept = [], {}, []
    file_lines = file_text.split("\n")
    texts = {}
    number = 1
    for block in blocks:
        try:
            compile(block.code, "<block>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        parts.append(_SEPARATOR.format(len(kept)))
        kept.append(block)
        number += 1
        for at, indent, code in block.lines:
            parts.append(code + "\n")
            lines[number] = (at, indent)
            texts[number] = file_lines[at - 1] if at <= len(file_lines) else code
            number += 1
    return "".join(parts), Placement(lines, texts), kept


def blocks_of(document: "Document", tree=None) -> List[Block]:
    name = document.path.name.lower()
    if name.endswith((".rst", ".rest")):
        return rst_blocks(document.text)
    if name.endswith(".py"):
        return docstring_blocks(document.text, tree)
    return markdown_blocks(document.text)


def analyse(session: "Session", document: "Document") -> "Analysis":
    """The Python blocks' findings and the shell blocks' (apex installs, removed flags), at the
    file's places; each Python plan's edits moved to the file (none where a multi-line edit
    would land in a `>>>` example)."""
    from .edits import Source
    from .engine import Analysis

    source = Source(document.text)
    floors = session.targets(document.path).floors
    found, plans, hidden = [], [], []
    module, placement, blocks = module_of(blocks_of(document), document.text)
    if module:
        analysis = session.analyse(replace(document, text=module, kind="python", on_disk=None, tree=None,
                                           named=False))
        prompts = {number for block in blocks if block.prompts for number, _, _ in block.lines}
        for finding, plan in zip(analysis.findings, analysis.plans):
            found.append(_in_file(finding, analysis.source, placement))
            plans.append(_plan_in_file(plan, analysis.source, placement, source, prompts))
        hidden = [_in_file(finding, analysis.source, placement) for finding in analysis.hidden]
    shell = shell_findings(session, document, source, floors)
    found += shell
    plans += [None] * len(shell)
    order = sorted(range(len(found)), key=lambda i: (found[i].line, found[i].col))
    return Analysis(document, source, [found[i] for i in order], floors, lambda: [plans[i] for i in order], hidden)


def _in_file(finding, source, placement: "Placement", offset: Optional[int] = None):
    """The finding at the file's line and column (`offset`: where it is in `source`, else its own)."""
    line, column = source.position(source.finding_span(finding)[0] if offset is None else offset)
    _, at, column = placement.position(line, column)
    return finding._replace(line=at, col=column - 1, site=finding.site._replace(node=None))


def _plan_in_file(plan, module_source, placement: "Placement", source, prompts):
    if plan is None:
        return None
    from .table import TextEdit

    edits = []
    for edit in plan.edits:
        (first, start), (last, end) = module_source.position(edit.start), module_source.position(edit.end)
        (_, at, start), (_, to, end) = placement.position(first, start), placement.position(last, end)
        text = edit.text
        if "\n" in text:
            if at in prompts or first not in placement.lines:
                return None  # a `>>>` example's lines: `fix` says whether it can
            text = text.replace("\n", "\n" + " " * placement.lines[first][1])
        edits.append(TextEdit(source.offset(at, 0) + start - 1, source.offset(to, 0) + end - 1, text))
    return plan._replace(edits=tuple(edits))


_SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "bash-session"}


def shell_findings(session: "Session", document: "Document", source, floors) -> List:
    """The findings of the shell blocks (```` ```bash ````, `.. code-block:: console`): the file
    with everything else blanked, a console block's `$ ` prompts and output too."""
    from .shell_commands import BREAK, findings, noqa_on_command

    text = document.text
    kept = shell_lines(text, rst=document.path.name.lower().endswith((".rst", ".rest")))
    if not kept:
        return []
    shell = []
    for number, line in enumerate(text.split("\n"), 1):
        start = kept.get(number)
        if number > 1:  # each block is a program of its own
            shell.append(BREAK if start is not None and number - 1 not in kept else "\n")
        shell.append(" " * len(line) if start is None else " " * start + line[start:])
    shell = "".join(shell)
    located = findings(shell, text, floors, session.index)
    ends = {item.finding.line: item.end_line for item in located}
    return session.filtered(document.path, source, [item.finding for item in located],
                            noqa=noqa_on_command(source, ends))


def shell_lines(text: str, rst: bool) -> Dict[int, int]:
    """line -> the column its command starts at, for the lines of the file's shell blocks, and of
    its blocks that name no language (an RST `::` literal block, `.. code::`, a bare fence): a
    command in them is read as one, prose never makes an install or a launch."""
    lines = text.split("\n")
    kept: Dict[int, int] = {}
    i = 0
    while i < len(lines):
        if rst:
            match = _DIRECTIVE.match(lines[i])
            literal = not match and lines[i].rstrip().endswith("::") and not lines[i].lstrip().startswith("..")
            language = match.group("lang").lower() if match else ""
            if not (literal or match and (language in _SHELL_LANGUAGES or not language)):
                i += 1
                continue
            indent = len(lines[i]) - len(lines[i].lstrip())
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(i)
                i += 1
        else:
            match = _FENCE.match(lines[i])
            if not match:
                i += 1
                continue
            fence, language = match.group("fence"), match.group("lang").lower()
            i += 1
            body = []
            while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                          and not lines[i].strip().strip(fence[0])):
                body.append(i)
                i += 1
            i += 1
            if language and language not in _SHELL_LANGUAGES:
                continue
        console = language in ("console", "shell-session", "shellsession", "bash-session")
        continued = False
        for index in body:
            line = lines[index]
            prompt = re.match(r"[ \t]*\$ ", line)
            if not console:
                kept[index + 1] = 0
            elif prompt or continued:
                kept[index + 1] = prompt.end() if prompt else 0
            continued = (prompt is not None or continued) and line.rstrip().endswith("\\")
    return kept


def in_docstrings(session: "Session", document: "Document", tree) -> List:
    """The findings of the module's docstring examples, at the module's own lines."""
    module, placement, _ = module_of(docstring_blocks(document.text, tree), document.text)
    if not module:
        return []
    analysis = session.analyse(replace(document, text=module, kind="python", on_disk=None, tree=None, named=False))
    return [_in_file(finding, analysis.source, placement) for finding in analysis.findings]


def fix(session: "Session", document: "Document", unsafe: bool) -> "FixResult":
    from .edits import Source
    from .fixer import FixError

    module, placement, blocks = module_of(blocks_of(document), document.text)
    python = replace(document, text=module, kind="python", on_disk=None, tree=None, named=False)
    result = session.fix(python, unsafe)
    pieces = _SEPARATOR_LINE.split(result.text)
    bodies = pieces[2::2]
    if [int(n) for n in pieces[1::2]] != list(range(len(blocks))):
        raise FixError("a fix would move code across the blocks; the file is left")
    if bodies and pieces[0]:
        bodies[0] = pieces[0] + bodies[0]
    lines = document.text.split("\n")
    for block, body in sorted(zip(blocks, bodies), key=lambda pair: -pair[0].lines[0][0]):
        new = body[:-1].split("\n") if body.endswith("\n") else body.split("\n")
        if new == [code for _, _, code in block.lines]:
            continue
        first, last = block.lines[0][0], block.lines[-1][0]
        if block.prompts:
            if len(new) != len(block.lines):
                raise FixError(f"a fix would change the lines of the >>> example on line {first}; the file is left")
            for (at, indent, _), code in zip(block.lines, new):
                lines[at - 1] = lines[at - 1][:indent] + code
            continue
        indent = next(lines[at - 1][:block.indent] for at, _, code in block.lines if code.strip())
        lines[first - 1:last] = [indent + code if code else code for code in new]
    before = Source(module)
    shell = shell_findings(session, document, Source(document.text), session.targets(document.path).floors)
    moved = Source(result.text)  # a remaining finding where it was in the file (blocks' lines move with a fix)
    result.remaining = [_in_file(f, before, placement, result.original_offset(moved.finding_span(f)[0]))
                        for f in result.remaining] + shell
    result.on_disk = list(result.remaining)
    result.fixed = [f._replace(line=placement.file_line(f.line)) for f in result.fixed]
    result.notes = [(placement.file_line(line), lines_named(note, lambda n: f"line {placement.file_line(n)}"))
                    for line, note in result.notes]
    result.text, result.rounds = "\n".join(lines), []
    return result


def lines_named(note: str, name) -> str:
    """A note's "line N" (of the module the blocks or cells make) as the file's own place."""
    return re.sub(r"\bline (\d+)", lambda match: name(int(match.group(1))), note)
