"""Modules with two AMP back ends chosen by one option (`--amp apex|pytorch`, timm's `use_amp ==
'apex'` / `'native'`): apex's branches go, and apex's value of the option takes the native
branches, so the option chooses native AMP for it exactly as it did for the native value."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..resolve import dotted_name
from ..table import TextEdit
from ._amp_common import Refused, _INITIALIZE, _REGISTRY, _Scaler, _loads

# what says a module has a native AMP training path beside apex's: torch's scaler, timm's
_NATIVE_SCALERS = (".GradScaler", ".NativeScaler")
_NATIVE_ROOTS = ("torch.", "timm.")
_KEPT_KEYWORDS = ("models", "optimizers", "enabled")  # amp.initialize's keywords that say nothing of precision


class DualBackends:
    """The apex back end of a module that also has the native one. A part of the migration
    (apex_amp._Migration), which holds the state these methods share."""

    def native_amp(self) -> List[ast.AST]:
        """The module's uses of a native loss scaler (`torch.cuda.amp.GradScaler`, an imported
        `GradScaler`, timm's `NativeScaler`), in line order: a native training path."""
        imported: Dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                name = dotted_name(node) or ""
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                name = imported.get(node.id, "")
            else:
                continue
            if name.startswith(_NATIVE_ROOTS) and name.endswith(_NATIVE_SCALERS):
                found.append(node)
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))

    def drop_apex_backend(self, uses: Dict[str, list]) -> bool:
        """`if args.amp == 'pytorch': <native> elif args.amp == 'apex': <apex>`: every branch that
        runs only when the option has apex's value goes, and every test of the native value
        admits apex's too (`args.amp in ('pytorch', 'apex')`). With apex's value the module then
        does what it did with the native one, step for step; with any other value what it did.
        False when the module has no native AMP; refused when it has, in another form."""
        natives = self.native_amp()
        if not natives:
            return False
        native = natives[0]
        beside = f"the module also has a native AMP path ({dotted_name(native) or native.id} on line {native.lineno})"
        selector = None
        for finding in (f for found in uses.values() for f in found if f.site.name not in _REGISTRY):
            chosen = self.apex_branch_of(finding.site.node)
            if chosen is None:
                raise Refused(f"{beside} beside apex's, and apex AMP on line {finding.line} is not in a branch "
                              "chosen by comparing one option with a string: make apex's choice take the native "
                              "path and delete apex's branches by hand")
            if selector is not None and chosen[:2] != selector:
                raise Refused(f"apex's branches are chosen by more than one test ({selector[0]} == "
                              f"{selector[1]!r}, {chosen[0]} == {chosen[1]!r} on line {chosen[2].lineno})")
            selector = chosen[:2]
        option, apex = selector
        if "apex" not in apex.lower():
            raise Refused(f"{beside} beside apex's, and apex's branches are chosen by {option} == {apex!r}, a value "
                          "that does not name apex: make apex's choice take the native path by hand")
        dropped = self.branches_choosing(option, apex)
        inside = {id(n) for branch in dropped for n in [*ast.walk(branch.test), *(
            m for s in branch.body for m in ast.walk(s))]}
        widened = self.native_value(option, apex, inside, natives)
        self.refuse_option_read_elsewhere(option, apex, widened[0][2].value)
        for branch in dropped:
            if not any(id(branch) in {id(n) for n in ast.walk(other)} for other in dropped if other is not branch):
                self.drop_branch(branch)
                self.released |= {name for s in branch.body for name in _loads(s)} | _loads(branch.test)
        apex_text = self.source.segment(next(
            c for n in ast.walk(dropped[0].test) for c in [self.string_comparison(n)] if c and c[2] == apex)[3])
        for compare, equal, constant in widened:
            text = f"{option} {'in' if equal else 'not in'} ({self.source.segment(constant)}, {apex_text})"
            self.edits.append(TextEdit(*self.source.span(compare), text))
        for finding in (f for name in _REGISTRY for f in uses[name] if id(f.site.node) not in inside):
            self.unregister(self.statement_of(finding.site.call), finding.site.call)
        native_text = self.source.segment(widened[0][2])
        self.note(f"{option} == {apex_text} now takes the native AMP branches of {option} == "
                  f"{native_text} (apex's branches, lines {', '.join(map(str, sorted(b.lineno for b in dropped)))}, "
                  "went)"
                  + self.settings_left(uses[_INITIALIZE]))
        self.scaler = _Scaler("", None)
        self.replaced = ast.Pass()
        return True

    def string_comparison(self, node: ast.AST) -> Optional[Tuple[str, bool, str, ast.Constant]]:
        """`S == 'x'`, `'x' == S`, `S != 'x'` with S a name or attribute chain: (S, equal, 'x',
        the constant)."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
            return None
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Constant):
            left, right = right, left
        option = dotted_name(left)
        if option is None or not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return None
        return option, isinstance(node.ops[0], ast.Eq), right.value, right

    def requires(self, test: ast.AST) -> List[Tuple[str, str]]:
        """The (option, value) pairs the test is true only with: `S == 'x'` alone or as a term
        of an `and`."""
        terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        found = [self.string_comparison(term) for term in terms]
        return [(c[0], c[2]) for c in found if c is not None and c[1]]

    def apex_branch_of(self, node: ast.AST) -> Optional[Tuple[str, str, ast.If]]:
        """The innermost `if`/`elif` whose body holds the node and whose test requires an option
        to have one string value: (option, value, the `if`)."""
        child = node
        for owner in self.enclosing(node):
            if isinstance(owner, ast.If) and any(child is s for s in owner.body):
                required = self.requires(owner.test)
                if len(required) == 1:
                    return (*required[0], owner)
            child = owner
        return None

    def branches_choosing(self, option: str, value: str) -> List[ast.If]:
        """Every `if`/`elif` of the module whose test requires the option to have the value."""
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.If) and (option, value) in self.requires(n.test)]

    def native_value(self, option: str, apex: str, inside: set, natives: List[ast.AST]) -> list:
        """The comparisons of the option with the native back end's value (the one whose branches
        create the native scaler), outside apex's branches: (the comparison, ==, the constant).
        Comparisons with other values (`"fp32"`) read the same for apex's value as for the native
        one, so they stay."""
        compared: Dict[str, list] = {}
        for node in ast.walk(self.tree):
            found = self.string_comparison(node)
            if found is None or found[0] != option or id(node) in inside:
                continue
            if found[2] == apex:
                raise Refused(f"{option} is compared with {apex!r} on line {node.lineno} other than to choose "
                              "apex's branches: make apex's choice take the native path by hand")
            compared.setdefault(found[2], []).append((node, found[1], found[3]))
        choosing = sorted(value for value in compared if any(self.chosen_by(n, option, value) for n in natives))
        if len(choosing) != 1:
            raise Refused(f"the module also has a native AMP path (line {natives[0].lineno}), and "
                          + (f"no native scaler is created in a branch chosen by {option} == a value"
                             if not choosing else f"its scaler is created for {option} == "
                             + " and ".join(map(repr, choosing)))
                          + ", so which value apex's choice should take is not clear: make it take one by hand")
        self.refuse_unstepped_scaler(natives)
        return compared[choosing[0]]

    def refuse_unstepped_scaler(self, natives: List[ast.AST]) -> None:
        """A GradScaler the native path creates is stepped and updated through (`scaler.step(o)`,
        `scaler.update()`, by the name it is bound to): apex's choice takes that path as it is,
        so it must train correctly. timm's NativeScaler does both itself."""
        names = set()
        for native in natives:
            call = self.parents.get(id(native))
            statement = self.parents.get(id(call))
            if isinstance(call, ast.Call) and call.func is native and isinstance(statement, ast.Assign) \
                    and (dotted_name(native) or "").rsplit(".", 1)[-1] == "GradScaler":
                names |= {(dotted_name(t) or "").rsplit(".", 1)[-1] for t in statement.targets}
        if not names:
            return
        called = {(node.func.attr, (dotted_name(node.func.value) or "").rsplit(".", 1)[-1]) for node in
                  ast.walk(self.tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
        for method in ("step", "update"):
            if not any((method, name) in called for name in names):
                raise Refused(f"the native path's GradScaler ({', '.join(sorted(names))}) is never given "
                              f".{method}(), so apex's choice would not train correctly on it either")

    def chosen_by(self, node: ast.AST, option: str, value: str) -> bool:
        child = node
        for owner in self.enclosing(node):
            if isinstance(owner, ast.If) and any(child is s for s in owner.body) \
                    and (option, value) in self.requires(owner.test):
                return True
            child = owner
        return False

    def refuse_option_read_elsewhere(self, option: str, apex: str, native_value: str) -> None:
        """The option is read only in comparisons with strings, in this module (a read that
        prints or passes it would see 'apex' where the code now runs native AMP); no other
        module of the run compares an attribute of its name with either value."""
        comparisons = [n for n in ast.walk(self.tree) if (self.string_comparison(n) or ("",))[0] == option]
        compared = {id(n.left if dotted_name(n.left) == option else n.comparators[0]) for n in comparisons}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                    and dotted_name(node) == option and id(node) not in compared:
                raise Refused(f"{option} is read on line {node.lineno} other than compared with a string, so its "
                              f"value {apex!r} cannot be made to choose the native path")
        project, me = self.ctx.project, self.ctx.path
        if project is None or me is None:
            return
        attribute = option.rsplit(".", 1)[-1]
        for path in project.paths:
            if Path(path).resolve() == Path(me).resolve():
                continue
            text = project.original(path) or ""
            if attribute not in text or not any(f"{q}{v}{q}" in text for v in (apex, native_value) for q in "'\""):
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                continue
            for node in ast.walk(tree):
                found = self.string_comparison(node)
                if found and found[0].rsplit(".", 1)[-1] == attribute and found[2] in (apex, native_value):
                    raise Refused(f"{path.name} compares {found[0]} with {found[2]!r} (line\u00a0{node.lineno}): "
                                  f"fix it with this module, choosing the native path for {apex!r} by hand")

    def settings_left(self, initializations: list) -> str:
        """What of amp.initialize's arguments the native branch does not take (opt_level='O2'
        kept float16 weights ...): said in the note, since apex's choice now trains as the native
        one does."""
        given = []
        for finding in initializations:
            call = finding.site.call
            given += [f"{k.arg}={self.source.segment(k.value)}" for k in call.keywords
                      if k.arg not in _KEPT_KEYWORDS and not (k.arg == "opt_level" and isinstance(
                          k.value, ast.Constant) and k.value.value == "O1")]
        if not given:
            return ""
        return (f": with apex's value it trains as with that one, by the settings of its scaler and autocast, "
                f"not amp.initialize's ({', '.join(dict.fromkeys(given))}; O2 and O3 kept float16 weights)")
