"""The tree of a fixed text, from the tree of the text before it: only the statements the edits
are in are parsed again.

`fix` analyses what it wrote, to place the findings that remain and to show that the fixes have
settled. Parsing the whole module again cost as much as a third of a `check` of the tree, while
most fixes rename a name on one line of a large module: here the innermost statement around
each edit is parsed alone, as the lines it spans, and put in the old statement's place.

A statement's lines parse alone as they do in the module when no other code shares them and
the line before them does not end in a backslash: the tokenizer then enters them as it enters
the module's next logical line. An indented statement is parsed under an `if 1:` of its own,
and line breaks in front of it put it on its lines (parsing a blank line costs next to
nothing), so its nodes come out with the module's positions. Edits that add or remove a line
break would move every later node: for those the module is parsed whole, as it is for a
module whose `__future__` changes the grammar.
"""
from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Optional, Sequence, Tuple

from .edits import Source
from .table import TextEdit

_LINE_BREAKS = ("\n", "\r")
# Blank lines parsed in front of statements to put them on their lines, at most, per line of
# them; further down they are moved there node by node: either way a statement costs time in
# proportion to its size, not to its line number (thousands of fixes in a module stay linear).
_PADDING = 4
# (statement list, index of the first statement, index of the last, the nodes around it, innermost last)
Slice = Tuple[List[ast.stmt], int, int, Tuple[ast.AST, ...]]


def reparsed(tree: ast.Module, before: Source, edits: Sequence[TextEdit], after: Source) -> Optional[ast.Module]:
    """`ast.parse(after.text)`, made from `tree` (`ast.parse(before.text)`, changed in place) by
    parsing the statements the edits are in; None, with `tree` as it was, when the module must
    be parsed whole."""
    if any(any(b in edit.text or b in before.text[edit.start:edit.end] for b in _LINE_BREAKS + ("\f",))
           for edit in edits):  # (a form feed in an indentation resets its column: `    \felse:` is at 0)
        return None
    if "barry_as_FLUFL" in before.text or "barry_as_FLUFL" in after.text:  # `<>`: the grammar of the whole module
        return None
    slices: List[Slice] = []
    firsts: Dict[int, List[int]] = {}
    for edit in edits:
        found = _innermost(tree, before, edit, firsts)
        if found is None:
            return None
        slices.append(found)
    replacements = []
    for block, first, last, around in _outermost(slices):
        replacement = _replacement(block, first, last, around, before, after)
        if replacement is None:
            return None
        replacements.append((_first_line(block[first]), block, first, last, *replacement))
    # nothing changes before every slice has parsed; then from the last, as replacing statements
    # moves the indices of the later ones in their block
    for _, block, first, last, new, ending in sorted(replacements, key=lambda r: -r[0]):
        block[first:last + 1] = new
        for node in ending:
            node.end_lineno, node.end_col_offset = new[-1].end_lineno, new[-1].end_col_offset
    return tree


def _start(statement: ast.stmt) -> Tuple[int, int]:
    """Where a statement begins, its decorators included."""
    decorators = getattr(statement, "decorator_list", None)
    start = decorators[0] if decorators else statement
    return start.lineno, start.col_offset


def _first_line(statement: ast.stmt) -> int:
    return _start(statement)[0]


def _blocks(statement: ast.AST) -> List[Tuple[List[ast.stmt], Tuple[ast.AST, ...]]]:
    """The statement lists directly inside a compound statement, each with the node between
    them (an `except` clause, a `case`), if any."""
    found = [(block, ()) for name in ("body", "orelse", "finalbody")
             if isinstance(block := getattr(statement, name, None), list)]
    for clause in getattr(statement, "handlers", ()) or getattr(statement, "cases", ()):
        found.append((clause.body, (clause,)))
    return found


def _innermost(tree: ast.Module, source: Source, edit: TextEdit, firsts: Dict[int, List[int]]) -> Optional[Slice]:
    """The innermost statements that hold the edit's line and have their lines to themselves
    (`firsts`: the first line of each statement of a block, by the block's id, as they are asked)."""
    line = source.position(edit.start)[0]
    path: List[Slice] = []
    block: List[ast.stmt] = tree.body
    around: Tuple[ast.AST, ...] = ()
    while True:
        if id(block) not in firsts:
            firsts[id(block)] = [_first_line(s) for s in block]
        index = bisect.bisect_right(firsts[id(block)], line) - 1  # the last to start by the line, if any holds it
        if index < 0 or block[index].end_lineno < line:
            break
        path.append(_widened(block, index, around))
        statement = block[index]
        inner = next(((b, a) for b, a in _blocks(statement)
                      if b and _first_line(b[0]) <= line <= b[-1].end_lineno), None)
        if inner is None:
            break
        block, around = inner[0], (*around, statement, *inner[1])
    for candidate in reversed(path):
        if _alone(candidate, source, edit):
            return candidate
    return None


def _widened(block: List[ast.stmt], index: int, around: Tuple[ast.AST, ...]) -> Slice:
    """The statement with the neighbours that share a line with it (`a = 1; b = 2`)."""
    first = last = index
    while first > 0 and block[first - 1].end_lineno >= _first_line(block[first]):
        first -= 1
    while last + 1 < len(block) and _first_line(block[last + 1]) <= block[last].end_lineno:
        last += 1
    return block, first, last, around


def _alone(candidate: Slice, source: Source, edit: TextEdit) -> bool:
    """Whether the statements' lines hold nothing else in front of them (a clause's header:
    `else: x = 1`) and are not a continuation of the line before; the edit must be in them."""
    block, first, _, _ = candidate
    statement = block[first]
    line, column = _start(statement)
    begins = source.offset(line, column)
    sign = "@" if getattr(statement, "decorator_list", None) else ""  # what may stand in front of it
    if source.text[source.line_start(line):begins].strip() not in ("", sign):
        return False
    if isinstance(statement, ast.If) and source.text.startswith("elif", begins):
        return False  # an `elif` is a clause of the `if` before it: its lines do not parse alone
    if edit.start < begins:
        return False
    return line == 1 or not source.line(line - 1).rstrip("\r\n").endswith("\\")


def _outermost(slices: List[Slice]) -> List[Slice]:
    """Each slice once, without those inside another (whose statements are parsed with it)."""
    unique = list({(id(s[0]), s[1], s[2]): s for s in slices}.values())
    taken = {id(statement) for block, first, last, _ in unique for statement in block[first:last + 1]}
    return [s for s in unique if not any(id(node) in taken for node in s[3])]


def _replacement(block: List[ast.stmt], first: int, last: int, around: Tuple[ast.AST, ...], before: Source,
                 after: Source) -> Optional[Tuple[List[ast.stmt], List[ast.AST]]]:
    """The statements the slice's lines of the fixed text parse to, and the statements around
    them that end where they end (and must end where the new ones do); None if they cannot be
    shown to be the module's."""
    start_line, end_line = _first_line(block[first]), block[last].end_lineno
    lines = after.text[after.line_start(start_line):after.line_start(end_line) + len(after.line(end_line))]
    if lines.rstrip("\r\n").endswith("\\"):
        return None
    nested = bool(around)
    if nested and start_line < 2:
        return None
    if nested and _indentation(before, start_line) != _indentation(after, start_line):
        return None  # under `if 1:` any indentation parses; in the module, the block's own must
    shift = start_line - (2 if nested else 1)  # the lines in front of the statements (and of the `if 1:`)
    padded = shift <= _PADDING * (end_line - start_line + 1)
    try:
        module = ast.parse(("\n" * shift if padded else "") + ("if 1:\n" if nested else "") + lines)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if nested:
        if len(module.body) != 1 or not isinstance(module.body[0], ast.If) or module.body[0].orelse:
            return None  # (an `else:` the statement's lines dedent to is the wrapper's, not theirs)
        new = module.body[0].body
    else:
        new = module.body
    if not padded:
        for statement in new:
            ast.increment_lineno(statement, shift)
    if new and _start(new[0]) != _start(block[first]):
        return None  # a header made a comment (`#with ...:`): its body would stand alone, indented
    ending: List[ast.AST] = []
    if nested and last == len(block) - 1:  # the statements around end with it, at the line's last token
        old_end = (block[last].end_lineno, block[last].end_col_offset)
        if not (_ends_line(before, *old_end) and _ends_line(after, new[-1].end_lineno, new[-1].end_col_offset)):
            return None  # a `;` after it: they end there
        for node in reversed(around):
            if not hasattr(node, "end_lineno"):  # a `case`: no position of its own
                continue
            if (node.end_lineno, node.end_col_offset) != old_end:
                break
            ending.append(node)
    return new, ending


def _indentation(source: Source, line: int) -> str:
    text = source.line(line)
    return text[:len(text) - len(text.lstrip(" \t\f"))]


def _ends_line(source: Source, line: int, column: int) -> bool:
    """Whether only blanks or a comment follow a position on its line."""
    rest = source.text[source.offset(line, column):source.line_start(line) + len(source.line(line))].strip()
    return not rest or rest.startswith("#")
