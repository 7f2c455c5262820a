"""transformers Trainer subclasses that copied the apex branch of `training_step`: transformers 5.0
removed `Trainer.use_apex`, so the branch goes and the native one beside it stays."""
from __future__ import annotations

import ast
from typing import Dict

from ..resolve import dotted_name
from ..table import TextEdit
from ._amp_common import _Scaler, _loads


class TrainerSubclasses:
    """The apex branches of a transformers Trainer subclass. A part of the
    migration (apex_amp._Migration), which holds the state these methods share."""

    # a transformers Trainer subclass: `if self.use_apex:` goes, the native branch stays ----------
    def drop_trainer_apex_branches(self, uses: Dict[str, list]) -> bool:
        """A subclass of transformers' Trainer that copied its apex branches (`if self.use_apex:
        with amp.scale_loss(...)`): transformers 5.0 removed `use_apex`, so those branches go
        and the native one beside them, which ran whenever apex was off, is what runs. False if
        the module's apex AMP is not all in such branches."""
        branches: Dict[int, ast.If] = {}
        for finding in (f for found in uses.values() for f in found):
            branch = next((n for n in self.enclosing(finding.site.node) if isinstance(n, ast.If)
                           and isinstance(n.test, ast.Attribute) and n.test.attr == "use_apex"
                           and dotted_name(n.test.value) == "self"
                           and any(finding.site.node in ast.walk(s) for s in n.body)), None)
            owner = next((n for n in self.enclosing(finding.site.node) if isinstance(n, ast.ClassDef)), None)
            if branch is None or owner is None or not self.derives_from_trainer(owner):
                return False
            branches[id(branch)] = branch
        for branch in branches.values():
            self.drop_branch(branch)
            self.released |= {name for s in branch.body for name in _loads(s)}
            method = self.scope_of(branch)
            self.note(f"the apex branch of {getattr(method, 'name', 'the method')}() (line {branch.lineno}) went: "
                      "transformers 5.0 removed Trainer.use_apex, and the branch beside it, which ran whenever "
                      "apex was off, is what runs")
        for statement in self.tree.body:  # `if is_apex_available(): from apex import amp`
            if isinstance(statement, ast.If) and not statement.orelse and statement.body and all(
                    self.imports_amp(s) for s in statement.body):
                self.undone.add(id(statement))
        self.scaler = _Scaler("", None)
        self.replaced = ast.Pass()
        return True

    def derives_from_trainer(self, owner: ast.ClassDef) -> bool:
        """The class derives from transformers' Trainer (or Seq2SeqTrainer ...), by its import."""
        imported = {alias.asname or alias.name: getattr(self.ctx.binding(alias), "qualname", None) or ""
                    for node in ast.walk(self.tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        for base in owner.bases:
            name = dotted_name(base) or ""
            root, _, rest = name.partition(".")
            qualname = imported.get(root, "") + ("." + rest if rest else "")
            if qualname.startswith("transformers.") and qualname.endswith("Trainer"):
                return True
        return False

    def drop_branch(self, branch: ast.If) -> None:
        """Delete the `if`/`elif` branch, keeping the branches after it: `if a: X elif b: Y`
        becomes `if b: Y`, `if a: X else: Y` becomes Y, an `elif a: X` line range goes."""
        if not self.is_elif(branch):
            self.own_lines(branch)
        following = branch.orelse[0] if branch.orelse else None
        if following is not None and self.is_elif(following):
            clause = following.lineno
        elif following is not None:
            clause = next(n for n in range(following.lineno - 1, branch.lineno, -1)
                          if self.source.line(n).strip().startswith("else"))
        else:
            clause = branch.end_lineno + 1
        if self.is_elif(branch):  # the lines of this branch, up to the next clause
            start, end = self.source.line_start(branch.lineno), self.source.line_start(clause) if clause <= len(
                self.source.lines) else len(self.source.text)
            self.edits.append(TextEdit(start, end, ""))
        elif following is None:
            self.replace_statement(branch, [])
        elif self.is_elif(following):  # `if a: X elif b:` -> `if b:`
            self.edits.append(TextEdit(self.source.span(branch)[0], self.source.span(following)[0] + 2, ""))
        else:  # `if a: X else: Y` -> Y, one level out
            indent, inner = self.indentation(branch), self.indentation(following)
            start, end = self.source.line_start(branch.lineno), self.line_end(branch.end_lineno)
            lines = self.source.text[self.source.line_start(following.lineno):end].splitlines(True)
            self.edits.append(TextEdit(start, end, "".join(
                indent + line[len(inner):] if line.startswith(inner) else line.lstrip(" \t") if not line.strip()
                else line for line in lines)))

    def is_elif(self, node: ast.stmt) -> bool:
        owner = self.places[id(node)].owner if id(node) in self.places else None
        return isinstance(node, ast.If) and isinstance(owner, ast.If) and owner.orelse == [node] \
            and self.source.line(node.lineno)[node.col_offset:].startswith("elif")
