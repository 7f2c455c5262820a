"""The vocabulary of fixes: character-offset edits, plans, and where things are in a file.

Fixers compute minimal edits from the resolver's nodes (rename a callee, insert an argument,
drop a keyword with its comma, rewrite an import); ast-grep-py's concrete syntax tree supplies
what Python's ast leaves out (commas, parentheses, comments). Edits are character offsets,
applied in one pass.
"""
from __future__ import annotations

import ast
import bisect
import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Tuple

from .resolve import dotted_name, walk

if TYPE_CHECKING:  # ast-grep is imported when a fix first needs the concrete syntax tree
    from ast_grep_py import SgNode

    from .table import Finding

_NEWLINE = re.compile(r"\r\n|\r|\n")
# The line breaks parsed in front of a module's regions, at most, in multiples of its length:
# they parse about five times faster than code, so all regions together cost less than the tree
_REGION_PADDING = 4
_BLANK_LINE = re.compile(r"[ \t]*(?:\r\n|\r|\n)")
_FSTRING_PREFIX = re.compile(r"(?<![\w])[rRbBuU]?[fFtT][rR]?[\"']")  # f"..", rf'..', Fr"..", t-strings


@dataclass(frozen=True, order=True)
class TextEdit:
    """Replace the text from `start` to `end` (character offsets into the source) by `text`. (It
    lives here, not with the table's vocabulary that re-exports it, so that reading a module's
    text imports none of the table.)"""

    start: int
    end: int
    text: str


@dataclass
class Source:
    """A file's text, with ast positions turned into character offsets and the concrete
    syntax tree at hand."""

    text: str
    _tree: Optional[SgNode] = field(default=None, init=False, repr=False)
    _regions: Dict[Tuple[int, int], SgNode] = field(default_factory=dict, init=False, repr=False)
    _padded: int = field(default=0, init=False, repr=False)  # line breaks parsed in front of regions
    _by_kind: Dict[Tuple[str, int], Dict[Tuple[int, int], SgNode]] = field(
        default_factory=dict, init=False, repr=False)
    _by_start: Dict[Tuple[str, int], Dict[int, SgNode]] = field(default_factory=dict, init=False, repr=False)
    _fstrings: Optional[List[Tuple[int, int, str]]] = field(default=None, init=False, repr=False)
    _joined_strings: Optional[List[ast.JoinedStr]] = field(default=None, init=False, repr=False)

    @cached_property
    def _starts(self) -> List[int]:
        """Where each line starts (on first use: most files are never asked)."""
        if "\r" in self.text:
            return [0, *(m.end() for m in _NEWLINE.finditer(self.text))]
        return [0, *accumulate(map((1).__add__, map(len, self.text.split("\n")[:-1])))]

    @cached_property
    def newline(self) -> str:
        """The file's line break: its first one."""
        first = _NEWLINE.search(self.text)
        return first.group() if first else "\n"

    @property
    def lines(self) -> List[str]:
        return [self.line(n) for n in range(1, len(self._starts) + 1)]

    def line(self, lineno: int) -> str:
        start = self._starts[lineno - 1]
        end = self._starts[lineno] if lineno < len(self._starts) else len(self.text)
        return self.text[start:end]

    def line_start(self, lineno: int) -> int:
        return self._starts[lineno - 1]

    def position(self, offset: int) -> Tuple[int, int]:
        """(line, 1-based character column) of a character offset."""
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def offset(self, lineno: int, col: int) -> int:
        """ast columns count UTF-8 bytes; edits count characters."""
        head = self.line(lineno).encode("utf-8")[:col].decode("utf-8", errors="ignore")
        return self._starts[lineno - 1] + len(head)

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def finding_span(self, finding: "Finding") -> Tuple[int, int]:
        """Character offsets of where a finding starts and ends. A Python finding's column counts
        UTF-8 bytes (flake8's) and it ends where its node does; a YAML or dependency file's finding
        (no node) counts characters and covers its width, never past its line."""
        node = finding.site.node
        if node is None:
            start = self.offset(finding.line, 0) + finding.col
            line_end = self.offset(finding.line, 0) + len(self.line(finding.line).rstrip("\r\n"))
            return start, max(start, min(start + finding.width, line_end))
        start = self.offset(finding.line, finding.col)
        if getattr(node, "end_lineno", None) is None:
            return start, start
        return start, self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    # --- the concrete syntax tree -------------------------------------------------------
    @property
    def tree(self) -> SgNode:
        if self._tree is None:
            from ast_grep_py import SgRoot

            self._tree = SgRoot(self.text, "python").root()
        return self._tree

    def _region(self, within: ast.AST) -> SgNode:
        """The concrete syntax tree of `within` alone (a call, or an import statement), at its
        own offsets: the text before it becomes line breaks, with what makes its first line
        valid on its own (a parenthesis before an indented expression, an `if 1:` above an
        indented statement). A fix in a 3,000-line module then parses a line or two, not all of
        it. Where that text does not parse cleanly, or the line breaks in front of the regions
        would add up to more than `_REGION_PADDING` times the module's length (a module with
        thousands of fixes: each region's are as many as its offset), the module's tree answers."""
        start, end = self.span(within)
        if (start, end) not in self._regions:
            from ast_grep_py import SgRoot

            line_start = self.line_start(within.lineno)
            column = start - line_start
            before, after = "", ""
            if column and isinstance(within, ast.stmt):
                before = "if 1:\n" + " " * column
            elif column:
                before, after = "(" + " " * (column - 1), ")"
            root = None
            if len(before) <= start and self._padded + start <= _REGION_PADDING * len(self.text):
                self._padded += start
                padded = "\n" * (start - len(before)) + before + self.text[start:end] + after
                root = SgRoot(padded, "python").root()
                if root.find(kind="ERROR") is not None:
                    root = None
            self._regions[start, end] = root if root is not None else self.tree
        return self._regions[start, end]

    def _nodes(self, kind: str, within: Optional[ast.AST] = None) -> Dict[Tuple[int, int], SgNode]:
        """The concrete nodes of a kind by (start, end), found once per kind and tree (a lookup
        per fix would make fixing a file quadratic in its fixes)."""
        root = self.tree if within is None else self._region(within)
        key = (kind, id(root))
        if key not in self._by_kind:
            nodes: Dict[Tuple[int, int], SgNode] = {}
            starting: Dict[int, SgNode] = {}
            self._by_kind[key], self._by_start[key] = nodes, starting
            for candidate in root.find_all(kind=kind):  # outer nodes first
                where = candidate.range()
                nodes.setdefault((where.start.index, where.end.index), candidate)
                starting.setdefault(where.start.index, candidate)
        return self._by_kind[key]

    def cst(self, node: ast.AST, kind: str, within: Optional[ast.AST] = None) -> Optional[SgNode]:
        """The concrete node of `kind` spanning exactly the ast node; given `within` (a call or
        an import statement holding it), only that is parsed."""
        return self._nodes(kind, within).get(self.span(node))

    def cst_starting(self, node: ast.AST, kind: str) -> Optional[SgNode]:
        """The concrete node of `kind` that starts where the ast node does."""
        self._nodes(kind)
        return self._by_start[kind, id(self.tree)].get(self.span(node)[0])

    def know_fstrings(self, joined_strings: List[ast.JoinedStr]) -> None:
        """The module's f-strings (the resolver's record), so that an edit that first needs them
        walks no tree."""
        self._joined_strings = joined_strings

    def _find_fstrings(self) -> None:
        self._fstrings = []
        if not _FSTRING_PREFIX.search(self.text):  # no f-string can start anywhere: no walk
            return
        joined = self._joined_strings
        if joined is None:
            joined = [node for node in walk(ast.parse(self.text)) if isinstance(node, ast.JoinedStr)]
        for node in joined:
            if getattr(node, "end_lineno", None):
                start, end = self.span(node)
                self._fstrings.append((start, end, self.text[start:end].lstrip("rRfFbBuU")[:1]))
        self._fstrings.sort()  # an f-string before those nested in it: `requote` takes the innermost

    def requote(self, edit: TextEdit) -> TextEdit:
        """An edit inside an f-string uses the other quote: before Python 3.12 an f-string's
        expressions cannot contain its own quote character. (An edit that writes no quote needs no
        f-string positions: most do not.)"""
        if "'" not in edit.text and '"' not in edit.text:
            return edit
        if self._fstrings is None:
            self._find_fstrings()
        inside = [quote for start, end, quote in self._fstrings if start < edit.start and edit.end < end]
        if not inside or inside[-1] not in edit.text:
            return edit
        other = "'" if inside[-1] == '"' else '"'
        return edit if other in edit.text else TextEdit(edit.start, edit.end, edit.text.replace(inside[-1], other))

    def apply(self, edits: Iterable[TextEdit]) -> str:
        """The text with non-overlapping edits applied, in one pass. (ast-grep's commit_edits
        measures offsets from the first token, so an edit before it, such as an import at the
        top of a file that starts with a blank line, panicked inside it.)"""
        parts, position = [], 0
        for edit in sorted(edits):
            if not position <= edit.start <= edit.end <= len(self.text):
                raise ValueError(f"overlapping or out-of-range edit {edit}")
            parts += [self.text[position:edit.start], edit.text]
            position = edit.end
        parts.append(self.text[position:])
        return "".join(parts)


# --- common edits ---------------------------------------------------------------------------
_GAP = r"(?:[ \t\f]|\\(?:\r\n|\r|\n))"  # what may stand between the words of a statement
_FROM_MODULE = re.compile(rf"from{_GAP}+(?P<module>\w+(?:{_GAP}*\.{_GAP}*\w+)*){_GAP}+import\b")
_GAPS = re.compile(_GAP)


def module_span(source: Source, statement: ast.ImportFrom) -> Optional[Tuple[int, int]]:
    """Where the module of an absolute `from a.b import c` is written, which Python's ast does
    not say; read from the text when it is plainly there (blanks and backslash continuations
    allowed), else from the concrete syntax tree."""
    start = source.offset(statement.lineno, statement.col_offset)
    match = _FROM_MODULE.match(source.text, start)
    if match and not statement.level and _GAPS.sub("", match.group("module")) == statement.module:
        return match.start("module"), match.end("module")
    node = source.cst(statement, "import_from_statement", within=statement)
    module = node.field("module_name") if node else None
    return (module.range().start.index, module.range().end.index) if module else None


def replace(source: Source, node: ast.AST, text: str) -> TextEdit:
    start, end = source.span(node)
    return TextEdit(start, end, text)


def open_paren(source: Source, call: ast.Call) -> Optional[int]:
    """The offset just after a call's `(`."""
    node = source.cst(call, "call", within=call)
    arguments = node.field("arguments") if node else None
    return arguments.range().start.index + 1 if arguments and arguments.text().startswith("(") else None


def leading_separator(source: Source, call: ast.Call, first: int) -> str:
    """What follows an argument inserted before the first one at offset `first`: `, ` on one
    line; a line break and the first argument's indentation when the call puts its arguments
    on their own lines."""
    paren = open_paren(source, call)
    line, _ = source.position(first)
    indentation = source.text[source.line_start(line):first]
    if paren is None or source.position(paren)[0] == line or indentation.strip():
        return ", "
    return "," + source.newline + indentation


def remove_element(source: Source, node: ast.AST, kind: str, within: Optional[ast.AST] = None
                   ) -> Optional[TextEdit]:
    """Delete one element of a comma-separated list (a keyword argument, a dict pair, an
    import alias) with its comma, keeping comments; a line left empty goes too. For a dict
    pair, `node` is its key. `within`: the call or import statement that holds it, if known."""
    element = source.cst(node, kind, within) if kind != "pair" else source.cst_starting(node, kind)
    return _remove_listed(source, element) if element is not None else None


def remove_argument(source: Source, call: ast.Call, argument: ast.AST) -> Optional[TextEdit]:
    """Delete one argument of a call (positional or keyword) with its comma."""
    node = source.cst(call, "call", within=call)
    arguments = node.field("arguments") if node else None
    start, end = source.span(argument)
    element = next((child for child in arguments.children() if child.range().start.index == start
                    and child.range().end.index == end), None) if arguments else None
    return _remove_listed(source, element) if element is not None else None


def _remove_listed(source: Source, element: SgNode) -> TextEdit:
    start, end = element.range().start.index, element.range().end.index
    after = element.next()
    before = element.prev()
    if after is not None and after.kind() == ",":
        end = after.range().end.index
        while end < len(source.text) and source.text[end] in " \t":
            end += 1
    elif before is not None and before.kind() == ",":
        start = before.range().start.index
    if end == len(source.text) or source.text[end] in "\r\n":  # the line now ends where the element was:
        while start > 0 and source.text[start - 1] in " \t":  # no blanks left at its end
            start -= 1
    edit = _whole_lines(source, TextEdit(start, end, ""))
    if edit.start == source.line_start(source.position(edit.start)[0]) and edit.start < element.range().start.index:
        # an element on lines of its own takes the comment lines right above it, which were about it
        indentation = source.text[edit.start:element.range().start.index]
        start = edit.start
        while start > 0 and not indentation.strip():
            above = source.text.rfind("\n", 0, start - 1) + 1
            if not source.text[above:start].startswith(indentation + "#"):
                break
            start = above
        edit = TextEdit(start, edit.end, "")
    return edit


def _whole_lines(source: Source, edit: TextEdit) -> TextEdit:
    """Widen a deletion to whole lines when it leaves only blanks on them, or only the comment
    that ended the deleted code's line (it was about that code; left, it would be stranded)."""
    line_start = source.text.rfind("\n", 0, edit.start) + 1
    newline = _NEWLINE.search(source.text, edit.end)
    line_end = newline.end() if newline else len(source.text)
    before = source.text[line_start:edit.start]
    after = source.text[edit.end:newline.start() if newline else line_end]
    if not before.strip() and (not after.strip() or after.lstrip().startswith("#")):
        return TextEdit(line_start, line_end, "")
    return edit


_TELLING = ("print", "warn", "warning", "info", "debug", "error", "exception")


def only_tells(statement: ast.stmt) -> bool:
    """`print(...)`, `warnings.warn(...)`, `logger.warning(...)`: a statement that only says
    something (in the handler of an import, that the module is missing)."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    name = dotted_name(call.func) if isinstance(call, ast.Call) else None
    return bool(name) and name.rsplit(".", 1)[-1] in _TELLING


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def raising_guard(statement: ast.stmt) -> bool:
    """`try: from torch.cuda.amp import autocast` / `except ImportError: raise ...`: a try of
    imports alone whose every handler catches an import error and only raises or says so
    (`warnings.warn("apex is unavailable")`). An import there
    whose uses were rewritten can go (with the try, once it guards nothing): on every release the
    fix targets the import succeeds, so no other branch ever ran."""
    if not isinstance(statement, ast.Try) or statement.orelse or statement.finalbody:
        return False
    if not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in statement.body):
        return False
    for handler in statement.handlers:
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if not all(isinstance(c, ast.Name) and c.id in _IMPORT_ERRORS for c in caught):
            return False
        if not all(isinstance(s, ast.Raise) or only_tells(s) for s in handler.body):
            return False
    return bool(statement.handlers)


def remove_statement(source: Source, statement: ast.stmt) -> TextEdit:
    """Delete a statement's lines with the more deeply indented comment lines after it; the
    blank lines around it become as many as its more generous side had (at the top of the
    file: none)."""
    start, end = source.span(statement)
    edit = _whole_lines(source, TextEdit(start, end, ""))
    indentation = source.text[edit.start:start]
    whole = not indentation.strip() and (edit.end == len(source.text) or source.text[edit.end - 1] in "\r\n")
    if whole:  # comments more deeply indented after it were about it
        deeper = re.compile(re.escape(indentation) + r"[ \t]+#[^\r\n]*(?:\r\n|\r|\n|$)")
        while edit.end < len(source.text) and (match := deeper.match(source.text, edit.end)):
            edit = TextEdit(edit.start, match.end(), "")
    if whole or edit.start == 0:
        ends = [edit.end]
        while (match := _BLANK_LINE.match(source.text, ends[-1])) and match.end() > ends[-1]:
            ends.append(match.end())
        blanks, above = _above(source.text, edit.start)
        # the first statement of a block (deeper than the line above it) takes the blank lines after it
        first = edit.start == 0 or bool(above) and len(indentation) > len(above) - len(above.lstrip(" \t"))
        drop = len(ends) - 1 if first else min(len(ends) - 1, blanks)
        edit = TextEdit(edit.start, ends[drop], "")
    return edit


def _above(text: str, offset: int) -> Tuple[int, str]:
    """(how many blank lines stand right above the line at `offset`, the non-blank line above
    them: '' at the top of the text)."""
    count = 0
    while offset > 0:
        start = text.rfind("\n", 0, offset - 1) + 1
        line = text[start:offset]
        if line.strip():
            return count, line
        count, offset = count + 1, start
    return count, ""


def string_like(source: Source, node: ast.AST, value: str) -> str:
    """`value` as a string literal in the quotes the replaced literal used."""
    quote = "'" if source.segment(node).lstrip("rbuRBU").startswith("'") else '"'
    return f"{quote}{value}{quote}"


def _isort_key(statement: ast.stmt) -> Tuple[int, bool, str]:
    """Where isort's default profile puts an import: its section (future, standard library,
    third party, local), then `import x` before `from x import y`, then the module name."""
    if isinstance(statement, ast.ImportFrom):
        module = statement.module or ""
        section = 3 if statement.level else 0 if module == "__future__" else None
    else:
        module, section = statement.names[0].name, None
    if section is None:
        section = 1 if module.split(".")[0] in sys.stdlib_module_names else 2
    return section, isinstance(statement, ast.ImportFrom), module.lower()


def sorted_import_position(source: Source, tree: ast.Module, line: str) -> Optional[Tuple[int, str]]:
    """Where a new import line goes, and its text with the blank lines it needs, when the
    imports at the top of the module are in isort's order; None when they are not."""
    body = tree.body[1:] if tree.body and _is_docstring(tree.body[0]) else tree.body
    header = []
    for statement in body:
        if not isinstance(statement, (ast.Import, ast.ImportFrom)):
            break
        header.append(statement)
    keys = [_isort_key(s) for s in header]
    if not header or keys != sorted(keys) or any(isinstance(s, ast.Import) and len(s.names) > 1 for s in header):
        return None
    new = _isort_key(ast.parse(line).body[0])
    newline = source.newline
    later = next((s for s, k in zip(header, keys) if k > new), None)
    if later is not None:
        at = source.line_start(later.lineno)
        return at, line + newline + ("" if _isort_key(later)[0] == new[0] else newline)
    last = header[-1]
    at = source.line_start(last.end_lineno + 1) if last.end_lineno < len(source.lines) else len(source.text)
    text = line + newline if _isort_key(last)[0] == new[0] else newline + line + newline
    if at == len(source.text) and not source.text.endswith(("\n", "\r")):
        text = newline + text
    return at, text


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def import_position(source: Source, tree: ast.Module, before: int) -> int:
    """Where a new top-level import goes: after the last top-level import that ends before
    offset `before` (module code runs in order), else after the docstring, else after
    leading comments (shebang, encoding cookie)."""
    imports = [
        s for s in tree.body
        if isinstance(s, (ast.Import, ast.ImportFrom)) and source.offset(s.end_lineno, s.end_col_offset) <= before
    ]
    body = tree.body
    if imports:
        anchor: Optional[ast.stmt] = imports[-1]
    elif body and _is_docstring(body[0]):
        anchor = body[0]
    else:
        anchor = None
    count = len(source.lines)
    if anchor is not None:
        return source.line_start(anchor.end_lineno + 1) if anchor.end_lineno < count else len(source.text)
    lineno = 1
    while lineno < count and source.line(lineno).lstrip().startswith("#"):
        lineno += 1
    return source.line_start(lineno)


# --- options: keyword arguments, dict keys, argument-vector flags -----------------------------
def drop_option(source: Source, node: ast.AST, value_node: Optional[ast.AST], call: Optional[ast.Call] = None
                ) -> Optional[TextEdit]:
    """Remove a keyword argument (of `call`, if known), or a dict pair given its key; flags are
    left alone."""
    if isinstance(node, ast.keyword):
        return remove_element(source, node, "keyword_argument", within=call)
    if value_node is not None and isinstance(node, ast.Constant):
        return remove_element(source, node, "pair")
    return None


def rename_option(source: Source, node: ast.AST, old: str, new: str) -> Optional[TextEdit]:
    """`old=` -> `new=`, `{"old": ...}` -> `{"new": ...}`, `"--old"` -> `"--new"`."""
    if isinstance(node, ast.keyword):
        start = source.span(node)[0]
        return TextEdit(start, start + len(old), new)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return replace(source, node, string_like(source, node, node.value.replace(old, new, 1)))
    return None


def replace_value(source: Source, node: ast.AST, value_node: Optional[ast.AST], value: str) -> Optional[TextEdit]:
    """Replace the literal value of a keyword or dict key, or of a `"--flag=value"`."""
    if isinstance(value_node, ast.Constant):
        text = string_like(source, value_node, value) if isinstance(value_node.value, str) else f'"{value}"'
        return replace(source, value_node, text)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and "=" in node.value:
        flag = node.value.split("=", 1)[0]
        return replace(source, node, string_like(source, node, f"{flag}={value}"))
    return None


def rename_attribute(source: Source, node: ast.Attribute, new: str) -> TextEdit:
    end = source.span(node)[1]
    return TextEdit(end - len(node.attr), end, new)
