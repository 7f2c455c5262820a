"""Plans that span the modules of a run, the methods of a class or a setup function: the scaler is
handed to the functions of other modules (a parameter), returned to the callers of the function
that creates it, or passed to the module-level functions that use it; each module the scaler
must reach is planned from the text the run found."""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Set, Tuple

from ..edits import open_paren
from ..resolve import dotted_name
from ..table import TextEdit
from ._amp_common import (
    Refused, _HELPER_USES_NAMES, _INITIALIZE, _SCALE_LOSS, _SCALER_NAMES, _Scaler, _argument, _elements, _pure)

if TYPE_CHECKING:
    from .apex_amp import _Migration
    from dataclasses import dataclass
else:  # the same classes, each made from one compiled text (records.py says why)
    from ..records import dataclass


@dataclass
class _Local:
    """One module's migration planned on the text the run found: why not, or the plan's facts."""

    refused: Optional[str]
    migration: Optional[_Migration] = None


def _analysed(project, path: Path, migration_of: Callable[..., _Migration]) -> _Local:
    """The migration of another module of the run (made by `migration_of`, the planner of the
    module being fixed), planned alone (once per run), with the floors and codes the run fixes
    it with."""
    from ..fixer import Round  # the fixer imports the rules: read when first planned

    key = ("apex-amp-local", Path(path).resolve())
    if key not in project.memo:
        project.memo[key] = _Local("it is being planned")  # a module reached again while planned
        text = project.original(path)
        floors, selected = project.planned_with(Path(path))
        try:
            now = Round.of(text or "", floors, selected)
        except (SyntaxError, ValueError, RecursionError):
            project.memo[key] = _Local("it does not parse")
            return project.memo[key]
        ctx = now.context()
        ctx.path, ctx.project, ctx.exported = Path(path).resolve(), project, project.exported(path)
        migration = migration_of(ctx, alone=True)
        try:
            migration.plan()
            project.memo[key] = _Local(None, migration)
        except Refused as why:
            project.memo[key] = _Local(str(why))
    return project.memo[key]


def _amp_tree(project, path: Path) -> Optional[ast.Module]:
    key = ("apex-amp-tree", Path(path).resolve())
    if key not in project.memo:
        try:
            project.memo[key] = ast.parse(project.original(path) or "")
        except (SyntaxError, ValueError, RecursionError):
            project.memo[key] = None
    return project.memo[key]


def _amp_uses(project, path: Path) -> Dict[str, Set[str]]:
    """What each module-level function of a module of the run, as the run found it, uses of
    apex's amp (`apex.amp.scale_loss`, `apex.amp.state_dict` ...), as the resolver reads it
    (`from apex import amp as A` included), whatever codes, noqa comments and targets the run
    fixes it with."""
    from ..fixer import Round  # the fixer imports the rules: read when first planned

    key = ("apex-amp-uses", Path(path).resolve())
    if key not in project.memo:
        tree, uses, everywhere = _amp_tree(project, path), {}, set()
        if tree is not None:
            functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
            now = Round.of(project.original(path) or "", project.planned_with(Path(path))[0], honour_noqa=False,
                           tree=tree)
            for finding in [*now.findings, *now.hidden]:
                if finding.site.name.startswith("apex.amp."):
                    everywhere.add(finding.site.name)
                    for function in functions:
                        if function.lineno <= finding.line <= function.end_lineno:
                            uses.setdefault(function.name, set()).add(finding.site.name)
        project.memo[key] = uses
        project.memo[("apex-amp-names", Path(path).resolve())] = everywhere
    return project.memo[key]


def _amp_names(project, path: Path) -> Set[str]:
    """What a module of the run uses of apex's amp anywhere (`apex.amp.initialize` ...)."""
    _amp_uses(project, path)
    return project.memo[("apex-amp-names", Path(path).resolve())]


def _amp_functions(project, path: Path) -> Set[str]:
    """The module-level functions of a module of the run that scale losses or use apex's
    state (`amp.scale_loss`, `amp.state_dict()` ...), as the run found it."""
    return {name for name, used in _amp_uses(project, path).items() if used & set(_HELPER_USES_NAMES)}


def _scales(project, path: Path) -> bool:
    """A module-level function of the module scales a loss with apex."""
    return any(_SCALE_LOSS in used for used in _amp_uses(project, path).values())


def _helper_parameter(project, path: Path) -> str:
    """The name a helper module's functions take the scaler by: one no scope of it uses."""
    tree = _amp_tree(project, path)
    nodes = list(ast.walk(tree)) if tree is not None else []
    taken = {n.id for n in nodes if isinstance(n, ast.Name)} | {n.arg for n in nodes if isinstance(n, ast.arg)}
    name = next((n for n in _SCALER_NAMES if n not in taken), None)
    if name is None:
        raise Refused(f"every name the scaler could take is in use in {path.name}")
    return name


def _quoted(reason: str) -> str:
    """Another module's refusal inside this one's: its line numbers are that module's, so the
    space after "line" is a no-break space, which the mapping of this module's lines skips."""
    return reason.replace("line ", "line\u00a0").replace("lines ", "lines\u00a0")


def _shown(path: Path, relative_to: Optional[Path]) -> str:
    """A module as the user knows it: relative to the one being fixed, where it can be."""
    try:
        return os.path.relpath(path, Path(relative_to).parent) if relative_to else str(path)
    except ValueError:
        return str(path)


class AcrossScopes:
    """Where the scaler must reach beyond the function that creates it: the functions of other
    modules of the run, the callers of a setup function, module-level functions it calls. A part of the
    migration (apex_amp._Migration), which holds the state these methods share."""

    # the scaler across the modules of a run -------------------------------------------------
    def hand_scaler_to_helpers(self) -> Set[Path]:
        """Each call of a function imported from another module of the run that uses apex AMP
        passes the scaler (`do_train(..., scaler=scaler)`): the modules of those functions."""
        project, modules = self.ctx.project, set()
        self.helper_calls: Dict[Tuple[Path, str], List[ast.Call]] = {}
        if self.ctx.path is None:
            return modules
        if project is None:  # one module planned alone (check, an editor): the modules beside it are not in it
            from ..project import ProjectImports

            project = ProjectImports([])
        me = Path(self.ctx.path).resolve()
        for node in self.tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            module = "." * (node.level or 0) + (node.module or "")
            path = project.module_path(me, module)
            if any(a.name == "*" for a in node.names):
                self.refuse_star_import_of_helpers(node, project.module_file(me, module) or path)
                continue
            if path is None:  # a module of the project this run leaves alone must not need the scaler
                outside = project.module_file(me, module)
                needing = sorted(a.name for a in node.names if outside and a.name in _amp_functions(project, outside))
                if needing:
                    raise Refused(f"{needing[0]}() of {_shown(outside, me)} uses apex AMP, and that module is not "
                                  "in this run: fix the modules of the project together")
                continue
            if path == me:
                continue
            functions = _amp_functions(project, path)
            for alias in node.names:
                if alias.name not in functions:
                    continue
                local = alias.asname or alias.name
                calls = []
                for use in ast.walk(self.tree):
                    if isinstance(use, ast.Name) and use.id == local and isinstance(use.ctx, ast.Load):
                        call = self.parents.get(id(use))
                        if not (isinstance(call, ast.Call) and call.func is use) or any(
                                isinstance(a, ast.Starred) for a in call.args) or any(
                                k.arg is None for k in call.keywords):
                            raise Refused(f"{local}() of {_shown(path, me)} uses apex AMP and is used on line "
                                          f"{use.lineno} other than called with its arguments listed")
                        calls.append(call)
                parameter = _helper_parameter(project, path)
                for call in calls:
                    self.add_keyword(call, f"{parameter}={self.reach(call, f'the call of {local}()')}", local)
                self.helper_calls[(path, alias.name)] = calls
                modules.add(path)
        return modules

    def refuse_star_import_of_helpers(self, node: ast.ImportFrom, path: Optional[Path]) -> None:
        """`from training import *` of a module of the project whose functions use apex AMP: which
        of them this module calls (and so which must take the scaler) is not said by name."""
        if path is None or Path(path).resolve() == Path(self.ctx.path).resolve():
            return
        functions = sorted(_amp_functions(self.ctx.project, path)) if self.ctx.project is not None else []
        if functions:
            raise Refused(f"{', '.join(f + '()' for f in functions)} of {_shown(path, self.ctx.path)} "
                          f"{'use' if len(functions) > 1 else 'uses'} apex AMP and this module takes that "
                          f"module's names through `import *` (line {node.lineno}): import the names it uses by "
                          "name, so the scaler can be handed to them")

    def as_helper(self, uses: Dict[str, list]) -> None:
        """A module whose functions scale losses (or save apex's state) for another module of
        the run that initializes apex (`do_train` of `engine/trainer.py`): each such function
        takes the scaler as a parameter, its callers pass it; their models, optimizers and the
        conditions that enable apex are the parameters those callers give them."""
        project, me = self.ctx.project, Path(self.ctx.path).resolve()
        functions: Dict[int, ast.FunctionDef] = {}
        for finding in sorted((f for found in uses.values() for f in found), key=lambda f: (f.line, f.col)):
            function = self.scope_of(finding.site.node)
            while function is not None and self.parents.get(id(function)) is not self.tree:
                function = self.scope_of(function)
            if not isinstance(function, ast.FunctionDef):
                raise Refused("amp.initialize is not called in this module, and apex AMP is used on line "
                              f"{finding.line} outside a function another module could hand the scaler")
            functions[id(function)] = function
        parameter = _helper_parameter(project, me)
        self.models, self.optimizers, self.helper_functions = set(), set(), functions
        for function in functions.values():
            inside = next((n for n in ast.walk(self.tree) if isinstance(n, ast.Name) and n.id == function.name), None)
            if inside is not None:
                raise Refused(f"{function.name}() is also used in this module (line {inside.lineno}), where no "
                              "scaler would be given to it")
            callers = project.importers(me, function.name)
            if not callers:
                raise Refused(f"amp.initialize is not called in this module, nor in a module of the run that "
                              f"imports {function.name}()")
            switches = None
            for caller in callers:
                local = _analysed(project, caller, type(self))
                if local.refused is not None:
                    raise Refused(f"{function.name}() is called from {_shown(caller, me)}, which cannot migrate: "
                                  f"{_quoted(local.refused)}")
                if not self.alone:
                    for other in local.migration.helper_modules():
                        other_local = _analysed(project, other, type(self))
                        if other_local.refused is not None:
                            raise Refused(f"{_shown(caller, me)} also hands the scaler to {_shown(other, me)}, which "
                                          f"cannot migrate: {_quoted(other_local.refused)}")
                calls = local.migration.helper_calls.get((me, function.name), [])
                if not calls:
                    raise Refused(f"{function.name}() is imported by {_shown(caller, me)} without being called there")
                for call in calls:
                    given = self.parameters_given(function, call)
                    self.models |= {p for p, a in given.items() if dotted_name(a) in local.migration.models}
                    self.optimizers |= {p for p, a in given.items() if dotted_name(a) in local.migration.optimizers}
                    enabling = {p for p, a in given.items() if ast.dump(a) in local.migration.switches}
                    switches = enabling if switches is None else switches & enabling
            self.switches |= {ast.dump(ast.Name(id=p, ctx=ast.Load())) for p in switches or ()}
            self.add_parameter(function, parameter)
        self.scaler_name, self.scaler = parameter, _Scaler(parameter, None)
        self.enabled = self.dynamic = True  # the callers' scaler: enabled or not, at run time
        self.init_statement, self.replaced = None, ast.Pass()

    @staticmethod
    def parameters_given(function: ast.FunctionDef, call: ast.Call) -> Dict[str, ast.AST]:
        """The function's parameters and the arguments a call gives them."""
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        given = {name: argument for name, argument in zip(positional, call.args)}
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        return given

    def add_parameter(self, function: ast.FunctionDef, name: str) -> None:
        """`def f(a, b)` becomes `def f(a, b, scaler)` (`scaler=None` after defaults)."""
        arguments = function.args
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or not arguments.args:
            raise Refused(f"{function.name}() takes *args, keyword-only or no parameters: pass the scaler by hand")
        last = arguments.args[-1]
        default = arguments.defaults[-1] if arguments.defaults else None
        end = max(self.source.span(last)[1], self.source.span(default)[1] if default else 0)
        self.edits.append(TextEdit(end, end, f", {name}" + ("=None" if default else "")))

    def helper_modules(self) -> Set[Path]:
        return {path for path, _ in self.helper_calls}

    def return_scaler(self) -> None:
        """The function that initializes apex returns the scaler too, to the callers that train
        (`model, optimizer, scheduler = init_optimizer_and_amp(...)`): only when every return
        of it is a tuple after the scaler exists, and every reference to it unpacks one."""
        if not self.scaler.returned_to:
            return
        home = self.scaler.home
        name = self.scaler.name
        if self.parents.get(id(home)) is not self.tree or self.ctx.in_strings(home.name) \
                or self.ctx.exported(home.name):
            raise Refused(f"{home.name}() would have to return the scaler, and is used outside this module")
        if self.places[id(self.init_statement)].block is not home.body:
            raise Refused(f"the scaler would be created in a block of {home.name}() that not all its returns follow")
        returns = [n for n in self.own_nodes(home) if isinstance(n, ast.Return)]
        sizes = {len(r.value.elts) if isinstance(r.value, ast.Tuple) and not any(
            isinstance(e, ast.Starred) for e in r.value.elts) and r.lineno > self.init_statement.lineno else -1
            for r in returns}
        if len(sizes) != 1 or -1 in sizes:
            raise Refused(f"{home.name}() does not return one tuple of the same size after amp.initialize, "
                          "so the scaler cannot be returned with it")
        for call in self.calls_of(home):
            statement = self.parents.get(id(call))
            target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
            if not (isinstance(target, ast.Tuple) and statement.value is call and len(target.elts) in sizes
                    and not any(isinstance(e, ast.Starred) for e in target.elts)):
                raise Refused(f"the call of {home.name}() on line {call.lineno} does not unpack its result, so the "
                              "scaler cannot be returned with it")
            self.edits.append(TextEdit(self.source.span(target.elts[-1])[1], self.source.span(target.elts[-1])[1],
                                       f", {name}"))
        for statement in returns:
            end = self.source.span(statement.value.elts[-1])[1]
            self.edits.append(TextEdit(end, end, f", {name}"))
        if self.scaler.passed_to:
            raise Refused("the scaler would be both returned and passed on: pass it by hand")

    def own_nodes(self, function: ast.AST) -> Iterator[ast.AST]:
        """The nodes of a function's body, not those of the functions and classes inside it."""
        stack = list(function.body)
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(node))

    def pass_scaler(self) -> None:
        """Hand the scaler to the module-level functions that use it, as a parameter: only
        when every reference to such a function is a call from the initializing function, after
        the scaler is created, or from another function handed it (`train()` calls `evaluate()`)."""
        given = {id(f) for f in self.scaler.passed_to.values()}
        for function in self.scaler.passed_to.values():
            arguments = function.args
            if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs \
                    or not arguments.args:
                raise Refused(f"{function.name}() takes *args, keyword-only or no parameters: pass the scaler by hand")
            calls = []
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Name) and node.id == function.name:
                    call = self.parents.get(id(node))
                    if not (isinstance(call, ast.Call) and call.func is node and (
                            self.scaler.home in self.enclosing(call) and call.lineno > self.init_statement.lineno
                            or id(self.scope_of(call)) in given)):
                        raise Refused(f"{function.name}() is used elsewhere than after amp.initialize in "
                                      "the function that calls it: pass the scaler by hand")
                    calls.append(call)
            if not calls or self.ctx.in_strings(function.name):
                raise Refused(f"{function.name}() is not called where the scaler is created")
            if self.ctx.exported(function.name):
                raise Refused(f"{function.name}() would take the scaler as a parameter, and another module of the "
                              "run imports it: pass the scaler by hand")
            self.add_parameter(function, self.scaler.name)
            for call in calls:
                self.add_keyword(call, f"{self.scaler.name}={self.scaler.name}", function.name)

    def add_keyword(self, call: ast.Call, keyword: str, name: str) -> None:
        """`f(a, b)` becomes `f(a, b, scaler=scaler)`, `f()` `f(scaler=scaler)`."""
        at = max((self.source.span(a)[1] for a in [*call.args, *call.keywords]), default=None)
        if at is not None:
            self.edits.append(TextEdit(at, at, f", {keyword}"))
            return
        at = open_paren(self.source, call)
        if at is None:
            raise Refused(f"the call of {name}() on line {call.lineno} is not one the fix can extend")
        self.edits.append(TextEdit(at, at, keyword))

    def calls_of(self, function: ast.FunctionDef) -> List[ast.Call]:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == function.name]

    def called_only_after_creation(self, node: ast.AST, what: str) -> None:
        """The method that runs `node` is the one that creates the scaler (after it does), or
        one that only it calls, after that."""
        creator = self.scope_of(self.init_statement)
        method = next(f for f in [node, *self.enclosing(node)] if self.parents.get(id(f)) is self.scaler.home)
        if method is creator:
            if (node.lineno, node.col_offset) < (self.init_statement.lineno, self.init_statement.col_offset):
                raise Refused(f"{what} (line {node.lineno}) runs before amp.initialize")
            return
        for use in ast.walk(self.scaler.home):
            if isinstance(use, ast.Attribute) and use.attr == getattr(method, "name", None) \
                    and dotted_name(use.value) == "self":
                call = self.parents.get(id(use))
                if not (isinstance(call, ast.Call) and call.func is use and self.scope_of(call) is creator
                        and call.lineno > self.init_statement.lineno):
                    raise Refused(f"{what} (line {node.lineno}) is in {method.name}(), which runs elsewhere than "
                                  f"after amp.initialize in {creator.name}(), where the scaler would be created")
        if self.ctx.in_strings(getattr(method, "name", "")):
            raise Refused(f"{method.name}() is named in a string: pass the scaler by hand")

    # a class that scales for an amp.initialize of another module --------------------------------
    def as_class_of_its_own(self, uses: Dict[str, list]) -> bool:
        """A class whose methods scale the losses of a model and optimizer it is given, apex
        initialized by another module of the run that does not scale (a library's optimizer
        helper, the model and optimizer reaching the class through the user's code): the class
        creates its scaler in `__init__`, enabled by the condition of its apex branches
        (`self.use_amp`), right after `__init__` sets it. False where the uses are not all in
        one such class (the module's functions are then helpers of the module that initializes)."""
        found = [f for found in uses.values() for f in found]
        owners = {id(c): c for f in found for c in [self.top_level_class(f.site.node)]}
        if not uses[_SCALE_LOSS] or len(owners) != 1 or None in owners.values():
            return False
        owner = next(iter(owners.values()))
        init = next((s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            raise Refused(f"{owner.name} scales losses with apex and has no __init__ of its own, where its "
                          "scaler would be created")
        tests = set()
        for finding in uses[_SCALE_LOSS]:
            site = self.places[id(self.statement_of(finding.site.call))]
            gated = isinstance(site.owner, ast.If) and site.block is site.owner.body
            tests.add(ast.dump(site.owner.test) if gated else None)
        switch = self.places[id(self.statement_of(uses[_SCALE_LOSS][0].site.call))].owner.test \
            if None not in tests else None
        if len(tests) != 1 or switch is not None and dotted_name(switch) is None:
            raise Refused(f"{owner.name} scales its losses under other conditions than one attribute that "
                          "enables apex, which its scaler could be enabled by")
        after = self.switch_assignment(owner, init, switch) if switch is not None else None
        index = init.body.index(after) + 1 if after is not None else int(_docstring(init))
        for statement in init.body[:index]:
            for node in ast.walk(statement):  # a method (a subclass's too) could scale before the scaler exists
                if isinstance(node, ast.Call) and ((dotted_name(node.func) or "").startswith("self.")
                                                   or dotted_name(node.func) == "super"):
                    raise Refused(f"{owner.name}.__init__ calls a method (line {node.lineno}) before it sets "
                                  f"{dotted_name(switch) if switch is not None else 'anything'}, where the scaler "
                                  "would be created")
        self.optimizers = set()
        for finding in uses[_SCALE_LOSS]:
            optimizer = _argument(finding.site.call, 1, "optimizers")
            names = [dotted_name(o) for o in _elements(optimizer)] if optimizer is not None else []
            if not names or not all(n and n.startswith("self.") and n.count(".") == 1 for n in names):
                raise Refused(f"amp.scale_loss (line {finding.line}) scales for another optimizer than an "
                              f"attribute of {owner.name}")
            self.optimizers.update(names)
        self.models = self.modules_trained_by(owner) - self.optimizers
        if not self.models:
            raise Refused(f"{owner.name} trains no attribute the fix can tell is a model (one whose parameters(), "
                          "forward(), train() or eval() it calls)")
        self.partner_initializer(owner)
        attributes = {n.attr for n in ast.walk(self.tree) if isinstance(n, ast.Attribute)}
        name = next((n for n in _SCALER_NAMES if n not in attributes), None)
        if name is None:
            raise Refused("every attribute name the scaler could take is in use")
        self.scaler_name, self.scaler = f"self.{name}", _Scaler(name, owner)
        self.enabled, self.dynamic = True, switch is not None
        if switch is not None:
            self.switches.add(ast.dump(switch))
        self.own_class = owner
        self.init_statement, self.replaced = after, ast.Pass()
        torch = self.torch(uses[_SCALE_LOSS][0])
        # the attribute may hold anything an `if` takes (FARM's opt level "O1"); autocast takes a bool only
        enabled = f"enabled=bool({self.source.segment(switch)})" if switch is not None else ""
        before = index < len(init.body)  # the statement it goes before, else after __init__'s last
        anchor = init.body[index] if before else init.body[-1]
        self.own_lines(anchor)
        at = self.source.line_start(anchor.lineno) if before else self.line_end(anchor.end_lineno)
        line = f"{self.indentation(anchor)}{self.scaler_name} = {self.spelled('grad_scaler', torch, enabled)}"
        self.edits.append(TextEdit(at, at, line + self.source.newline if before else self.source.newline + line))
        self.note(f"{owner.name} creates its own scaler in __init__"
                  + (f", enabled by {self.source.segment(switch)} as its apex branches were" if switch is not None
                     else "")
                  + ": apex took the opt level and loss scale of an amp.initialize elsewhere; the scaler's scale is "
                  "dynamic (from 2**16) and the forward passes run under float16 autocast (apex's O1)")
        return True

    def top_level_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        """The class of the module's body whose method runs the node, None outside one."""
        chain = self.enclosing(node)
        for index in range(1, len(chain) - 1):
            if isinstance(chain[index], ast.ClassDef) and chain[index + 1] is self.tree:
                return chain[index] if isinstance(chain[index - 1], ast.FunctionDef) else None
        return None

    def switch_assignment(self, owner: ast.ClassDef, init: ast.FunctionDef, switch: ast.AST) -> ast.stmt:
        """`self.use_amp = use_amp` in __init__'s own body: the one place the class sets the switch."""
        target = dotted_name(switch)
        stores = [n for n in ast.walk(owner) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
                  and dotted_name(n) == target]
        assignment = next((s for s in init.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                           and dotted_name(s.targets[0]) == target and _pure(s.value)), None)
        if not (target.startswith("self.") and target.count(".") == 1 and assignment is not None
                and len(stores) == 1 and stores[0] is assignment.targets[0]):
            raise Refused(f"{owner.name} scales its losses under {target}, which its __init__ does not set once, "
                          "by itself, before anything else could change it")
        return assignment

    def modules_trained_by(self, owner: ast.ClassDef) -> Set[str]:
        """The attributes of self the class treats as torch modules: it calls their parameters(),
        named_parameters(), forward(), train() or eval()."""
        return {dotted_name(n.func.value) for n in ast.walk(owner) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr in _MODULE_METHODS
                and (dotted_name(n.func.value) or "").startswith("self.")
                and dotted_name(n.func.value).count(".") == 1}

    def partner_initializer(self, owner: ast.ClassDef) -> None:
        """The amp.initialize of the models this class trains is in another module of the run,
        which does not scale and so migrates by dropping it: without it, apex would still patch
        the models under the native scaler (planned alone, for that module, this is not asked)."""
        if self.alone:
            return
        project, me = self.ctx.project, Path(self.ctx.path).resolve()
        partners, refusals = [], []
        for path in project.paths:
            text = project.original(path) or ""
            if path == me or "initialize" not in text or "apex" not in text:
                continue
            local = _analysed(project, path, type(self))
            if local.refused is not None and _INITIALIZE in _amp_names(project, path):
                refusals.append((path, local.refused))
            elif local.migration is not None and local.migration.scaled_elsewhere:
                partners.append(path)
        if refusals:
            path, why = refusals[0]
            raise Refused(f"{owner.name} scales for the amp.initialize of {_shown(path, me)}, which cannot migrate: "
                          f"{_quoted(why)}")
        if not partners:
            raise Refused(f"amp.initialize is not called in this module, and {owner.name} scales losses with apex: "
                          "fix it together with the module that calls amp.initialize (one that does not scale)")

    def scaling_class_of_the_run(self) -> Optional[str]:
        """A class of another module of the run that creates its own scaler (as_class_of_its_own),
        as the user knows it (`Trainer of trainer.py`): the amp.initialize of a module that does
        not scale is then that class's, and goes."""
        project, me = self.ctx.project, Path(self.ctx.path).resolve() if self.ctx.path else None
        if project is None or me is None:
            return None
        for path in project.paths:
            text = project.original(path) or ""
            if path != me and "scale_loss" in text and "class " in text:
                local = _analysed(project, path, type(self))
                if local.migration is not None and local.migration.own_class is not None:
                    return f"{local.migration.own_class.name} of {_shown(path, me)}"
        return None


_MODULE_METHODS = ("parameters", "named_parameters", "forward", "train", "eval")


def _docstring(function: ast.FunctionDef) -> bool:
    first = function.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
