"""The files that pin dependencies (requirements and constraints files, pyproject.toml,
setup.cfg): apex pinned, the line dropped by the (unsafe) fix. setup.py is a Python module whose
requirement strings the Python kind reads too."""
from __future__ import annotations


from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult


def is_dependency_file(name: str) -> bool:
    return name in ("pyproject.toml", "setup.cfg") or (
        name.endswith(".txt") and name.startswith(("requirements", "constraints"))
    )


class DependencyFile(Kind):
    name = "dependencies"
    fixed_after_modules = True  # a line that installs apex goes only if no module needs apex once fixed

    def claims(self, name: str, folder: str) -> bool:
        return is_dependency_file(name)

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..dependency_files import check_dependencies, drop_line
        from ..edits import Source
        from ..engine import Analysis, analysing

        floors = session.targets(document.path).floors
        source = Source(document.text)
        with analysing():
            found = check_dependencies(document.path.name, document.text, floors)
        found = session.filtered(document.path, source, found)
        syntax = "toml" if document.path.name == "pyproject.toml" else "lines"
        return Analysis(document, source, found, floors, lambda: [drop_line(source, f, syntax) for f in found])

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        return session.fix_lines(document, unsafe)


KIND = DependencyFile()
