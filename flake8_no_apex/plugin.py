"""The flake8 entry point (`APX`)."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path
from typing import Iterator, List, Optional, Tuple, Type

from . import __version__
from .engine import PYTHON, Document, Session
from .codes import DEFAULT_OFF
from .targets import TargetError, Targets, parse_option


def _target_versions(text: str) -> Optional[Targets]:
    """argparse type: a bad value becomes flake8's usage error, also from a config file."""
    try:
        return parse_option(text)
    except TargetError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class Plugin:
    name = "flake8-no-apex"
    version = __version__
    session = Session()  # flake8 selects codes and honours noqa itself; targets detected per file

    def __init__(self, tree: ast.AST, lines: List[str], filename: str):
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager) -> None:
        option_manager.add_option(
            "--apex-target-versions",
            default="auto",
            type=_target_versions,
            parse_from_config=True,
            metavar="LIB=VERSION,...",
            help="oldest supported releases, e.g. 'torch=2.1,lightning=1.9,transformers=4.30', "
            "or 'auto' (default) to read the lower bounds the project declares; "
            "only findings whose replacement exists in them are reported",
        )
        # the codes for maintained apex parts are opt-in, for teams dropping apex entirely
        option_manager.extend_default_ignore(DEFAULT_OFF)

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.session = Session(targets=options.apex_target_versions)

    def run(self) -> Iterator[Tuple[int, int, str, Type["Plugin"]]]:
        document = Document(Path(self.filename), "".join(self.lines), tree=self.tree, kind=PYTHON)
        for finding in self.session.analyse(document).findings:
            yield finding.line, finding.col, finding.message, type(self)
