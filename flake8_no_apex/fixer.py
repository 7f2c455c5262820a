"""Fix a module: the plugin's own findings, each rule's fixer, applied to a fixpoint.

Every round re-analyses the current text, asks each finding's rule for a plan, applies the
plans that do not overlap (edits apply in one pass over the text, so the others wait for the
next round), adds the imports the new code names and removes the imports the fixes left
unused. The result of every round must parse, or the module is left as it was.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Container, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .checker import Checker, RuleIndex
from .edits import (Source, import_position, raising_guard, remove_element, remove_statement, replace,
                    sorted_import_position)
from .noqa import noqa_pattern
from .reparse import reparsed
from .resolve import dotted_name, walk
from .spellings import spell
from .table import Finding, Floors, Grade, Plan, TextEdit, plan

if TYPE_CHECKING:
    from .project import ProjectImports
    from dataclasses import dataclass, field
else:  # the same classes, each made from one compiled text (records.py says why)
    from .records import dataclass, field

_MAX_ROUNDS = 10


class FixError(Exception):
    """The fixed text did not parse: the module is left untouched."""


@dataclass
class FixContext:
    """What a rule's fixer may use, for one round over one module."""

    source: Source
    tree: ast.Module
    floors: Floors
    spelled: Dict[str, str]
    noqa: Callable[[int, str], bool]  # (line, code) -> suppressed
    bindings: Dict[int, object]  # id of an import alias -> the resolver's Binding
    calls: Dict[int, ast.Call]  # id of a callee -> its call
    # every name the module binds, in any scope (the resolver's; ask `binds`, or `complete` first)
    _bound: Set[str]
    holder_strings: List[str]  # the strings of annotations and `__all__` values (the resolver's)
    hints: Set[int]  # ids of the references read in annotations (the resolver's)
    # the resolver's `Checker.complete`: the records above (and the uses of imports) are of the
    # function bodies it visited; those that could hold no finding are visited when asked for
    _complete: Callable[[Optional[Iterable[str]]], bool]
    findings: List[Finding] = field(default_factory=list)  # the module's selected findings
    memo: Dict[object, object] = field(default_factory=dict)  # module-wide analyses, once per round
    explanations: Dict[str, int] = field(default_factory=dict)  # why a fixer left code: text -> line
    # whether another module of the run imports a name from this one (its signature must stay)
    exported: Callable[[str], bool] = field(default=lambda name: False)
    path: Optional[Path] = None  # the module's, when it is one of a run's
    project: Optional["ProjectImports"] = None  # the run's other modules, for plans across them

    def explain(self, line: int, text: str) -> None:
        """Say why a fix that could apply does not (shown by `fix` next to the findings)."""
        self.explanations.setdefault(text, line)

    def complete(self, names: Optional[Iterable[str]] = None) -> None:
        """Have the resolver's records cover the whole module (for `names`: as far as they are
        concerned): before reading the uses of an import, or the names bound, of a name."""
        if self._complete(names):
            self.__dict__.pop("_in_strings", None)

    @property
    def bound(self) -> Set[str]:
        """Every name the module binds, in any scope."""
        self.complete()
        return self._bound

    @property
    def named_in_strings(self) -> Set[str]:
        """Names used through strings: `__all__` entries, string annotations (on demand)."""
        self.complete()
        return self._in_strings

    def in_strings(self, name: str) -> bool:
        """Whether a string annotation or `__all__` names `name`."""
        self.complete((name,))
        return name in self._in_strings

    @cached_property
    def _in_strings(self) -> Set[str]:
        return _named_in_strings(self.holder_strings)

    @cached_property
    def decorators(self) -> Set[int]:
        """ids of the module's decorator expressions (on demand: a walk of the whole tree)."""
        return {id(d) for n in walk(self.tree) for d in getattr(n, "decorator_list", ())}

    @cached_property
    def uncalled(self) -> Set[Tuple[str, str]]:
        """(code, name) of deprecated names the module uses as values, not calls nor type hints:
        `isinstance(s, torch.cuda.amp.GradScaler)` is False for a `torch.amp.GradScaler` built by
        a fixed call."""
        return {
            (f.code, f.site.name.rsplit(".", 1)[-1]) for f in self.findings
            if not isinstance(f.site.node, (ast.alias, ast.ImportFrom)) and id(f.site.node) not in self.decorators
            and (f.site.call is None or f.site.call.func is not f.site.node) and not self.is_hint(f.site.node)
        }

    def is_hint(self, node: ast.AST) -> bool:
        """Whether a reference is (part of) an annotation (the resolver marks what it reads there)."""
        return id(node) in self.hints

    def binds(self, name: str) -> bool:
        """Whether the module binds `name` anywhere."""
        self.complete((name,))
        return name in self._bound

    def binding(self, alias: ast.alias):
        return self.bindings.get(id(alias))


@dataclass
class FixResult:
    text: str
    fixed: List[Finding] = field(default_factory=list)  # findings a fix removed
    remaining: List[Finding] = field(default_factory=list)  # findings that need a person
    unsafe: int = 0  # of the remaining, those an unsafe fix would handle
    shims: int = 0  # of the remaining, those left as they are in a compatibility shim
    notes: List[Tuple[int, str]] = field(default_factory=list)  # (line, text): what fixes did, or why not
    rounds: List[List[TextEdit]] = field(default_factory=list)  # the edits of each round, as applied
    # the remaining findings where they are in the file as it was read, when `rounds` cannot say
    # (a notebook, whose text is the JSON around the fixed cells)
    on_disk: Optional[List[Finding]] = None
    problems: List[str] = field(default_factory=list)  # as Analysis.problems: parts left unread

    def original_offset(self, offset: int, rounds: Optional[int] = None) -> int:
        """Where an offset of the fixed text (of the text before round `rounds`) was in the text
        before the fixes (the start of an edit, for a place inside text an edit wrote)."""
        for edits in reversed(self.rounds[:rounds]):
            shift = 0
            for edit in edits:
                start = edit.start + shift
                if offset < start:
                    break
                if offset < start + len(edit.text):
                    offset = edit.start + shift
                    break
                shift += len(edit.text) - (edit.end - edit.start)
            offset -= shift
        return offset


_LINE_MENTION = re.compile(r"\b(lines? )(\d+(?:, \d+)*)")


def _mentioned_lines(text: str, moved: Callable[[int], int]) -> str:
    """A note with the lines it mentions ("line 12", "lines 5, 6") moved as `moved` says; a
    mention of another file's line is written with a no-break space ("line\u00a012"), left as it
    is and given its plain space back."""
    return _LINE_MENTION.sub(lambda m: m.group(1) + ", ".join(str(moved(int(n))) for n in m.group(2).split(", ")),
                             text).replace("\u00a0", " ")


def statement_lines(text: str) -> Dict[int, Tuple[int, int]]:
    """line -> the (first, last) lines flake8 reads as one for `# noqa`: those between two line
    breaks of the tokenizer, so a multi-line string or a backslash continuation (not the lines
    of a parenthesized call, each ending in a line break of its own). Empty when the text does
    not tokenize (flake8 then looks at the physical line alone)."""
    import tokenize  # its first use compiles its patterns: only where a noqa line needs it

    lines: Dict[int, Tuple[int, int]] = {}
    first, last = None, -1
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first = token.start[0] if first is None else min(first, token.start[0])
            last = max(last, token.end[0])
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                lines.update(dict.fromkeys(range(first, last + 1), (first, last)))
                first, last = None, -1
    except (tokenize.TokenError, SyntaxError):
        return {}
    return lines


# flake8.utils.parse_comma_separated_list's separators (flake8.utils loads logging and platform)
_CODE_SEPARATORS = re.compile(r"[,\s]+")
_LONE_CR = re.compile(r"\r(?!\n)")  # a line break for Python, not for `statement_lines`' reader


def _lines_read_alone(source: Source, noqa: Set[int], literals: Sequence[Tuple[int, int]]) -> bool:
    """Whether flake8 reads each line with a noqa comment alone. Lines are read together only
    across a line break inside a string (a literal written over several lines) or after a
    backslash; a noqa line touching neither is read alone, and then so is any line it could
    suppress (a finding's line read with a noqa line is read with that line's lines)."""
    if any(first <= line <= last for first, last in literals for line in noqa):
        return False
    return not any(source.line(n).rstrip("\r\n").endswith("\\") for line in noqa for n in (line - 1, line) if n >= 1)


def noqa_lines(source: Source, literals: Optional[Sequence[Tuple[int, int]]] = None) -> Callable[[int, str], bool]:
    """flake8's own rule: a bare `# noqa`, or one listing the code or a prefix of it, on the line
    or on the lines flake8 reads with it (`statement_lines`). Given the module's multi-line
    literals (the resolver's `multiline_literals`), the module is tokenized only when a noqa
    line may be read with others."""
    if "noqa" not in source.text.lower():
        return _never
    regexp = noqa_pattern()
    ranges: Optional[Dict[int, Tuple[int, int]]] = None
    if literals is not None and not _LONE_CR.search(source.text):  # the tokenizer's lines are Python's
        noqa = {source.position(match.start())[0] for match in regexp.finditer(source.text)}
        if _lines_read_alone(source, noqa, literals):
            ranges = {}

    def suppressed(line: int, code: str) -> bool:
        nonlocal ranges
        if ranges is None:
            ranges = statement_lines(source.text)
        first, last = ranges.get(line, (line, line))
        match = regexp.search("".join(source.line(n) for n in range(first, last + 1)))
        if match is None:
            return False
        codes = match.groupdict()["codes"]
        return codes is None or code.startswith(tuple(filter(None, _CODE_SEPARATORS.split(codes))))

    return suppressed


def _plan(ctx: FixContext, finding: Finding) -> Optional[Plan]:
    """The rule's fix for a finding, unless it is part of a compatibility shim: the name it goes
    through has a fallback binding (unless the rule's fixer removes such probes itself), or it
    is the old-release half of an if/else."""
    if finding.rule.fixer is None or is_shim(finding):
        return None
    return finding.rule.fixer(ctx, finding)


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    if a == b:
        return False
    return a.start < b.end and b.start < a.end or a.start == b.start


def _choose(plans: List[Tuple[Plan, List[Finding]]]) -> Tuple[List[TextEdit], List[Tuple[Plan, List[Finding]]]]:
    """The plans whose edits fit together; the others wait for the next round. The accepted
    edits are kept sorted, so each new one is compared with its neighbours only."""
    accepted: List[TextEdit] = []
    chosen = []
    for candidate in sorted(plans, key=lambda p: p[0].edits):
        edits = [e for e in candidate[0].edits if not _accepted(accepted, e)]
        if any(_collides(accepted, edit) for edit in edits):
            continue
        for edit in edits:
            bisect.insort(accepted, edit)
        chosen.append(candidate)
    return accepted, chosen


def _accepted(accepted: List[TextEdit], edit: TextEdit) -> bool:
    at = bisect.bisect_left(accepted, edit)
    return at < len(accepted) and accepted[at] == edit


def _collides(accepted: List[TextEdit], edit: TextEdit) -> bool:
    """Whether an edit overlaps an accepted one (sorted, non-overlapping: only neighbours can)."""
    at = bisect.bisect_left(accepted, edit)
    return any(_overlaps(edit, accepted[i]) for i in (at - 1, at) if 0 <= i < len(accepted))


def _in_try(tree: ast.Module) -> Dict[int, ast.stmt]:
    """Statements inside a `try:` body -> that try: removing an import there changes which
    branch runs, unless the try only guards imports with handlers that only raise (`raising_guard`)."""
    inside: Dict[int, ast.stmt] = {}
    for node in walk(tree):
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            inside.update((id(n), node) for stmt in node.body for n in walk(stmt))
    return inside


def _import_keys(checker: Checker, source: Source, origin: Callable[[int], int]
                 ) -> List[Tuple[int, ast.alias, ast.stmt, object]]:
    """Each imported name with a key that survives the edits of earlier rounds: where it stood
    in the text before the fixes (`origin` maps an offset of the current text back there; an
    import a fix wrote maps to the start of its edit, never an imported name's place)."""
    return [(origin(source.span(alias)[0]), alias, statement, binding)
            for alias, statement, binding in checker.imports]


def used_imports(checker: Checker, source: Source) -> Set[int]:
    """The imports a module reads (by their place): only these may go once fixes rewrote their last use."""
    checker.complete([alias.asname or alias.name.split(".")[0] for alias, _, binding in checker.imports
                      if not binding.uses])
    return {key for key, _, _, binding in _import_keys(checker, source, _same) if binding.uses}


def _same(offset: int) -> int:
    return offset


class _UsedBefore:
    """`used_imports` of the first round, worked out when first asked: a module whose fixes
    change nothing never needs it. It reads the first round's tree, which the next round's is
    spliced from, so `settle` must run before that splice."""

    def __init__(self, checker: Checker, source: Source) -> None:
        self._round: Optional[Tuple[Checker, Source]] = (checker, source)
        self._keys: Set[int] = set()

    def settle(self) -> None:
        if self._round is not None:
            self._keys, self._round = used_imports(*self._round), None

    def __contains__(self, key: object) -> bool:
        self.settle()
        return key in self._keys


# a name a string may use: a word not after a dot (`"torch.cuda.amp.GradScaler"` uses `torch`, not a
# bare `GradScaler` some import binds), nor inside another word
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")


def _named_in_strings(strings: List[str]) -> Set[str]:
    """The words of the strings of annotations and `__all__` values: names a module uses
    through strings."""
    return {word for string in strings for word in _WORD.findall(string)}


def _dotted_references(tree: ast.Module) -> Set[str]:
    """Every `a.b.c` attribute chain the module reads, as text."""
    return {name for node in walk(tree) if isinstance(node, ast.Attribute) and (name := dotted_name(node))}


def _blocks(tree: ast.Module) -> Dict[int, List[ast.stmt]]:
    """id of each statement -> the block (body, else, finally) it is in."""
    blocks: Dict[int, List[ast.stmt]] = {}
    for node in walk(tree):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if isinstance(block, list):
                blocks.update((id(statement), block) for statement in block if isinstance(statement, ast.stmt))
    return blocks


def _duplicated_imports(ctx: FixContext, checker: Checker, original: Set[int], origin: Callable[[int], int]
                        ) -> List[Plan]:
    """`from m import A, A`, where the fixes made the second A (a rename to a name the import
    already has, or a name added beside one renamed to it in the same round): the later ones go,
    as the binding is the same. Duplicates the module had before the fixes stay."""
    plans = []
    for statement in {id(s): s for _, s, _ in checker.imports if isinstance(s, ast.ImportFrom)}.values():
        seen: Dict[Tuple[str, Optional[str]], ast.alias] = {}
        for alias in statement.names:
            key = (alias.name, alias.asname)
            if key not in seen:
                seen[key] = alias
                continue
            made = [a for a in (seen[key], alias) if origin(ctx.source.span(a)[0]) not in original]
            if made:
                edit = remove_element(ctx.source, alias, statement)
                if edit is not None:
                    plans.append(plan([edit], Grade.SAFE))
    return plans


def _unused_imports(ctx: FixContext, checker: Checker, released: Set[str], used_before: Container[int],
                    exported: Callable[[str], bool], origin: Callable[[int], int]) -> List[Plan]:
    """Remove the imports whose every use a fix rewrote. One that was unused to begin with may
    be a re-export; one that another module of the run imports from this one (`exported`) is
    one; one inside `try:` is a probe; one named in `__all__` or a string annotation is still
    used; `import a.b` also loads `a.b`, so it stays while code still reaches `a.b` through
    another import of `a`: all of these stay. A block whose every statement goes keeps a `pass`."""
    if not released:  # no fix rewrote a use: no import can have lost its last one
        return []
    guarded: Optional[Dict[int, ast.stmt]] = None
    reached = None
    removable = {}
    guards: Dict[int, ast.stmt] = {}  # raising guards whose imports may go
    for key, alias, statement, binding in _import_keys(checker, ctx.source, origin):
        name = alias.asname or alias.name.split(".")[0]
        if not binding.uses and name in released:
            ctx.complete((name,))  # a body skipped by the walk may read it
        if binding.uses or name not in released or key not in used_before or ctx.in_strings(name):
            continue
        if exported(name):
            ctx.explain(alias.lineno, f"the import of {name} stays: another module of this run imports it from here")
            continue
        guarded = _in_try(ctx.tree) if guarded is None else guarded
        if id(statement) in guarded:
            guard = guarded[id(statement)]
            if not raising_guard(guard):
                continue
            guards[id(guard)] = guard
        if isinstance(statement, ast.Import) and "." in alias.name and not alias.asname:
            reached = _dotted_references(ctx.tree) if reached is None else reached
            if any(chain == alias.name or chain.startswith(alias.name + ".") for chain in reached):
                continue
        removable[id(alias)] = (alias, statement)
    whole = {id(s): s for _, s in removable.values() if all(id(other) in removable for other in s.names)}
    for guard in guards.values():  # a raising guard that would guard nothing goes as a whole
        if all(id(statement) in whole for statement in guard.body):
            for statement in guard.body:
                for alias in statement.names:
                    del removable[id(alias)]
                del whole[id(statement)]
            whole[id(guard)] = guard
            removable[id(guard)] = (None, guard)
    blocks = _blocks(ctx.tree) if whole else {}  # a walk of the whole module: only for whole statements
    kept_as_pass = set()
    for statement in whole.values():
        block = blocks.get(id(statement), [])
        if block and all(id(other) in whole for other in block) and not kept_as_pass & {id(s) for s in block}:
            kept_as_pass.add(id(statement))
    plans = []
    for alias, statement in removable.values():
        if id(statement) in kept_as_pass:
            edit: Optional[TextEdit] = replace(ctx.source, statement, "pass")
        elif id(statement) in whole:
            edit = remove_statement(ctx.source, statement)
        else:
            edit = remove_element(ctx.source, alias, statement)
        if edit is not None:
            plans.append(plan([edit], Grade.SAFE))
    return plans


def _with_imports(ctx: FixContext, checker: Checker, edits: List[TextEdit], needed: Set[str]) -> List[TextEdit]:
    """Bind what the fixes name, which no import binds where they use it (the fixers asked
    the resolver): `torch` as `import torch`, and `module:Name` merged into a top-level
    `from module import ...` if there is one, else as a new import."""
    if not needed:
        return edits
    position = import_position(ctx.source, ctx.tree, before=edits[0].start)
    new_lines = []
    for need in sorted(needed):
        module, _, name = need.partition(":")
        if not name:
            new_lines.append(f"import {module}")
            continue
        if any(isinstance(s, ast.ImportFrom) and s.module == module and any(a.name == name and a.asname is None
               for a in s.names) for _, s, _ in checker.imports):
            continue
        host = next((s for s in ctx.tree.body if isinstance(s, ast.ImportFrom) and s.module == module and not s.level
                     and s.names[0].name != "*"), None)
        if host is not None and getattr(host.names[-1], "lineno", None):
            edits = _insert(edits, ctx.source.span(host.names[-1])[1], f", {name}")
            continue
        new_lines.append(f"from {module} import {name}")
    placed = sorted_import_position(ctx.source, ctx.tree, new_lines[0]) if len(new_lines) == 1 else None
    if placed is not None:
        edits = _insert(edits, *placed)
    elif new_lines:
        text = "".join(line + ctx.source.newline for line in new_lines)
        if position == len(ctx.source.text) and not ctx.source.text.endswith(("\n", "\r")):
            text = ctx.source.newline + text
        edits = _insert(edits, position, text)
    return edits


def _insert(edits: List[TextEdit], at: int, text: str) -> List[TextEdit]:
    """Insert text; an edit starting at the same offset takes it in front of its own, so the
    order of the two is never left to chance (and never dropped as an overlap)."""
    same = next((e for e in edits if e.start == at), None)
    if same is None:
        return sorted([*edits, TextEdit(at, at, text)])
    return sorted([*(e for e in edits if e is not same), TextEdit(at, same.end, text + same.text)])


@dataclass
class Round:
    """One analysis of a module's text: its findings (selected, not suppressed by `# noqa`
    unless flake8 does that itself) and, on demand, the plan that would fix each."""

    source: Source
    tree: ast.Module
    checker: Checker
    findings: List[Finding]
    noqa: Callable[[int, str], bool]
    floors: Floors
    hidden: List[Finding] = field(default_factory=list)  # selected, not suppressed, but hidden by the targets

    @classmethod
    def of(cls, text: str, floors: Floors, selected: Callable[[str], bool] = lambda code: True,
           index: Optional[RuleIndex] = None, honour_noqa: bool = True, tree: Optional[ast.Module] = None,
           source: Optional[Source] = None) -> "Round":
        source = source or Source(text)
        tree = ast.parse(text) if tree is None else tree
        # (no `:=`: expressions bind no local name; the source: bodies that hold no finding are skipped)
        checker = Checker(index, floors=floors, walrus=":=" in text, source=source)
        found = checker.check(tree)
        noqa = noqa_lines(source, checker.multiline_literals) if honour_noqa else _never
        findings = [f for f in found if selected(f.code) and not noqa(f.line, f.code)]
        hidden = [f for f in checker.hidden_findings() if selected(f.code) and not noqa(f.line, f.code)]
        return cls(source, tree, checker, findings, noqa, dict(floors), hidden)

    def context(self) -> FixContext:
        self.source.know_fstrings(self.checker.all_joined_strings)
        bindings = {id(alias): binding for alias, _, binding in self.checker.imports}
        return FixContext(self.source, self.tree, self.floors, spell(self.floors), self.noqa, bindings,
                          self.checker.calls, self.checker.bound_names, self.checker.holder_strings,
                          self.checker.hints, self.checker.complete, self.findings)

    def plans(self, path: Optional[Path] = None, cleanup: bool = True) -> List[Optional[Plan]]:
        """The plan that would fix each finding (including the import it needs), as `check
        --output-format json` and the editor offer them: only plans whose result compiles, the
        ones `fix` may apply (`fix_text` proves its plans the same way). Nothing is applied.
        `path`: the module's file, so that a plan can see the modules beside it. Without
        `cleanup`, a plan leaves in place the imports it stops using (the same plans otherwise:
        enough to say what is fixable, for the text formats)."""
        ctx = self.context()
        ctx.path = path
        planned: List[Optional[Plan]] = []
        used_before: Optional[Set[int]] = None
        for finding in self.findings:
            fixed = _plan(ctx, finding)
            if fixed is not None:
                fixed = self.finished(ctx, fixed)
            if fixed is not None and not self.compiles(fixed):
                fixed = None
            if fixed is not None:
                # the imports it leaves unused go too
                if cleanup and fixed.releases and self._rewrites_every_use(fixed):
                    used_before = used_imports(self.checker, self.source) if used_before is None else used_before
                    fixed = self._with_cleanup(fixed, used_before)
            planned.append(fixed)
        return planned

    def finished(self, ctx: FixContext, fixed: Plan) -> Plan:
        """A plan as it leaves the engine alone: with the imports its code needs, requoted for the
        f-string it may write into."""
        edits = list(fixed.edits)
        if fixed.imports:
            edits = _with_imports(ctx, self.checker, edits, set(fixed.imports))
        return fixed._replace(edits=tuple(self.source.requote(e) for e in edits))

    def compiles(self, finished: Plan) -> bool:
        """Whether the module compiles with this plan (`finished`) alone applied. Each edit's unit (the
        innermost function or class around it, else its top-level statement, or the lines it
        inserts between statements) is compiled alone, behind the module's `from __future__`
        imports: the rest of the module is as it was, and compiled. A whole module per plan cost a
        check 1.5x; a unit that holds `nonlocal` (bound by a function around it) is no unit."""
        edits = finished.edits
        units: Dict[Tuple[int, int, bool], List[TextEdit]] = {}
        for edit in edits:
            units.setdefault(self._unit(edit), []).append(edit)
        if any("nonlocal" in self.source.text[self.source.line_start(lo):self._line_end(hi)]
               for lo, hi, _ in units):
            units = {(1, self.source.position(len(self.source.text))[0], False): list(edits)}
        future = self._future_imports
        for (lo, hi, nested), inside in units.items():
            start, end = self.source.line_start(lo), self._line_end(hi)
            chunk = Source(self.source.text[start:end]).apply(
                [TextEdit(e.start - start, e.end - start, e.text) for e in inside])
            header = (future if lo > 1 else "") + ("if 1:\n" if nested else "")
            if not self._unit_compiles(header + chunk):
                return False
        return True

    def _unit_compiles(self, code: str) -> bool:
        """Whether one unit's code compiles, each text compiled once per module: findings often
        share a plan (two of an import's names, each with its fix) or a unit (the import the
        plans add), so one module's plans compiled the same text about three times over."""
        known = self._compiled.get(code)
        if known is None:
            try:
                compile(code, "<plan>", "exec", dont_inherit=True)
                known = True
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                known = False
            self._compiled[code] = known
        return known

    @cached_property
    def _compiled(self) -> Dict[str, bool]:
        return {}

    @cached_property
    def _future_imports(self) -> str:
        """The module's `from __future__` imports, put in front of each unit compiled alone."""
        return "".join(self.source.segment(s) + "\n" for s in self.tree.body
                       if isinstance(s, ast.ImportFrom) and s.module == "__future__")

    def _line_end(self, line: int) -> int:
        return self.source.line_start(line) + len(self.source.line(line))

    def _unit(self, edit: TextEdit) -> Tuple[int, int, bool]:
        """(first line, last line, indented) of the code an edit is compiled with: the innermost
        function or class whose lines hold it, else the top-level statements it touches."""
        first, last = self.source.position(edit.start)[0], self.source.position(edit.end)[0]
        unit = (*self._top_level_lines(first, last), False)
        body: List[ast.stmt] = self.tree.body
        starts = self._statement_lines[0]
        nested = False
        while body:
            inner = _holding(body, starts, first, last)
            if inner is None:
                break
            if isinstance(inner, _SCOPES) and nested:
                unit = (_first_line(inner), inner.end_lineno, True)
            nested = True
            body = [c for name in ("body", "orelse", "finalbody") for c in getattr(inner, name, ())
                    if isinstance(c, ast.stmt)]
            body += [c for block in (*getattr(inner, "handlers", ()), *getattr(inner, "cases", ())) for c in block.body]
            starts = None
        return unit

    def _top_level_lines(self, lo: int, hi: int) -> Tuple[int, int]:
        """Lines lo..hi widened to the top-level statements they touch (whole lines, with
        decorators, and with any statement that shares a line with them: `a = 1; b = (`)."""
        tops, bottoms = self._statement_lines
        while True:  # the statements overlapping lo..hi: the first ending at lo or later, the last starting by hi
            below, above = bisect.bisect_left(bottoms, lo), bisect.bisect_right(tops, hi) - 1
            if below > above:
                return lo, hi
            wider = min(lo, tops[below]), max(hi, bottoms[above])
            if wider == (lo, hi):
                return lo, hi
            lo, hi = wider

    @cached_property
    def _statement_lines(self) -> Tuple[List[int], List[int]]:
        """First lines (decorators included) and last lines of the top-level statements, in order."""
        return [_first_line(s) for s in self.tree.body], [s.end_lineno for s in self.tree.body]

    def _rewrites_every_use(self, finished: Plan) -> bool:
        """Whether the plan rewrites every use of an import it releases (only then can `fix`'s
        cleanup remove one: the analysis of the text after it is needed only then)."""
        spans = [(e.start, e.end) for e in finished.edits]
        self.checker.complete(finished.releases)  # a body skipped by the walk may read one
        for alias, _, binding in self.checker.imports:
            if (alias.asname or alias.name.split(".")[0]) in finished.releases and binding.uses and all(
                    any(start <= self.source.span(use)[0] < end for start, end in spans) for use in binding.uses):
                return True
        return False

    def _with_cleanup(self, finished: Plan, used_before: Set[int]) -> Plan:
        """A finished plan with the removal of the imports whose last use it rewrites, as the
        round of `fix` after it removes them: the text it then leaves, as edits of this text (a
        quick fix that left `from apex import amp` would still fail where apex has no amp)."""
        text = self.source.apply(finished.edits)
        after = Round.of(text, self.floors, index=self.checker.index, honour_noqa=False)
        applied = FixResult(text, rounds=[sorted(finished.edits)])
        cleanup = _unused_imports(after.context(), after.checker, set(finished.releases), used_before, never_exported,
                                  applied.original_offset)
        edits, _ = _choose([(p, []) for p in cleanup])
        if not edits:
            return finished
        final = after.source.apply(edits)
        try:
            compile(final, "<plan>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return finished
        return finished._replace(edits=tuple(_line_edits(self.source, final)))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _holding(body: List[ast.stmt], starts: Optional[List[int]], first: int, last: int) -> Optional[ast.stmt]:
    """The statement of `body` whose lines hold first..last: found by bisection where the first
    lines of an ordered body are known (`starts`: a module's thousands of top-level statements),
    else by a scan (a block's few)."""
    if starts is None:
        return next((s for s in body if _first_line(s) <= first and last <= s.end_lineno), None)
    index = bisect.bisect_right(starts, first) - 1
    statement = body[index] if index >= 0 else None
    return statement if statement is not None and last <= statement.end_lineno else None


def _first_line(statement: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])


def never_exported(name: str) -> bool:
    """No other module imports a name from this one (a run that knows of no other module)."""
    return False


def _line_edits(source: Source, final: str) -> List[TextEdit]:
    """Edits that turn the source into `final`, by whole lines where they differ."""
    import difflib

    old, new = source.text.splitlines(keepends=True), final.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [TextEdit(starts[i1], starts[i2], "".join(new[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _never(line: int, code: str) -> bool:
    return False


def fix_text(
    text: str,
    floors: Optional[Floors] = None,
    selected: Callable[[str], bool] = lambda code: True,
    unsafe: bool = False,
    index: Optional[RuleIndex] = None,
    exported: Callable[[str], bool] = never_exported,
    path: Optional[Path] = None,
    project: Optional["ProjectImports"] = None,
) -> FixResult:
    """Fix every selected finding whose grade allows it; raise FixError if a round's
    result would not compile, or if the fixes have not settled after the last round.
    `exported`: whether other modules import a name from this one (its import then stays)."""
    floors = dict(floors or {})
    grades = {Grade.SAFE, Grade.UNSAFE} if unsafe else {Grade.SAFE}
    result = FixResult(text)
    released: Set[str] = set()
    used_before: Optional[_UsedBefore] = None
    original: Set[int] = set()  # where the imported names stood before the fixes
    tree: Optional[ast.Module] = None  # the fixed text's, parsed when it was compiled or spliced from the last
    spliced = False  # the tree is the last round's with the statements the edits are in parsed again
    source: Optional[Source] = None  # the fixed text's
    rounds = 0
    refused: Set[Plan] = set()  # plans of this text that do not compile alone: never applied nor offered
    noted: List[Tuple[int, Source, int, str]] = []  # (round, its text, line, note) of each applied fix's note
    while True:
        now = Round.of(result.text, floors, selected, index, tree=tree, source=source)
        ctx = now.context()
        ctx.exported, ctx.path, ctx.project = exported, path, project
        if used_before is None:
            used_before = _UsedBefore(now.checker, now.source)
            original = {now.source.span(alias)[0] for alias, _, _ in now.checker.imports}
        by_plan: Dict[Plan, List[Finding]] = {}
        result.unsafe = 0
        for finding in now.findings:
            fixed = _plan(ctx, finding)
            if fixed in refused:
                ctx.explain(finding.line, f"the fix of {finding.code} would not compile: left to a person")
                fixed = None
            if fixed is not None and fixed.grade in grades:
                by_plan.setdefault(fixed, []).append(finding)
            elif fixed is not None and fixed.grade is Grade.UNSAFE:
                result.unsafe += 1
        for cleanup in _unused_imports(ctx, now.checker, released, used_before, exported, result.original_offset):
            by_plan.setdefault(cleanup, [])
        if rounds:  # only fixes make duplicates
            for cleanup in _duplicated_imports(ctx, now.checker, original, result.original_offset):
                by_plan.setdefault(cleanup, [])
        edits, chosen = _choose(list(by_plan.items()))
        if not edits:
            noted += [(len(result.rounds), now.source, line, text) for text, line in ctx.explanations.items()]
            break
        if spliced:  # edits are planned only on a tree parsed from the text whole
            tree, spliced = None, False
            continue
        if rounds == _MAX_ROUNDS:  # fixes that undo or redo each other: a bug, said as one
            codes = sorted({f.code for _, found in chosen for f in found}) or ["the import cleanup"]
            raise FixError(f"the fixes of {', '.join(codes)} still changed the code after {_MAX_ROUNDS} rounds; "
                           "please report it")
        edits = _with_imports(ctx, now.checker, edits, set().union(*(p.imports for p, _ in chosen)))
        edits = [now.source.requote(e) for e in edits]
        new_text = now.source.apply(edits)
        source = Source(new_text)
        used_before.settle()  # it reads the first round's tree, which the splice changes
        tree = reparsed(now.tree, now.source, edits, source)
        spliced = tree is not None
        try:  # compile, not only parse: `f(x=1, x=2)` parses
            if spliced:  # the proof is the text's own, never the splice's
                compile(new_text, "<fixed>", "exec", dont_inherit=True)
            else:  # parsed whole, once: the tree the next round reads is the one compiled
                tree = ast.parse(new_text)
                try:
                    compile(tree, "<fixed>", "exec", dont_inherit=True)
                except RecursionError:  # a tree converts back within Python's recursion limit; the text need not
                    compile(new_text, "<fixed>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            alone = {p for p, _ in chosen if not now.compiles(now.finished(ctx, p))}
            if not alone:  # each compiles, together they do not: a bug, said as one
                raise FixError(f"the fixed code would not compile ({getattr(error, 'msg', error)}, "
                               f"line {getattr(error, 'lineno', '?')})") from None
            refused |= alone  # the round again without them, on the same text and tree
            tree, source, spliced = None, now.source, False  # the splice changed the old tree in place
            continue
        for chosen_plan, fixed_findings in chosen:
            result.fixed += fixed_findings
            released |= chosen_plan.releases
            if chosen_plan.note and fixed_findings:
                noted.append((len(result.rounds), now.source, min(f.line for f in fixed_findings), chosen_plan.note))
        result.text = new_text
        result.rounds.append(sorted(edits))
        rounds += 1
    result.remaining = now.findings  # the last round analysed the text as it is now, and found nothing to do
    result.shims = sum(1 for f in result.remaining if is_shim(f))
    # a note names lines of the text of its round: the lines they were in the text before the fixes
    original = Source(text)
    for round_index, then, line, note in noted:
        def before(number: int, then: Source = then, round_index: int = round_index) -> int:
            if not 1 <= number <= len(then.lines):
                return number
            return original.position(result.original_offset(then.line_start(number), round_index))[0]
        result.notes.append((before(line), _mentioned_lines(note, before)))
    return result


def is_shim(finding: Finding) -> bool:
    """A finding left alone because it is in the fallback half of a compatibility shim, or goes
    through a name an `except ImportError` rebinds (unless its rule's fixer removes such probes)."""
    probed = getattr(finding.site.binding, "probed", False)
    return finding.site.shim or probed and not finding.rule.fixes_probes
