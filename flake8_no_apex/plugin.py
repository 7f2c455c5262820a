"""The flake8 entry point (`APX`)."""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import Iterator, List, Tuple, Type

from . import __version__
from .checker import check_tree
from .prefilter import Prefilter
from .rules import DEFAULT_OFF, RULES


@lru_cache(maxsize=None)
def _prefilter() -> Prefilter:
    return Prefilter(RULES)


class Plugin:
    name = "flake8-no-apex"
    version = __version__

    def __init__(self, tree: ast.AST, lines: List[str]):
        self.tree = tree
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager) -> None:
        # APX107/APX108 flag maintained apex parts: opt-in, for teams dropping apex entirely
        option_manager.extend_default_ignore(DEFAULT_OFF)

    def run(self) -> Iterator[Tuple[int, int, str, Type["Plugin"]]]:
        if not _prefilter().may_match("".join(self.lines)):
            return
        for finding in check_tree(self.tree, lines=self.lines):
            yield finding.line, finding.col, finding.message, type(self)
