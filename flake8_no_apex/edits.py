"""The vocabulary of fixes: character-offset edits, plans, and where things are in a file.

Fixers compute minimal edits from the resolver's nodes (rename a callee, insert an argument,
drop a keyword with its comma, rewrite an import); Python's tokenizer, run on the call, import
or dict concerned, supplies what the ast leaves out (commas, parentheses, comments). Edits are
character offsets, applied in one pass.
"""
from __future__ import annotations

import ast
import bisect
import re
import sys
import tokenize
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Tuple

from .resolve import dotted_name, walk

if TYPE_CHECKING:
    from .table import Finding, Site
    from dataclasses import dataclass, field
    from typing import NamedTuple
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import NamedTuple, dataclass, field

_NEWLINE = re.compile(r"\r\n|\r|\n")
_BLANK_LINE = re.compile(r"[ \t]*(?:\r\n|\r|\n)")
_FSTRING_PREFIX = re.compile(r"(?<![\w])[rRbBuU]?[fFtT][rR]?[\"']")  # f"..", rf'..', Fr"..", t-strings


class TextEdit(NamedTuple):
    """Replace the text from `start` to `end` (character offsets into the source) by `text`. (It
    lives here, not with the table's vocabulary that re-exports it, so that reading a module's
    text imports none of the table.)"""

    start: int
    end: int
    text: str


class Token(NamedTuple):
    kind: int  # tokenize's type: OP, NAME, COMMENT, ...
    text: str
    start: int  # character offsets into the module
    end: int


class Listed(NamedTuple):
    """An element of a comma-separated list: where it is, and the commas right beside it (only
    blanks, line breaks and backslash continuations between; past a comment, a comma is not
    beside it)."""

    start: int
    end: int
    comma_before: Optional[int]  # where the comma before it starts
    comma_after: Optional[int]  # where the comma after it ends


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a text's lines, with their breaks
_NOT_TOKENS = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


class Tokens:
    """A node's tokens (comments included, line breaks left out) with what finding an element
    needs at once, so that a call or dict with thousands of fixes is not read once per fix:
    each token's index by where it starts, and the bracket open around each."""

    def __init__(self, tokens: List[Token]):
        self.tokens = tokens
        self.starts = [token.start for token in tokens]
        self.index = {token.start: i for i, token in reversed(list(enumerate(tokens)))}
        self.openers: List[Optional[int]] = []
        open_brackets: List[int] = []
        for i, token in enumerate(tokens):
            self.openers.append(open_brackets[-1] if open_brackets else None)
            if _operator(token, "([{"):
                open_brackets.append(i)
            elif _operator(token, ")]}") and open_brackets:
                open_brackets.pop()

    @classmethod
    def of(cls, text: str, offset: int) -> Optional["Tokens"]:
        """The tokens of a node's text (which tokenizes alone: its brackets close inside it), at
        `offset` in the module; None where Python's tokenizer refuses it."""
        lines = _LINES.findall(text)
        starts = list(accumulate(map(len, lines[:-1]), initial=offset))
        try:
            found = [t for t in tokenize.generate_tokens(iter(lines).__next__) if t.type not in _NOT_TOKENS]
        except (tokenize.TokenError, SyntaxError):
            return None
        if any(not 1 <= line <= len(lines) for t in found for line in (t.start[0], t.end[0])):
            return None  # a line the tokenizer counted differently (a form feed, a lone carriage return)
        return cls([Token(t.type, t.string, starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
                    for t in found])


def _operator(token: Token, texts: str) -> bool:
    """Whether the token is one of these one-character operators (not, say, an f-string's text)."""
    return token.kind == tokenize.OP and token.text in texts and len(token.text) == 1


def _starts_element(tokens: List[Token], index: int) -> bool:
    """Whether token `index` starts an element of its list: what stands before it (comments
    aside) is the list's bracket, a comma or an import's `import`, not `*` or `**`."""
    before = index - 1
    while before >= 0 and tokens[before].kind == tokenize.COMMENT:
        before -= 1
    token = tokens[before] if before >= 0 else None
    return token is not None and (_operator(token, "([{,") or token.kind == tokenize.NAME and token.text == "import")


@dataclass
class Source:
    """A file's text, with ast positions turned into character offsets, and the tokens of
    the calls, imports and dicts fixes edit."""

    text: str
    _token_lists: Dict[Tuple[int, int], Optional[Tokens]] = field(default_factory=dict, init=False, repr=False)
    _fstrings: Optional[List[Tuple[int, int, str]]] = field(default=None, init=False, repr=False)
    _joined_strings: Optional[Callable[[], List[ast.JoinedStr]]] = field(default=None, init=False, repr=False)

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

    def lines_span(self, first: int, last: int) -> Tuple[int, int]:
        """Character offsets of where line `first` starts and line `last` ends (its break included)."""
        starts = self._starts
        return starts[first - 1], starts[last] if last < len(starts) else len(self.text)

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

    # --- the tokens of a call, an import or a dict -----------------------------------------
    def _tokens(self, within: ast.AST) -> Optional[Tokens]:
        """The tokens of `within`'s text alone (a call, an import statement or a dict literal),
        at the module's offsets, comments included and line breaks left out; None where its text
        does not tokenize alone. A fix then reads a line or two, not the whole module."""
        start, end = self.span(within)
        if (start, end) not in self._token_lists:
            self._token_lists[start, end] = Tokens.of(self.text[start:end], start)
        return self._token_lists[start, end]

    def element(self, node: ast.AST, within: ast.AST, whole: bool = True) -> Optional[Listed]:
        """`node` as an element of the comma-separated list that directly holds it inside `within`
        (a call's arguments, an import's names, a dict's pairs): its span and the commas beside
        it. `whole`: the element must be exactly the node (not `(x)` around `x`); else it is the
        one that starts where the node does (a dict's pair, from its key)."""
        listed = self._tokens(within)
        start, end = self.span(node)
        first = listed.index.get(start) if listed is not None else None
        if first is None or not self._lists(within, listed, listed.openers[first]):
            return None
        tokens = listed.tokens
        if not _starts_element(tokens, first):
            return None
        last, inside = first, []  # the brackets, and lambdas' parameters, open in the element
        for i in range(first, len(tokens)):
            token = tokens[i]
            if not inside and _operator(token, ",)]}"):
                break
            if _operator(token, ")]}") or _operator(token, ":") and inside and inside[-1] == "lambda":
                inside.pop()
            elif _operator(token, "([{") or token.kind == tokenize.NAME and token.text == "lambda":
                inside.append(token.text)
            if token.kind != tokenize.COMMENT:
                last = i
        if whole and tokens[last].end != end:
            return None
        before = tokens[first - 1] if first else None
        after = tokens[last + 1] if last + 1 < len(tokens) else None
        return Listed(start, tokens[last].end, before.start if before is not None and _operator(before, ",") else None,
                      after.end if after is not None and _operator(after, ",") else None)

    def _lists(self, within: ast.AST, listed: Tokens, opener: Optional[int]) -> bool:
        """Whether the bracket `opener` (None: none) opens the list of `within` itself: a call's
        arguments (not a parenthesized argument's inside), a dict's pairs, an import's names."""
        if isinstance(within, ast.Call):
            return opener is not None and listed.tokens[opener].start == self.opening_parenthesis(within)
        if isinstance(within, ast.Dict):
            return opener == 0
        return opener is None or _operator(listed.tokens[opener], "(")  # `from m import (a, b)`

    def opening_parenthesis(self, call: ast.Call) -> Optional[int]:
        """Where a call's `(` is: the first after its callee (only the parentheses closing
        around the callee and blanks stand between them)."""
        listed = self._tokens(call)
        if listed is None:
            return None
        after_callee = bisect.bisect_left(listed.starts, self.span(call.func)[1])
        tokens = listed.tokens
        return next((tokens[i].start for i in range(after_callee, len(tokens)) if _operator(tokens[i], "(")), None)

    def know_fstrings(self, joined_strings: Callable[[], List[ast.JoinedStr]]) -> None:
        """Where the module's f-strings are (the resolver's record), so that an edit that first
        needs them walks no tree (or only the parts the resolver did not walk)."""
        self._joined_strings = joined_strings

    def _find_fstrings(self) -> None:
        self._fstrings = []
        if not _FSTRING_PREFIX.search(self.text):  # no f-string can start anywhere: no walk
            return
        if self._joined_strings is None:
            joined = [node for node in walk(ast.parse(self.text)) if isinstance(node, ast.JoinedStr)]
        else:
            joined = self._joined_strings()
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
        """The text with non-overlapping edits applied, in one pass."""
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
    allowed), else from the statement's tokens."""
    start = source.offset(statement.lineno, statement.col_offset)
    match = _FROM_MODULE.match(source.text, start)
    if match and not statement.level and _GAPS.sub("", match.group("module")) == statement.module:
        return match.start("module"), match.end("module")
    return module_tokens_span(source, statement)


def module_tokens_span(source: Source, statement: ast.ImportFrom) -> Optional[Tuple[int, int]]:
    """The span of what stands between `from` and `import` (a relative import's dots too)."""
    listed = source._tokens(statement)
    tokens = listed.tokens if listed is not None else []
    words = next((i for i, token in enumerate(tokens) if token.kind == tokenize.NAME and token.text == "import"), 0)
    return (tokens[1].start, tokens[words - 1].end) if words > 1 else None


def replace(source: Source, node: ast.AST, text: str) -> TextEdit:
    start, end = source.span(node)
    return TextEdit(start, end, text)


def open_paren(source: Source, call: ast.Call) -> Optional[int]:
    """The offset just after a call's `(`."""
    paren = source.opening_parenthesis(call)
    return paren + 1 if paren is not None else None


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


def remove_element(source: Source, node: ast.AST, within: ast.AST) -> Optional[TextEdit]:
    """Delete one element of a comma-separated list (a call's argument, positional or keyword,
    or an import's alias) with its comma, keeping comments; a line left empty goes too.
    `within`: the call or import statement whose list holds it."""
    element = source.element(node, within)
    return _remove_listed(source, element) if element is not None else None


def remove_pair(source: Source, key: ast.AST, holder: ast.Dict) -> Optional[TextEdit]:
    """Delete a dict literal's pair, given its key, as `remove_element` deletes an element."""
    element = source.element(key, holder, whole=False)
    return _remove_listed(source, element) if element is not None else None


def _remove_listed(source: Source, element: Listed) -> TextEdit:
    start, end = element.start, element.end
    if element.comma_after is not None:
        end = element.comma_after
        while end < len(source.text) and source.text[end] in " \t":
            end += 1
    elif element.comma_before is not None:
        start = element.comma_before
    if end == len(source.text) or source.text[end] in "\r\n":  # the line now ends where the element was:
        while start > 0 and source.text[start - 1] in " \t":  # no blanks left at its end
            start -= 1
    edit = _whole_lines(source, TextEdit(start, end, ""))
    if edit.start == source.line_start(source.position(edit.start)[0]) and edit.start < element.start:
        # an element on lines of its own takes the comment lines right above it, which were about it
        indentation = source.text[edit.start:element.start]
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
def drop_option(source: Source, site: "Site") -> Optional[TextEdit]:
    """Remove a matched keyword argument of its call, or a dict literal's pair given its key;
    flags and keys assigned one by one (`args["key"] = value`) are left alone."""
    if isinstance(site.node, ast.keyword) and site.call is not None:
        return remove_element(source, site.node, site.call)
    if site.holder is not None:
        return remove_pair(source, site.node, site.holder)
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
