"""Documentation (Markdown, reStructuredText): the Python code of its blocks and examples, read
when the user asks (`--check-docs`, or `check-docs = true`) or names the file (`doc_blocks`
holds how)."""
from __future__ import annotations


from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult

SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".rest")


class Markdown(Kind):
    name = "docs"

    def claims(self, name: str, folder: str) -> bool:
        return name.lower().endswith(SUFFIXES)

    def walked(self, name: str, docs: bool) -> bool:
        return docs

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..doc_blocks import analyse
        from ..engine import analysing

        with analysing():
            return analyse(session, document)

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        from ..doc_blocks import fix
        from ..engine import analysing

        with analysing():
            return fix(session, document, unsafe)


KIND = Markdown()
