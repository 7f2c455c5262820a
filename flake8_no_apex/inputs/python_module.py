"""Python modules: what flake8 reads, and every file no other kind claims."""
from __future__ import annotations


from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Iterable, Tuple
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult
    from ..report import Reported


class PythonModule(Kind):
    name = "python"

    def claims(self, name: str, folder: str) -> bool:
        return True

    def walked(self, name: str, docs: bool) -> bool:
        return name.endswith(".py")

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..edits import Source
        from ..engine import Analysis, analysing, planned, syntax_check
        from ..noqa import ignores_file

        text = document.text
        if session.honours_noqa and ignores_file(text):  # `# flake8: noqa`, as flake8 skips it
            return Analysis(document, Source(text), [], {})
        rule_words = session.prefilter.may_match(text) if document.rule_words is None else document.rule_words
        if not rule_words:  # no word of any rule: nothing to find
            if document.named and document.tree is None:
                syntax_check(document)
            return Analysis(document, Source(text), [], {})
        from ..fixer import Round  # (only now: a run whose files have no rule's word never imports the rules)

        floors = session.targets(document.path).floors
        with analysing():
            now = Round.of(text, floors, session.selected(document.path), session.index,
                           honour_noqa=session.honours_noqa, tree=document.tree)
        found = now.findings
        if document.path.name == "setup.py":  # its requirements too (without a fix: Python is fixed as Python)
            from ..dependency_files import check_dependencies

            found = found + session.filtered(document.path, now.source,
                                             check_dependencies("setup.py", text, floors))
        own = document.named or document.on_disk is not None  # not the module of a notebook's or a doc's code
        if session.settings is not None and session.settings.check_docs and own and ">>>" in text:
            from ..doc_blocks import in_docstrings

            with analysing():  # the examples of the docstrings, reported where they are (not fixed)
                found = found + session.filtered(document.path, now.source,
                                                 in_docstrings(session, document, now.tree))
        others = [None] * (len(found) - len(now.findings))
        return Analysis(document, now.source, found, floors, lambda: planned(now, document.path) + others, now.hidden,
                        marker=lambda: planned(now, document.path, cleanup=False) + others)

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        from ..engine import analysing, syntax_check
        from ..fixer import FixResult, fix_text, never_exported
        from ..noqa import ignores_file

        if session.settings is not None and ignores_file(document.text):  # flake8 would not check it
            return FixResult(document.text)
        if not session.prefilter.may_match(document.text):  # no rule's word: nothing fix could change
            if document.named:  # a file named on the command line that fix cannot read is said, as check says it
                syntax_check(document, scopes=True)
            return FixResult(document.text)
        project = session.project
        exported = project.exported(document.path) if project is not None else never_exported
        if project is not None:  # another module's plan, when a plan spans modules, as fix would make it
            project.planned_with = lambda path: (session.targets(path).floors, session.selected(path))
        with analysing():
            result = fix_text(document.text, session.targets(document.path).floors, session.selected(document.path),
                              unsafe, session.index, exported, document.path, project)
        if project is not None:
            project.fixed(document.path, result.text)
        return result

    def add_noqa(self, text: str, found: Iterable["Reported"]) -> Tuple[str, int]:
        from ..fixer import statement_lines
        from ..noqa import add_noqa

        return add_noqa(text, [(item.line, item.code) for item in found], statement_lines(text))


KIND = PythonModule()
