"""A cheap text test that rules a file out before any tree walk.

Each rule needs certain whole words in the source: the name it matches and an import root
of its library (a symbol cannot be reached without importing its library). A file passes
when every group of words of at least one rule is present. Whole words matter: `amp`
alone would match `example` and `sample` and let nearly every file through. A keyword that
counts only as a keyword argument of certain calls (`Trainer(precision=16)`) also needs those
calls' names and its own spelling as a keyword (`precision=` or `"precision":`).

What the rule table requires is written out in `_prefilter_words.py` (`python
scripts/prefilter_words.py` writes it; a test fails when it is stale): a run whose files have
no rule's word then never imports the table, its rules, the checker or the fixer, a third of
the time of checking one such file (the pre-commit hook on a commit that touches no AMP code).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Sequence, Tuple

if TYPE_CHECKING:
    from .table import Rule

Requirement = Tuple[FrozenSet[str], ...]  # all groups must match; any word of a group will do


def _library_of(module: str) -> str:
    from .table import LIBRARY_ROOTS

    root = module.split(".")[0]
    return next(lib for lib, roots in LIBRARY_ROOTS.items() if root in roots)


def _last_names(specs: Iterable[str]) -> FrozenSet[str]:
    """The names a module must spell to call one of these symbols. A resolved name is built from
    the module's own words (imports, attribute chains, assignments, base classes, a star import's
    use), so its last part is one of them: `Trainer` for `from lightning import Trainer as T`,
    `from_argparse_args` for `Trainer.from_argparse_args`."""
    return frozenset(spec.split(":")[1].rsplit(".", 1)[-1] for spec in specs)


def _keyword_spelling(name: str) -> str:
    """How a keyword argument is written in a call (a pattern): `name=`, or `"name":` in a
    `**{...}` literal; blanks, line breaks, comments and continuations may stand before the `=`
    or `:`."""
    return rf"\b{re.escape(name)}[\"']?(?:\s|\\|#[^\r\n]*)*[=:]"


def requirements(rules: Iterable[Rule]) -> Tuple[List[Requirement], Dict[Requirement, str]]:
    """What a file must hold for each rule's matchers to find anything: groups of words (each
    group must have one present), and for some of them a spelling (a pattern) the text must
    also show."""
    from .table import LIBRARY_ROOTS, AttributeRead, Keyword, Modules, Parameter, Symbols

    needs: List[Requirement] = []
    spelled: Dict[Requirement, str] = {}
    for rule in rules:
        for m in rule.match:
            if isinstance(m, Symbols):
                roots = frozenset(LIBRARY_ROOTS[_library_of(m.module)])
                needs += [(frozenset({name.rsplit(".", 1)[-1]}), roots) for name in m.names]
            elif isinstance(m, Modules):
                needs.append((frozenset({m.root or next(iter(m.prefixes)).split(".")[0]}),))
            elif isinstance(m, Keyword):
                roots = frozenset(LIBRARY_ROOTS[m.library or _library_of(m.callees[0].split(":")[0])])
                if m.any_call or m.dict_forms or m.argv or not m.callees:
                    needs.append((frozenset({m.name}), roots))
                else:  # only on calls of its callees, whose names the module must spell (`Trainer as T`)
                    need = (frozenset({m.name}), roots, _last_names(m.callees))
                    needs.append(need)
                    if m.position is None:  # and only as a keyword: `precision=`, not `self.precision`
                        spelled.setdefault(need, _keyword_spelling(m.name))
                if m.position is not None:  # a positional argument is found by its callee's name
                    callees = frozenset(spec.split(":")[1].split(".")[0] for spec in m.callees)
                    needs.append((callees, roots))
            elif isinstance(m, (AttributeRead, Parameter)):
                needs.append((frozenset({m.name}), frozenset(LIBRARY_ROOTS[m.library])))
    unconditional = {need for need in needs if need not in spelled}
    order = sorted(set(needs), key=lambda need: [sorted(group) for group in need])  # the same on every run
    return order, {need: spelled[need] for need in order if need in spelled and need not in unconditional}


# Every ASCII character that cannot be part of an identifier becomes a space, so a split
# yields the words of the source. Sound for code: identifiers are delimited by ASCII. A table
# for bytes: translating them is far faster than translating characters through a mapping.
_NOT_IDENTIFIER_BYTES = bytes(32 if c < 128 and not (chr(c).isalnum() or c == 95) else c for c in range(256))


class Prefilter:
    def __init__(self, needs: Sequence[Requirement], spellings: Dict[Requirement, str], gate: Tuple[str, ...]):
        """`needs` and `spellings` as `requirements` gives them; `gate`: words of which a file must
        hold one, even as a substring, to meet any need."""
        self.needs, self.gate = list(needs), gate
        self.spellings = {need: re.compile(pattern) for need, pattern in spellings.items()}
        self.words = frozenset(word for need in self.needs for group in need for word in group)
        self._byte_words = frozenset(word.encode() for word in self.words)
        # each need under the words of its first group, so a file's words lead to the needs
        # they may complete (most files have a handful of them, the table has over eighty needs)
        self._by_word: Dict[str, List[Requirement]] = {}
        for need in self.needs:
            for word in need[0]:
                self._by_word.setdefault(word, []).append(need)

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> "Prefilter":
        """The pre-filter of these rules, worked out from their matchers."""
        from .table import LIBRARY_ROOTS

        needs, spellings = requirements(rules)
        # Every need has a group of library import roots (no symbol is reached without importing
        # its library): a file in which none of them occurs even as a substring fails every need.
        # A few substring searches (in C, no allocation) rule out most files before the split.
        roots = {root for group in LIBRARY_ROOTS.values() for root in group}
        gates = [next((group for group in need if group <= roots), None) for need in needs]
        words = set().union(*gates) if gates and None not in gates else set()
        # a root inside another root is found by it: `lightning` covers `pytorch_lightning`.
        # `torch` is searched first: every library of the table is built on it, so a file that
        # can meet a need almost always spells it, mostly in its first lines, where the search
        # stops (a file that spells no root pays every search, in any order). Searched in
        # alphabetical order, a Lightning module was scanned whole for four roots it lacks.
        kept = (w for w in words if not any(o != w and o in w for o in words))
        gate = tuple(sorted(kept, key=lambda word: (word != "torch", word)))
        return cls(needs, spellings, gate)

    def written(self) -> str:
        """This pre-filter as `_prefilter_words.py` holds the default one (a spelling under the
        index of its need)."""
        lines = ['"""What each rule of the table requires of a file\'s words: written by',
                 '`python scripts/prefilter_words.py` from the table (prefilter.py says why); do not edit."""',
                 "", "NEEDS = ["]
        for need in self.needs:
            lines += ["    (", *(f"        frozenset({sorted(group)!r})," for group in need), "    ),"]
        lines += ["]", "SPELLINGS = {"]
        lines += [f"    {self.needs.index(n)}: {p.pattern!r}," for n, p in self.spellings.items()]
        lines += ["}", f"GATE = {self.gate!r}", ""]
        return "\n".join(lines)

    def may_match(self, source: str) -> bool:
        if self.gate and not any(word in source for word in self.gate):
            return False
        present = self.present(source)
        return any(all(not group.isdisjoint(present) for group in need[1:]) and self._spelled(need, source)
                   for word in present for need in self._by_word.get(word, ()))

    def present(self, source: str) -> FrozenSet[str]:
        """The rule words the source holds as whole words."""
        if source.isascii():  # one byte per character: the same words (splitting bytes is twice as fast)
            found = self._byte_words.intersection(source.encode("ascii").translate(_NOT_IDENTIFIER_BYTES).split())
            return frozenset(word.decode() for word in found)
        # UTF-8 keeps each ASCII character one byte and puts no ASCII byte inside another
        # character, so its bytes translate as the characters would; the words are split as
        # characters, since str.split() also breaks at non-ASCII spaces (U+00A0, U+2028, ...).
        text = source.encode("utf-8", "surrogatepass").translate(_NOT_IDENTIFIER_BYTES)
        return self.words.intersection(text.decode("utf-8", "surrogatepass").split())

    def _spelled(self, need: Requirement, source: str) -> bool:
        pattern = self.spellings.get(need)
        return pattern is None or pattern.search(source) is not None


@lru_cache(maxsize=None)
def default() -> Prefilter:
    """The pre-filter of the whole rule table, built once per process from what
    `_prefilter_words.py` writes of it (without importing the table)."""
    from ._prefilter_words import GATE, NEEDS, SPELLINGS

    return Prefilter(NEEDS, {NEEDS[index]: pattern for index, pattern in SPELLINGS.items()}, GATE)
