"""Jupyter notebooks: their code cells read as one module, their shell escapes as shell
(`notebook_cells` holds how, imported when a notebook is read)."""
from __future__ import annotations


from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Iterable, Tuple
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult
    from ..report import Reported


class Notebook(Kind):
    name = "notebook"

    def claims(self, name: str, folder: str) -> bool:
        return name.endswith(".ipynb")

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..notebook_cells import analyse

        return analyse(session, document)

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        from ..notebook_cells import fix

        return fix(session, document, unsafe)

    def add_noqa(self, text: str, found: Iterable["Reported"]) -> Tuple[str, int]:
        from ..notebook_cells import add_noqa

        return add_noqa(text, found)


KIND = Notebook()
