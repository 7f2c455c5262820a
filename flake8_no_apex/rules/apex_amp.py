"""Migrate apex AMP training code to native AMP, end to end (APX101-APX103 and FP16_Optimizer's
APX106, an unsafe fix).

The canonical apex training step

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        loss = criterion(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

becomes a GradScaler created where `amp.initialize` was, the forward pass (found from the data
flow: the statements the loss depends on, from the first that calls the model) under autocast,
`scaler.scale(loss).backward()`, `scaler.step(optimizer)` and `scaler.update()`. The module is
migrated as a whole or not at all: every use of apex.amp must have its native counterpart in
reach of one scaler, or the recipe is shown, with the reason, as before.

`_Migration` holds the state of one module's plan; its parts live beside it by concern:
_amp_forward (the scaled backward and its forward pass), _amp_reads (the steps and the gradient
reads before them), _amp_across (the scaler beyond its function: other modules of the run,
setup functions, helpers), _amp_trainer (transformers Trainer subclasses) and _amp_common (the
apex names, the refusal and small tree readers they share).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from ..edits import Source, only_tells, raising_guard, remove_statement
from ..resolve import chain_root, dotted_name
from ..table import Grade, Plan, TextEdit, plan
from ._amp_across import AcrossScopes, _analysed, _quoted, _scales, _shown
from ._amp_common import (
    NOT_MIGRATED, Refused, _APEX_AMP_MODULES, _APEX_AMP_PREFIXES, _DECORATORS, _DYNAMIC_START, _FIXED_SCALE,
    _FP16_OPTIMIZER, _FP16_OPTIMIZER_KEYWORDS, _FP16_OPTIMIZER_STATE, _HANDLED, _HELPER_USES_NAMES, _INITIALIZE,
    _INITIALIZE_KEYWORDS, _LOAD_STATE_DICT, _MASTER_PARAMS, _NETWORK_TO_HALF, _NEVER, _OP_LISTS_NOTE, _REGISTRY,
    _SCALER_NAMES, _SCALE_LOSS, _STATE_DICT, _Scaler, _Site, _TO_PYTHON_FLOAT, _argument, _elements, _is_number,
    _literal, _loads, _number, _pure, _stores)
from ._amp_dual import DualBackends
from ._amp_forward import ForwardAndBackward
from ._amp_reads import StepsAndReads
from ._amp_trainer import TrainerSubclasses
from ._torch import torch_name

__all__ = ["NOT_MIGRATED", "Refused", "migrate_amp"]

# handlers that would take an ImportError a probe inside a probe of apex should let through
_CATCHES_IMPORT_ERROR = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


def migrate_amp(ctx, finding) -> Optional[Plan]:
    """The migration plan of the whole module, for each finding it covers (computed once per
    round); None, with the reason noted once, where the code needs a person."""
    key = ("apex-amp-migration",)
    if key not in ctx.memo:
        try:
            ctx.memo[key] = _Migration(ctx).plan()
        except Refused as why:
            ctx.memo[key] = None
            line = next((f.line for f in ctx.findings if f.site.name == _INITIALIZE), finding.line)
            ctx.explain(line, f"{NOT_MIGRATED}: {why}")
    migration = ctx.memo[key]
    covered = ctx.memo.get(("apex-amp-nodes",), set())
    return migration if migration is not None and id(finding.site.node) in covered else None


class _Migration(ForwardAndBackward, StepsAndReads, AcrossScopes, TrainerSubclasses, DualBackends):
    def __init__(self, ctx, alone: bool = False):
        self.ctx = ctx
        self.source: Source = ctx.source
        self.tree: ast.Module = ctx.tree
        self.parents: Dict[int, ast.AST] = {}
        self.places: Dict[int, _Site] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if isinstance(block, list):
                    for index, statement in enumerate(block):
                        if isinstance(statement, ast.stmt):
                            self.places[id(statement)] = _Site(statement, block, index, node)
        self.edits: List[TextEdit] = []
        self.notes: List[str] = []
        self.backward_statements: List[ast.stmt] = []
        self.moves: list = []  # (step, [(clipping, its conditions)], the unscale_ before them or None)
        self.covered: Set[int] = set()  # nodes that run after the scaler unscales, before a step
        self.released: Set[str] = set()  # names read in code the migration deletes
        self.forward_regions: list = []  # (site, first index, last index, finding) of each forward pass
        self.scaling_functions: Set[int] = set()  # functions that scale a loss their callers give them
        self.switches: Set[str] = set()  # the conditions that enable apex (ast dumps): the scaler's
        self.undone: Set[int] = set()  # statements the migration deletes (converting the model to half)
        self.imports: Set[str] = set()
        self.import_meanings: Optional[Dict[str, str]] = None  # what each imported name names (qualified)
        self.registrations: List[int] = []  # the lines that changed apex's op lists
        self.dropped: Set[int] = set()  # initializations of models without an optimizer, which go
        self.shared_by_methods = False  # the scaler is an attribute only because methods of a class share it
        self.alone = alone  # planned for another module's plan: the modules it hands the scaler are not checked
        self.helper_functions: Dict[int, ast.FunctionDef] = {}  # (a helper module's) functions given the scaler
        self.helper_calls: Dict[Tuple[Path, str], List[ast.Call]] = {}  # calls of other modules' such functions
        self.flags: Optional[Set[str]] = None  # the module's argparse store_true/store_false dests
        self.own_class: Optional[ast.ClassDef] = None  # a class that creates its scaler, apex initialized elsewhere
        self.scaled_elsewhere: Optional[str] = None  # that class (`Trainer of trainer.py`), where this does not scale

    def note(self, text: str) -> None:
        """What the user must know about the migration, said once."""
        if text not in self.notes:
            self.notes.append(text)

    # --- where things are ----------------------------------------------------------------
    def statement_of(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parents[id(node)]
        return node

    def scope_of(self, node: ast.AST) -> Optional[ast.AST]:
        """The function (or lambda) whose body runs the node; None at module level."""
        node = self.parents.get(id(node))
        while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            node = self.parents.get(id(node))
        return node

    def enclosing(self, node: ast.AST) -> List[ast.AST]:
        chain = []
        node = self.parents.get(id(node))
        while node is not None:
            chain.append(node)
            node = self.parents.get(id(node))
        return chain

    def indentation(self, statement: ast.stmt) -> str:
        line = self.source.line(statement.lineno)
        head = line[:len(line) - len(line.lstrip(" \t"))]
        start = self.source.span(statement)[0] - self.source.line_start(statement.lineno)
        if len(head) != start:
            raise Refused(f"line {statement.lineno} holds more than one statement")
        return head

    def own_lines(self, statement: ast.stmt) -> None:
        """The statement starts its line and only a comment follows it."""
        self.indentation(statement)
        end = self.source.span(statement)[1]
        rest = self.source.line(statement.end_lineno)[end - self.source.line_start(statement.end_lineno):]
        if rest.strip() and not rest.strip().startswith("#"):
            raise Refused(f"line {statement.end_lineno} holds more than one statement")

    def line_end(self, lineno: int) -> int:
        """The offset before the line's line break."""
        line = self.source.line(lineno)
        return self.source.line_start(lineno) + len(line.rstrip("\r\n"))

    def unit(self, site: _Site) -> str:
        """One indentation step, as the block containing the statement uses it."""
        inner = self.indentation(site.statement)
        if isinstance(site.owner, ast.stmt):
            outer = self.indentation(site.owner)
            if inner.startswith(outer) and len(inner) > len(outer):
                return inner[len(outer):]
        return "\t" if inner.startswith("\t") else "    "

    def torch(self, finding) -> str:
        """The name of torch where the finding is (`import torch` is added if none binds it)."""
        name = torch_name(finding.site)
        if name is None:
            raise Refused(f"the name torch means something else on line {finding.line}")
        if not name:
            self.imports.add("torch")
        return name or "torch"

    def spelled(self, name: str, torch: str, keywords: str = "") -> str:
        text = self.ctx.spelled[name]
        if torch != "torch":
            text = torch + text[len("torch"):]
        if keywords:  # into the call's parentheses, after its arguments if it has any
            text = text[:-1] + ("" if text.endswith("()") else ", ") + keywords + ")"
        return text

    # --- the migration ---------------------------------------------------------------------
    def plan(self) -> Plan:
        references = [f for f in self.ctx.findings if f.site.name.startswith(_APEX_AMP_PREFIXES)
                      and not isinstance(f.site.node, (ast.alias, ast.stmt))]
        floats = [f for f in references if f.site.name == _TO_PYTHON_FLOAT]
        references = [f for f in references if f.site.name != _TO_PYTHON_FLOAT]
        for finding in floats:
            self.to_python_float(finding)
        if not references and floats:  # the module's only apex AMP: its number read-outs
            self.remove_star_imports(floats)
            return self.finish(floats)
        # apex.amp if the module uses it (FP16_Optimizer code beside it stays as it is), else FP16_Optimizer
        amp = any(f.site.name.startswith("apex.amp.") for f in references)
        group = "apex.amp." if amp else "apex.fp16_utils."
        uses: Dict[str, list] = {name: [] for name in sorted(_HANDLED) if name.startswith(group)}
        for finding in references:
            site = finding.site
            if not site.name.startswith(group):
                continue
            if site.name not in uses:
                if site.name in _DECORATORS:
                    raise Refused(f"@{site.name} (line {finding.line}): under O1 apex cast the function's float16 "
                                  "CUDA inputs and kept casting the operations inside it; torch has no decorator "
                                  "that does only the first (custom_fwd also turns autocast off inside): cast its "
                                  "inputs by hand")
                raise Refused(f"{site.name} (line {finding.line}) has no native counterpart the fix can write")
            if site.call is None or site.call.func is not site.node:
                raise Refused(f"{site.name} is used without being called (line {finding.line})")
            uses[site.name].append(finding)
        found = [f for found in uses.values() for f in found]
        self.check_every_use_is_handled(found, group)
        if amp:
            self.undo_flag_probes()
            self.migrate_amp(uses)
        else:
            self.migrate_fp16_optimizer(uses)
        self.move_clipping()
        self.return_scaler()
        self.pass_scaler()
        self.remove_undone()
        self.remove_star_imports(found + floats)
        return self.finish(found + floats)

    def remove_star_imports(self, rewritten: list) -> None:
        """`from apex.fp16_utils import *` goes when every name the module takes from it (the rule
        table lists each name apex.fp16_utils exports) is one the migration rewrites."""
        handled = {id(f.site.node) for f in rewritten}
        for statement in self.tree.body:  # a star import is allowed at module level only
            candidates = [statement] if isinstance(statement, ast.ImportFrom) else getattr(statement, "body", [])
            for node in candidates:
                if isinstance(node, ast.ImportFrom) and node.module in ("apex.fp16_utils", "apex.amp") \
                        and [a.name for a in node.names] == ["*"] and id(node) in self.places:
                    through = [f for f in self.ctx.findings if f.site.name.startswith(node.module + ".")
                               and getattr(f.site.binding, "statement", 0) is None]
                    if all(id(f.site.node) in handled for f in through):
                        self.replace_statement(node, [])

    def finish(self, found: list) -> Plan:
        if self.registrations:
            lines = sorted(set(self.registrations))
            self.note(f"the changes of apex's op lists on line{'s' if len(lines) > 1 else ''} "
                      f"{', '.join(map(str, lines))} went: {_OP_LISTS_NOTE}")
        edits = sorted(set(self.edits))
        if any(a.end > b.start for a, b in zip(edits, edits[1:])):
            raise Refused("the rewrites would overlap")
        self.ctx.memo[("apex-amp-nodes",)] = {id(f.site.node) for f in found}
        # the names the module read only in what the migration deletes may lose their imports
        gone = [n for n in ast.walk(self.tree) if isinstance(n, ast.stmt) and id(n) in self.undone]
        roots = {chain_root(f.site.node).id for f in found} | {name for n in gone for name in _loads(n)} | self.released
        return plan(edits, Grade.UNSAFE, self.imports, releases=roots, note="; ".join(self.notes))

    def to_python_float(self, finding) -> None:
        """`to_python_float(t)` is `t.item()`: apex returned that for anything with an item()
        (tensors, NumPy scalars), and indexed the rest."""
        call = finding.site.call
        if call is None or call.func is not finding.site.node:
            raise Refused(f"to_python_float is used without being called (line {finding.line})")
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            raise Refused(f"to_python_float (line {finding.line}) is not given one value")
        value = call.args[0]
        text = self.source.segment(value)
        atomic = isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
        self.edits.append(TextEdit(*self.source.span(call), f"{text if atomic else f'({text})'}.item()"))

    def remove_undone(self) -> None:
        """Delete what only served apex (probes, checks, model conversions), with an `if` they
        leave empty; what the initialization replaced is gone already."""
        replaced = {id(n) for n in ast.walk(self.replaced)}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and id(node) in self.undone and id(node) not in replaced:
                owner = self.places[id(node)].owner
                only = isinstance(owner, ast.If) and not owner.orelse and all(id(s) in self.undone for s in owner.body)
                self.replace_statement(owner if only else node, [])

    def migrate_amp(self, uses: Dict[str, list]) -> None:
        if not uses[_INITIALIZE] and self.drop_trainer_apex_branches(uses):
            return
        if uses[_INITIALIZE] and self.drop_apex_backend(uses):
            return
        if not uses[_INITIALIZE]:
            if self.ctx.project is None or self.ctx.path is None:
                raise Refused("amp.initialize is not called in this module, so the scaler has no place to be created")
            if not self.as_class_of_its_own(uses):
                self.as_helper(uses)
        else:
            self.as_initializer(uses)
        for finding in uses[_SCALE_LOSS]:
            self.scale_loss(finding)
        if uses[_SCALE_LOSS]:
            self.autocast_float16_inputs(uses[_SCALE_LOSS][0])
        self.wrap_forward_passes()
        self.note_forward_passes_left_in_float32()
        if self.backward_statements:
            self.steps()
        else:  # the helpers scale and step; an optimizer stepped here would skip the scaler
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step" \
                        and dotted_name(node.func.value) in self.optimizers:
                    raise Refused(f"the optimizer step on line {node.lineno} is away from the scaled backward")
        for finding in uses[_MASTER_PARAMS]:
            self.master_params(finding)
        for finding in uses[_STATE_DICT] + uses[_LOAD_STATE_DICT]:
            self.state(finding)
        for finding in (f for name in _REGISTRY for f in uses[name]):
            self.unregister(self.statement_of(finding.site.call), finding.site.call)
        if not self.alone:  # this module's own migration holds: so must those of the modules it hands the scaler
            for path in sorted(self.helper_modules()):
                local = _analysed(self.ctx.project, path, type(self))
                if local.refused is not None:
                    raise Refused(f"{_shown(path, self.ctx.path)} would take the scaler and cannot migrate: "
                                  f"{_quoted(local.refused)}")

    def as_initializer(self, uses: Dict[str, list]) -> None:
        """The module that initializes apex: the scaler is created there, and handed to the
        functions of other modules of the run that scale losses or save apex's state."""
        models_only = [f for f in uses[_INITIALIZE] if self.without_optimizers(f.site.call)]
        training = [f for f in uses[_INITIALIZE] if f not in models_only]
        if not training:
            raise Refused("amp.initialize is given no optimizer in this module, so there is no training to migrate")
        if not uses[_SCALE_LOSS] and all(not found for name, found in uses.items() if name != _INITIALIZE):
            # a library's optimizer helper: a class of another module of the run scales (alone, for
            # that class's plan, it is the one asking)
            self.scaled_elsewhere = self.scaling_class_of_the_run()
        cast = [self.model_only(finding) for finding in models_only]
        again = self.reinitializations(training)
        training = [f for f in training if f not in again]
        self.dropped = {id(statement) for statement, kept, _ in cast if not kept} | {
            id(self.statement_of(f.site.call)) for f in again}
        if len(training) == 2:
            self.initialize(training[0], *self.either_initialization(*training))
        elif len(training) > 2:
            raise Refused("amp.initialize is called more than twice with optimizers in this module")
        else:
            self.initialize(training[0])
        replaced = {id(n) for n in ast.walk(self.replaced)}
        for statement, kept, names in cast:
            self.models.update(names)
            if id(statement) not in replaced:
                self.replace_statement(statement, kept)
        for finding in again:
            self.replace_statement(self.statement_of(finding.site.call), [])
        self.models |= self.model_wrappers()
        helpers = self.hand_scaler_to_helpers()
        if self.scaled_elsewhere is not None:
            if helpers:
                raise Refused("amp.initialize is for both a class of another module that creates its own scaler "
                              "and functions of other modules that would take this module's: pass it by hand")
            self.note(f"amp.initialize (line {training[0].line}) goes without a scaler in its place: "
                      f"{self.scaled_elsewhere}, which scales the losses, creates its own; every other "
                      "amp.initialize of the models it trains must go too")
            return
        if not uses[_SCALE_LOSS] and not any(_scales(self.ctx.project, path) for path in helpers):
            raise Refused("amp.scale_loss is not used in the module that calls amp.initialize"
                          + (" nor in the functions of the run it hands the scaler" if helpers else ""))

    def unregister(self, statement: ast.stmt, call: ast.AST) -> None:
        """`amp.register_half_function(torch, "einsum")`, or an edit of apex's op lists
        (`amp.lists.functional_overrides.FP32_FUNCS.remove("softmax")`): the statement goes."""
        if not (isinstance(statement, ast.Expr) and statement.value is call):
            raise Refused(f"the change of apex's op lists on line {call.lineno} is not a statement of its own")
        self.undone.add(id(statement))
        self.registrations.append(statement.lineno)

    def check_every_use_is_handled(self, findings, group: str) -> None:
        """Every read of a name of the group migrated (apex.amp or apex.fp16_utils) is one the
        migration rewrites: a use it cannot see (a noqa, an unselected code, `amp` passed as a
        value) would keep apex alive."""
        handled = {id(chain_root(f.site.node)) for f in findings}
        for finding in findings:
            binding = finding.site.binding
            qualname = getattr(binding, "qualname", None) or ""
            statement = getattr(binding, "statement", None)
            held = self.parents.get(id(statement)) if statement is not None else None
            if getattr(binding, "probed", False) or isinstance(held, ast.Try) and (
                    self.imports_amp(held) or not raising_guard(held)):
                self.undo_probe(statement)  # else the fix's clean-up of imports takes amp out of the `try`
            for use in getattr(binding, "uses", ()):
                if id(use) in handled:
                    continue
                parent = self.parents.get(id(use))
                reaches_amp = (qualname + ".").startswith(group) or (
                    isinstance(parent, ast.Attribute) and f"apex.{parent.attr}." == group)
                check = self.statement_of(use)
                if reaches_amp and self.is_installed_check(check, use):
                    self.undone.add(id(check))
                elif reaches_amp and self.op_list_edit(use) is not None:
                    self.unregister(check, self.op_list_edit(use))
                elif reaches_amp:
                    chain, node = use.id, parent
                    while isinstance(node, ast.Attribute):
                        chain, node = f"{chain}.{node.attr}", self.parents.get(id(node))
                    qualified = qualname + chain[len(use.id):]  # `amp.scale_loss` or `apex.amp.scale_loss`
                    if any(qualified == name or qualified.startswith(name + ".") for name in _HANDLED):
                        raise Refused(f"{chain} (line {use.lineno}) is left as it is (a noqa comment or an "
                                      "unselected code), so the module would still need apex")
                    if chain != use.id:
                        raise Refused(f"{chain} (line {use.lineno}) is apex's own state or API, which has no "
                                      "native counterpart the fix can write")
                    raise Refused(f"apex is used on line {use.lineno} in a way the fix does not rewrite")

    def undo_probe(self, statement: ast.stmt) -> None:
        """`try: from apex import amp / except ImportError: amp = None` goes with the migration."""
        probe = self.parents.get(id(statement))
        if self.flag_probe(probe) is not None:
            return  # undo_flag_probes' work
        if isinstance(probe, ast.Try) and self.imports_amp(probe):
            self.undone.add(id(probe))
        elif isinstance(probe, ast.Try) and self.imports_amp(statement) and self.probes_apex(probe):
            self.undone.add(id(statement))  # the probe stays for the rest of apex it imports
        else:
            raise Refused(f"the import of apex on line {statement.lineno} is in a `try` that does more than import it")

    @staticmethod
    def probes_apex(probe: ast.Try) -> bool:
        """`try: from apex import amp / from apex.parallel import DDP / has_apex = True / except
        ImportError: has_apex = False`: imports of apex and constant flags, nothing else, so the
        flag still says whether (the rest of) apex is installed without the import of amp. A
        probe of a part of apex inside it (FARM's `try: from apex.parallel import ... except
        AttributeError:`) lets an ImportError through to the outer handler: it is one of them."""
        def quiet(s: ast.stmt) -> bool:
            return isinstance(s, (ast.Pass, ast.Raise)) or only_tells(s) or isinstance(s, ast.Assign) and isinstance(
                s.value, ast.Constant) and all(isinstance(t, ast.Name) for t in s.targets) or isinstance(
                s, ast.Try) and _Migration.probes_apex(s) and all(
                isinstance(h.type, ast.Name) and h.type.id not in _CATCHES_IMPORT_ERROR for h in s.handlers)
        imports = [s for s in probe.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        return not probe.orelse and not probe.finalbody and all(
            (s.module or "").split(".")[0] == "apex" if isinstance(s, ast.ImportFrom)
            else all(a.name.split(".")[0] == "apex" for a in s.names) for s in imports) and all(
            quiet(s) for s in probe.body if s not in imports) and all(quiet(s) for h in probe.handlers for s in h.body)

    def undo_flag_probes(self) -> None:
        """`use_amp = True / try: from apex import amp / except: use_amp = False`, or the flag
        set in the `try` itself: the flag said whether apex is installed; native AMP always is,
        so the `try` goes and the flag keeps the value it had when apex was there."""
        for node in ast.walk(self.tree):
            probe = self.flag_probe(node)
            if probe is None:
                continue
            flags, kept = probe
            if kept:
                self.replace_statement(node, [self.source.segment(s) for s in kept])
            else:
                self.undone.add(id(node))
            self.note(f"{', '.join(sorted(flags))} no longer turns off where apex is not installed: native AMP is "
                      "always there")

    def flag_probe(self, node: ast.AST) -> Optional[Tuple[Set[str], List[ast.stmt]]]:
        """The flags a `try` that imports apex AMP sets, and the assignments of them in its
        body; None if it is not such a probe."""
        if not (isinstance(node, ast.Try) and id(node) in self.places and node.body and node.handlers
                and not node.orelse and not node.finalbody):
            return None

        def constant(statement: ast.stmt) -> bool:
            return isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) and all(
                isinstance(t, ast.Name) for t in statement.targets)

        imports = [s for s in node.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        kept = [s for s in node.body if s not in imports]
        if not imports or not all(self.imports_amp(s) for s in imports) or not all(constant(s) for s in kept) \
                or node.body[:len(imports)] != imports:
            return None
        flags = {t.id for s in kept for t in s.targets}
        for statement in (s for handler in node.handlers for s in handler.body):
            if constant(statement):
                flags.update(t.id for t in statement.targets)
            elif not (isinstance(statement, (ast.Pass, ast.Raise)) or isinstance(statement, ast.Expr)
                      and isinstance(statement.value, (ast.Call, ast.Constant))):
                return None
        imported = {a.asname or a.name.split(".")[0] for s in imports for a in s.names}
        return (flags - imported, kept) if flags - imported else None

    def op_list_edit(self, use: ast.Name) -> Optional[ast.Call]:
        """`amp.lists.<module>.<FP16_FUNCS, FP32_FUNCS ...>.<append, remove ...>(...)`: the call."""
        node, chain = self.parents.get(id(use)), []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            function, node = node, self.parents.get(id(node))
        if len(chain) == 4 and chain[0] == "lists" and chain[2].endswith("_FUNCS") and chain[3] in (
                "append", "remove", "extend", "insert") and isinstance(node, ast.Call) and node.func is function:
            return node
        return None

    @staticmethod
    def is_installed_check(statement: ast.stmt, use: ast.Name) -> bool:
        """`if amp is None: raise ...` or `assert amp is not None, ...`: the check that apex is
        installed, which goes with it."""
        if isinstance(statement, ast.Assert):
            test = statement.test
            return isinstance(test, ast.Compare) and test.left is use and len(test.ops) == 1 and isinstance(
                test.ops[0], ast.IsNot) and _literal(test.comparators[0]) is None or test is use
        test = statement.test if isinstance(statement, ast.If) else None
        return (isinstance(test, ast.Compare) and test.left is use and isinstance(test.ops[0], ast.Is)
                and len(test.ops) == 1 and _literal(test.comparators[0]) is None
                or isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is use) \
            and not statement.orelse and all(isinstance(s, ast.Raise) for s in statement.body)

    # FP16_Optimizer(optimizer, ...) -> the scaler ---------------------------------------------
    def migrate_fp16_optimizer(self, uses: Dict[str, list]) -> None:
        """`optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)` with
        `optimizer.backward(loss)`: the same migration, once the model is no longer halved."""
        if len(uses[_FP16_OPTIMIZER]) != 1:
            raise Refused("FP16_Optimizer is not created exactly once in this module")
        finding = uses[_FP16_OPTIMIZER][0]
        call = finding.site.call
        statement = self.statement_of(call)
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        wrapped = _argument(call, 0, "init_optimizer")
        if target is None or statement.value is not call or None in (dotted_name(target), dotted_name(wrapped)):
            raise Refused(f"FP16_Optimizer (line {finding.line}) does not wrap an optimizer named in one assignment")
        self.optimizers = {dotted_name(target), dotted_name(wrapped)}
        keywords = {k.arg: k.value for k in call.keywords}
        if len(call.args) > 1 or set(keywords) - set(_FP16_OPTIMIZER_KEYWORDS):
            raise Refused(f"FP16_Optimizer's arguments (line {finding.line}) have no native counterpart")
        dynamic = _literal(keywords.get("dynamic_loss_scale", ast.Constant(False)))
        if not isinstance(dynamic, bool):
            raise Refused("FP16_Optimizer's dynamic_loss_scale= is not a literal")
        static = keywords.get("static_loss_scale")
        if not dynamic and static is not None and not _is_number(_literal(static)):
            raise Refused("FP16_Optimizer's static_loss_scale= is not a number")
        # apex's own default is 1.0
        written = "1.0" if static is None else self.source.segment(static)
        scaler_keywords = [] if dynamic else [self.static_scale(written)]
        self.models = set()
        for half in uses[_NETWORK_TO_HALF]:
            converted = self.statement_of(half.site.call)
            if not (isinstance(converted, ast.Assign) and len(converted.targets) == 1
                    and converted.value is half.site.call and len(half.site.call.args) == 1
                    and dotted_name(converted.targets[0]) == dotted_name(half.site.call.args[0]) is not None):
                raise Refused(f"network_to_half (line {half.line}) is not `model = network_to_half(model)`")
            self.models.add(dotted_name(converted.targets[0]))
            self.undone.add(id(converted))
        self.models |= self.trained_models()
        if not self.models:
            raise Refused("the model FP16_Optimizer's optimizer trains is not found in this module")
        self.refuse_half_precision_and_optimizer_state()
        self.enabled = True
        kept = [] if dotted_name(target) == dotted_name(wrapped) else [
            f"{self.source.segment(target)} = {self.source.segment(wrapped)}"]
        self.create_scaler(finding, statement, [], scaler_keywords, kept)
        torch = self.torch(finding)
        for call in self.optimizer_calls("backward"):
            statement = self.statement_of(call)
            if not (isinstance(statement, ast.Expr) and statement.value is call and len(call.args) == 1
                    and not call.keywords):
                raise Refused(f"optimizer.backward (line {call.lineno}) is not `optimizer.backward(loss)`")
            self.scaled_backward(statement, call.args[0], "()", finding)
        if not self.backward_statements:
            raise Refused("FP16_Optimizer's optimizer.backward(loss) is not used in this module")
        for call in self.optimizer_calls("clip_master_grads"):
            if not call.args or any(isinstance(a, ast.Starred) for a in call.args):
                raise Refused(f"optimizer.clip_master_grads (line {call.lineno}) is not given its max norm")
            optimizer = self.source.segment(call.func.value)
            arguments = self.source.text[self.source.span(call.args[0])[0]:self.source.span(call)[1]]
            self.edits.append(TextEdit(*self.source.span(call), f"{torch}.nn.utils.clip_grad_norm_((p for group in "
                                       f'{optimizer}.param_groups for p in group["params"]), {arguments}'))
        self.wrap_forward_passes()
        self.steps()
        if self.optimizer_calls("state_dict") or self.optimizer_calls("load_state_dict"):
            self.note("checkpoints written by FP16_Optimizer.state_dict() hold fp32 master weights and its "
                      "loss scaler: the optimizer's state_dict() does not; save scaler.state_dict() with it")

    def optimizer_calls(self, method: str) -> List[ast.Call]:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == method and dotted_name(n.func.value) in self.optimizers]

    def trained_models(self) -> Set[str]:
        """`model` of `optimizer = torch.optim.SGD(model.parameters(), ...)`, for the wrapped optimizer."""
        models = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and dotted_name(node.targets[0]) in self.optimizers \
                    and isinstance(node.value, ast.Call) and node.value.args:
                first = node.value.args[0]
                if isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) \
                        and first.func.attr == "parameters" and dotted_name(first.func.value):
                    models.add(dotted_name(first.func.value))
        return models

    def refuse_half_precision_and_optimizer_state(self) -> None:
        """Autocast needs fp32 weights and inputs; FP16_Optimizer's own state has no counterpart."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and (
                    node.attr == "half" or dotted_name(node) in ("torch.half", "torch.float16")):
                raise Refused(f"tensors are made half precision on line {node.lineno}: autocast needs fp32 ones")
            if isinstance(node, ast.Attribute) and node.attr in _FP16_OPTIMIZER_STATE \
                    and dotted_name(node.value) in self.optimizers:
                raise Refused(f"FP16_Optimizer's {node.attr} (line {node.lineno}) has no native counterpart")

    # amp.initialize -> the scaler ------------------------------------------------------------
    def reinitializations(self, training: list) -> list:
        """`self.model, self.optimizer = amp.initialize(...)` again, word for word, in another
        method of the class whose __init__ initializes (before loading a checkpoint, as apex's
        docs asked): the scaler __init__ creates serves it, so it goes."""
        first = training[0] if training else None
        method = self.scope_of(first.site.node) if first else None
        if not (isinstance(method, ast.FunctionDef) and method.name == "__init__"
                and isinstance(self.parents.get(id(method)), ast.ClassDef)):
            return []
        statement = self.statement_of(first.site.call)
        again = [f for f in training[1:] if ast.dump(self.statement_of(f.site.call)) == ast.dump(statement)
                 and self.parents.get(id(self.scope_of(f.site.node))) is self.parents.get(id(method))
                 and isinstance(self.statement_of(f.site.call), ast.Assign)
                 and all(dotted_name(t) and dotted_name(t).startswith("self.")
                         for t in _elements(self.statement_of(f.site.call).targets[0]))]
        return again

    @staticmethod
    def without_optimizers(call: ast.Call) -> bool:
        """`amp.initialize(teacher)` or `amp.initialize(teacher, [])`: a model run, not trained."""
        optimizers = _argument(call, 1, "optimizers")
        return optimizers is None or isinstance(optimizers, (ast.List, ast.Tuple)) and not optimizers.elts

    def model_only(self, finding) -> Tuple[ast.stmt, List[str], List[str]]:
        """A model apex only casts (a distillation teacher): the initialization goes (the lines
        that replace it, if its result had other names), the model runs under autocast where it
        is called in a forward pass (its names)."""
        call = finding.site.call
        statement = self.statement_of(call)
        model = _argument(call, 0, "models")
        names = [dotted_name(m) for m in _elements(model)]
        if None in names or len(call.args) > 2 or set(k.arg for k in call.keywords) - set(_INITIALIZE_KEYWORDS) \
                or set(k.arg for k in call.keywords) & {"loss_scale", "num_losses", "min_loss_scale", "max_loss_scale"}:
            raise Refused(f"amp.initialize without an optimizer (line {finding.line}) is not given its models by name "
                          "and an opt level alone")
        if isinstance(statement, ast.Expr) and statement.value is call:
            kept = []
        elif isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1:
            target = statement.targets[0]
            if _argument(call, 1, "optimizers") is not None:  # (models, []) comes back
                parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 else None
                if parts is None or not (isinstance(parts[1], ast.Name) and parts[1].id == "_"):
                    raise Refused(f"the empty optimizer list amp.initialize returns (line {finding.line}) is used")
                target = parts[0]
            same = dotted_name(target) is not None and [dotted_name(target)] == names or [
                dotted_name(e) for e in _elements(target)] == names and isinstance(target, type(model))
            kept = [] if same else [f"{self.source.segment(target)} = {self.source.segment(model)}"]
        else:
            raise Refused(f"the result of amp.initialize (line {finding.line}) is not simply assigned")
        level = _literal(next((k.value for k in call.keywords if k.arg == "opt_level"), ast.Constant("O1")))
        if level != "O1":
            self.note(f"{', '.join(names)}, which apex cast for opt_level {level if level is not ... else 'O2/O3'} "
                      f"(line {finding.line}), keeps fp32 weights: autocast casts its operations where it runs")
        return statement, kept, names

    def either_initialization(self, first, second) -> Tuple[ast.If, ast.IfExp]:
        """`if c: <initialize(..., loss_scale=a)> else: <the same, loss_scale=b>` is one
        initialization with `loss_scale=a if c else b`: the `if` and that loss scale."""
        statements = [self.statement_of(f.site.call) for f in (first, second)]
        owner = self.places[id(statements[0])].owner
        calls = [f.site.call for f in (first, second)]
        scales = [next((k.value for k in call.keywords if k.arg == "loss_scale"), None) for call in calls]

        def without_scale(statement: ast.stmt, call: ast.Call) -> str:
            targets = getattr(statement, "targets", [])
            return ast.dump(ast.Module(body=[*targets, call.func, *call.args,
                                             *(k for k in call.keywords if k.arg != "loss_scale")], type_ignores=[]))

        if not (isinstance(owner, ast.If) and owner.body == statements[:1] and owner.orelse == statements[1:]
                and None not in scales and len({without_scale(*pair) for pair in zip(statements, calls)}) == 1):
            raise Refused("amp.initialize is called twice in this module, other than in the two branches of an `if` "
                          "that chooses its loss scale")
        choice = ast.IfExp(test=owner.test, body=scales[0], orelse=scales[1])
        return owner, ast.copy_location(choice, owner)

    def initialize(self, finding, replaced: Optional[ast.If] = None, loss_scale: Optional[ast.AST] = None) -> None:
        call = finding.site.call
        statement = self.statement_of(call)
        if not (isinstance(statement, ast.Expr) and statement.value is call
                or isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
            raise Refused(f"the result of amp.initialize (line {finding.line}) is not simply assigned")
        if len(call.args) > 2 or any(k.arg is None for k in call.keywords):
            raise Refused("amp.initialize takes more positional arguments than the model and optimizer")
        model, optimizer = _argument(call, 0, "models"), _argument(call, 1, "optimizers")
        # the names that stand for them from here on: amp.initialize returns the same objects, and
        # one GradScaler serves every model, optimizer and loss (num_losses= and loss_id= go)
        models, optimizers = _elements(model), _elements(optimizer)
        self.models, self.optimizers = {dotted_name(m) for m in models}, {dotted_name(o) for o in optimizers}
        if not models or not optimizers or None in self.models | self.optimizers:
            raise Refused(f"amp.initialize (line {finding.line}) is not given its models and optimizers by name")
        keywords = {k.arg: k.value for k in call.keywords}
        if loss_scale is not None:
            keywords["loss_scale"] = loss_scale
        for name in keywords:
            if name not in _INITIALIZE_KEYWORDS:
                raise Refused(f"amp.initialize's {name}= has no native counterpart")
        opt_level = keywords.get("opt_level")
        level = "O1" if opt_level is None else _literal(opt_level)
        enabled = keywords.get("enabled")
        flag = True if enabled is None else _literal(enabled)
        conditions = []
        if level is ...:
            conditions.append(f'{self.source.segment(opt_level)} != "O0"')
            self.note("opt_level O2/O3 (fp16 master weights) become autocast, which keeps fp32 weights")
        elif level not in ("O0", "O1", "O2", "O3"):
            raise Refused(f"opt_level={level!r} is not an apex opt level")
        elif level in ("O2", "O3"):
            self.note(f"opt_level {level} (fp16 master weights) became autocast, which keeps fp32 weights")
        if flag is ...:
            conditions.insert(0, self.source.segment(enabled))
            self.add_switch(enabled, statement)
        self.enabled = not (level == "O0" or flag is False)
        scaler_keywords = self.loss_scale(keywords, level)
        kept = []
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            # one name for what apex returns: the models alone when the optimizers are None
            if dotted_name(optimizer) is None:
                raise Refused("amp.initialize's result is assigned to one name, and its optimizers are not a name")
            model_text, optimizer_text = self.source.segment(model), self.source.segment(optimizer)
            kept.append(f"{statement.targets[0].id} = {model_text} if {optimizer_text} is None else "
                        f"({model_text}, {optimizer_text})")
        elif isinstance(statement, ast.Assign):
            targets = statement.targets[0]
            elements = targets.elts if isinstance(targets, (ast.Tuple, ast.List)) else [targets]
            if len(elements) != 2:
                raise Refused("amp.initialize's result is unpacked into something else than (models, optimizers)")
            names = [[dotted_name(e) for e in _elements(element)] for element in elements]
            if None in names[0] + names[1] or [len(names[0]), len(names[1])] != [len(models), len(optimizers)] \
                    or any(isinstance(e, (ast.Tuple, ast.List)) != isinstance(a, (ast.Tuple, ast.List))
                           for e, a in zip(elements, (model, optimizer))):
                raise Refused("amp.initialize's result is unpacked into something else than (models, optimizers)")
            if names != [[dotted_name(m) for m in models], [dotted_name(o) for o in optimizers]]:
                self.models.update(names[0])
                self.optimizers.update(names[1])
                kept.append(f"{self.source.segment(targets)} = "
                            f"{self.source.segment(model)}, {self.source.segment(optimizer)}")
        self.create_scaler(finding, replaced or statement, conditions, scaler_keywords, kept)

    def loss_scale(self, keywords: Dict[str, ast.AST], level: object) -> List[str]:
        """The scaler's keywords for apex's loss scale: dynamic (GradScaler's own schedule, which
        is apex's: 2**16, halved on overflow, doubled after 2000 clean steps), a fixed number
        (a scaler that starts there and never grows), or either, chosen at run time from the
        value the script passes (`loss_scale=args.loss_scale`)."""
        value = keywords.get("loss_scale")
        ceiling = keywords.get("max_loss_scale")
        floor = keywords.get("min_loss_scale")
        start = _DYNAMIC_START
        if ceiling is not None:
            top = _number(ceiling)
            if not _is_number(top):
                raise Refused("amp.initialize's max_loss_scale= is not a number")
            start = self.source.segment(ceiling) if top < 2 ** 16 else start
            self.note(f"apex never let the loss scale grow past {self.source.segment(ceiling)}; "
                      "GradScaler has no ceiling")
        if floor is not None:
            self.note(f"apex never let the loss scale fall below {self.source.segment(floor)}; "
                      "GradScaler has no floor")
        dynamic = [] if start == _DYNAMIC_START else [f"init_scale={start}"]
        if value is None:  # the opt level's default: dynamic, but O3's (and O0's) fixed 1.0
            return [self.static_scale("1.0")] if level == "O3" else dynamic
        literal = _literal(value)
        if literal in ("dynamic", None):
            return dynamic
        if _is_number(_number(value)):
            return [self.static_scale(self.source.segment(value))]
        # chosen at run time: `"dynamic" if args.dynamic else args.scale`, or the value itself
        if isinstance(value, ast.IfExp) and {_literal(value.body), _literal(value.orelse)} & {"dynamic", None}:
            condition = self.source.segment(value.test)
            fixed = value.orelse if _literal(value.body) in ("dynamic", None) else value.body
            if _literal(value.body) not in ("dynamic", None):
                condition = f"not ({condition})"
            if _literal(fixed) in ("dynamic", None):
                return dynamic
            number = self.source.segment(fixed)
            number = number if _is_number(_literal(fixed)) else f"float({number})"
        elif dotted_name(value) is not None:
            condition = f'{self.source.segment(value)} in (None, "dynamic")'
            number = f"float({self.source.segment(value)})"
        else:
            raise Refused("loss_scale= is neither \"dynamic\", a number nor a name or `a if c else b` of them")
        self.note(f"when the loss scale is a number, {_FIXED_SCALE}")
        return [f"init_scale={start} if {condition} else {number}",
                f"growth_interval=2000 if {condition} else {_NEVER}"]

    def static_scale(self, written: str) -> str:
        self.note(f"with a fixed loss scale {_FIXED_SCALE}")
        return f"init_scale={written}, growth_interval={_NEVER}"

    def create_scaler(self, finding, statement: ast.stmt, conditions: List[str], scaler_keywords: List[str],
                      kept: List[str]) -> None:
        """The scaler replaces the initializing statement (with the `if` that guards it)."""
        guard, whole = self.guard(statement)
        if guard is not None:
            conditions.insert(0, self.source.segment(guard.test))
            self.add_switch(guard.test, statement)
        self.dynamic = len(conditions) > 0

        def keywords(conditions: List[str]) -> str:
            # autocast takes the scaler's is_enabled() and only a bool (`--fp16 1` is an int)
            conditions = [c if self.evidently_bool(c) else f"bool({c})" for c in dict.fromkeys(conditions)]
            enabled = ["enabled=" + " and ".join(
                f"({c})" if len(conditions) > 1 and " " in c or ":=" in c else c for c in conditions)]
            return ", ".join(scaler_keywords + (enabled if conditions else []))

        self.init = finding
        self.init_statement = guard if guard is not None else statement
        self.replaced = guard if whole else statement
        self.scaler = self.place_scaler(statement)
        torch = self.torch(finding) if self.enabled else "torch"
        created = [f"{self.scaler_name} = {self.spelled('grad_scaler', torch, keywords(conditions))}"] \
            if self.enabled and self.scaled_elsewhere is None else []
        if self.replaced is statement and guard is not None:  # before the `if`, which keeps its other work
            self.own_lines(guard)
            start = self.source.line_start(guard.lineno)
            indent = self.indentation(guard)
            # what the `if` computes before the initialization (`amp_opt_level = ...`) is read
            # where it was: a disabled scaler before the `if`, the scaler in its place
            site = self.places[id(statement)]
            assigned = set().union(*(_stores(s) for s in site.block[:site.index]))
            read = _loads(ast.parse(f"f({keywords(conditions[1:])})"))
            if created and assigned & read:
                before = [f"{self.scaler_name} = {self.spelled('grad_scaler', torch, 'enabled=False')}"]
                kept = [f"{self.scaler_name} = {self.spelled('grad_scaler', torch, keywords(conditions[1:]))}"] + kept
            else:
                before = created
            self.edits.append(TextEdit(start, start, "".join(indent + line + self.source.newline for line in before)))
            self.replace_statement(statement, kept)
        else:
            self.replace_statement(self.replaced, created + kept)

    def evidently_bool(self, condition: str, depth: int = 0) -> bool:
        """The condition is a bool wherever it runs: a comparison, `not`, True/False, `and`/`or`
        of such, an argparse flag of this module (`action="store_true"`), or a name or `self.`
        attribute the module binds to such values only (parameters: annotated `bool` or
        defaulting to True/False)."""
        try:
            node = ast.parse(condition.strip(), mode="eval").body
        except SyntaxError:
            return False
        return self.bool_node(node, depth)

    def bool_node(self, node: ast.AST, depth: int) -> bool:
        if isinstance(node, ast.Compare) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, bool)
        if isinstance(node, ast.BoolOp):
            return all(self.bool_node(v, depth) for v in node.values)
        if isinstance(node, ast.Call):
            return dotted_name(node.func) in ("bool", "isinstance", "hasattr", "callable")
        name = dotted_name(node)
        if name is None or depth > 3:
            return False
        if isinstance(node, ast.Attribute) and node.attr in self.store_true_flags():
            return True
        values = self.values_bound_to(name)
        return bool(values) and all(v is True or v is not None and self.bool_node(v, depth + 1) for v in values)

    def store_true_flags(self) -> Set[str]:
        """The dests of this module's `add_argument(..., action="store_true"/"store_false")`."""
        if self.flags is None:
            self.flags = set()
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "add_argument" and any(k.arg == "action" and _literal(
                            k.value) in ("store_true", "store_false") for k in node.keywords):
                    dest = next((_literal(k.value) for k in node.keywords if k.arg == "dest"), None)
                    options = [_literal(a) for a in node.args if isinstance(_literal(a), str)]
                    long = next((o for o in options if o.startswith("--")), options[0] if options else None)
                    dest = dest if isinstance(dest, str) else long.lstrip("-").replace("-", "_") if long else None
                    if dest:
                        self.flags.add(dest)
        return self.flags

    def values_bound_to(self, name: str) -> list:
        """What the module binds `name` (or `self.name`) to anywhere, any scope: the value nodes,
        True for a parameter annotated `bool` or defaulting to a bool, None where unknown."""
        values: list = []
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                arguments = node.args
                positional = arguments.posonlyargs + arguments.args
                defaults = dict(zip(map(id, positional[len(positional) - len(arguments.defaults):]),
                                    arguments.defaults))
                defaults.update({id(a): d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)
                                 if d is not None})
                for arg in [*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
                    if arg is not None and arg.arg == name:
                        evident = dotted_name(arg.annotation) == "bool" if arg.annotation is not None else \
                            id(arg) in defaults and isinstance(_literal(defaults[id(arg)]), bool)
                        values.append(True if evident else None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With,
                                   ast.NamedExpr, ast.comprehension)):
                targets = node.targets if isinstance(node, ast.Assign) else [
                    i.optional_vars for i in node.items] if isinstance(node, ast.With) else [node.target]
                for target in targets:
                    if target is not None and any(dotted_name(t) == name for t in ast.walk(target)):
                        single = isinstance(node, (ast.Assign, ast.AnnAssign)) and dotted_name(target) == name
                        values.append(node.value if single and node.value is not None else None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == name for a in node.names):
                values.append(None)
        return values

    def add_switch(self, test: ast.AST, statement: ast.stmt) -> None:
        """A condition that enables apex; a parameter of the initializing function also as the
        argument each call of it passes (`use_fp16` is `args.fp16` in the caller that trains)."""
        self.switches.add(ast.dump(test))
        function = self.scope_of(statement)
        owner = self.parents.get(id(function))
        if isinstance(test, ast.Name) and isinstance(function, ast.FunctionDef) and isinstance(owner, ast.ClassDef):
            self.add_attribute_switch(test.id, function, owner)
        if not (isinstance(test, ast.Name) and isinstance(function, ast.FunctionDef) and owner is self.tree):
            return
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        for call in self.calls_of(function):
            if test.id in positional and positional.index(test.id) < len(call.args):
                argument = call.args[positional.index(test.id)]
            else:
                argument = next((k.value for k in call.keywords if k.arg == test.id), None)
            if argument is not None and not isinstance(argument, ast.Starred):
                self.switches.add(ast.dump(argument))

    def add_attribute_switch(self, name: str, method: ast.FunctionDef, owner: ast.ClassDef) -> None:
        """`self.fp16 = fp16` in the method whose parameter `fp16` enables apex: `self.fp16` enables
        it too, where the class never assigns it otherwise."""
        parameters = {a.arg for a in method.args.posonlyargs + method.args.args + method.args.kwonlyargs}
        if name not in parameters:
            return
        kept = [n for n in method.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Attribute) and dotted_name(n.targets[0].value) == "self"
                and isinstance(n.value, ast.Name) and n.value.id == name]
        for statement in kept:
            attribute = statement.targets[0].attr
            stores = [n for n in ast.walk(owner) if isinstance(n, ast.Attribute) and n.attr == attribute
                      and dotted_name(n.value) == "self" and not isinstance(n.ctx, ast.Load)]
            if len(stores) == 1 and any(n is stores[0] for n in ast.walk(statement)):
                self.switches.add(ast.dump(statement.targets[0].__class__(
                    value=ast.Name(id="self", ctx=ast.Load()), attr=attribute, ctx=ast.Load())))

    def replace_statement(self, statement: ast.stmt, lines: List[str]) -> None:
        """Replace a statement by lines of code, or delete it (a block keeps a `pass`)."""
        indent = self.indentation(statement)
        self.own_lines(statement)
        if lines or len(self.places[id(statement)].block) == 1:
            start, end = self.source.span(statement)
            self.edits.append(TextEdit(start, end, (self.source.newline + indent).join(lines) or "pass"))
        else:
            self.edits.append(remove_statement(self.source, statement))

    def guard(self, statement: ast.stmt) -> Tuple[Optional[ast.If], bool]:
        """`if args.fp16:` around the initialization: the scaler is then created always, enabled
        by that condition; in place of the `if` when its body only imports apex for it (or
        converts the model, which the migration undoes), else right before it (a condition
        without side effects reads the same there)."""
        site = self.places[id(statement)]
        owner = site.owner
        if not isinstance(owner, ast.If) or site.block is not owner.body:
            return None, False
        whole = not owner.orelse and all(other is statement or self.imports_amp(other) or id(other) in self.undone
                                         or id(other) in self.dropped for other in owner.body)
        if not whole and not _pure(owner.test):
            raise Refused(f"the `if` around the apex initialization (line {owner.lineno}) does more than "
                          "initialize apex, and its condition may not read the same before it")
        return owner, whole

    def imports_amp(self, statement: ast.stmt) -> bool:
        """An import of apex.amp or apex.fp16_utils, bare or in `try: ... except ImportError:` whose
        handler raises or binds the names to None."""
        if isinstance(statement, ast.ImportFrom):
            return statement.module == "apex" and all(a.name in _APEX_AMP_MODULES for a in statement.names) or (
                statement.module in [f"apex.{m}" for m in _APEX_AMP_MODULES])
        if isinstance(statement, ast.Import):
            return all(a.name in ["apex", *(f"apex.{m}" for m in _APEX_AMP_MODULES)] for a in statement.names)
        if isinstance(statement, ast.Try):
            imported = {a.asname or a.name.split(".")[0] for s in statement.body
                        if isinstance(s, (ast.Import, ast.ImportFrom)) for a in s.names}
            fallbacks = all(isinstance(s, (ast.Raise, ast.Pass)) or isinstance(s, ast.Assign) and _literal(
                s.value) is None and all(isinstance(t, ast.Name) and t.id in imported for t in s.targets)
                or only_tells(s) for h in statement.handlers for s in h.body)
            return fallbacks and not statement.orelse and not statement.finalbody and all(
                self.imports_amp(s) for s in statement.body)
        return False

    def place_scaler(self, statement: ast.stmt) -> _Scaler:
        taken = self.ctx.bound | {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)} | (
            self.ctx.named_in_strings)
        attributes = {n.attr for n in ast.walk(self.tree) if isinstance(n, ast.Attribute)}
        method = self.scope_of(statement)
        owner = self.parents.get(id(method)) if method is not None else None
        # apex used by another method of the initializing one's class (a trainer's training_step)
        elsewhere = isinstance(owner, ast.ClassDef) and any(
            f.site.name in _HELPER_USES_NAMES and self.scope_of(f.site.node) is not method
            and owner in self.enclosing(f.site.node) for f in self.ctx.findings)
        self.shared_by_methods = elsewhere and not any(name.startswith("self.") for name in self.optimizers)
        if any(name.startswith("self.") for name in self.optimizers) or elsewhere:
            if not isinstance(owner, ast.ClassDef):
                raise Refused("amp.initialize works on self outside a method")
            name = next((n for n in _SCALER_NAMES if n not in attributes), None)
            if name is None:
                raise Refused("every attribute name the scaler could take is in use")
            self.scaler_name = f"self.{name}"
            return _Scaler(name, owner)
        name = next((n for n in _SCALER_NAMES if n not in taken), None)
        if name is None:
            raise Refused("every name the scaler could take is in use")
        self.scaler_name = name
        return _Scaler(name, self.scope_of(statement))

    def reach(self, node: ast.AST, what: str) -> str:
        """The scaler's name where `node` runs, or why it is out of reach."""
        scaler = self.scaler
        if self.helper_functions:
            if any(id(f) in self.helper_functions for f in self.enclosing(node)):
                return self.scaler_name
            raise Refused(f"{what} (line {node.lineno}) is outside the functions that take the scaler")
        if self.scaler_name.startswith("self."):
            if not (scaler.home in self.enclosing(node) and self.scope_of(node) is not None):
                raise Refused(f"{what} (line {node.lineno}) is outside the class that initializes apex")
            if self.shared_by_methods:  # created by a method: the others run only from it, after it
                self.called_only_after_creation(node, what)
            return self.scaler_name
        scopes = self.enclosing(node)
        after = (node.lineno, node.col_offset) > (self.init_statement.lineno, self.init_statement.col_offset)
        if scaler.home is None:  # a global: any code after it, and any function, reads it
            if after or any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for s in scopes):
                return scaler.name
            raise Refused(f"{what} (line {node.lineno}) runs before amp.initialize")
        if scaler.home in scopes:
            if after:
                return scaler.name
            raise Refused(f"{what} (line {node.lineno}) runs before amp.initialize")
        function = self.scope_of(node)
        if isinstance(function, ast.FunctionDef) and self.parents.get(id(function)) is self.tree:
            if isinstance(scaler.home, ast.FunctionDef) and any(
                    call.lineno < node.lineno for call in self.calls_of(scaler.home) if call in ast.walk(function)):
                self.scaler.returned_to[id(function)] = function
            else:
                self.scaler.passed_to[id(function)] = function
            return scaler.name
        raise Refused(f"{what} (line {node.lineno}) is out of reach of the scaler amp.initialize would become")

    # amp.master_params, amp.state_dict, amp.load_state_dict -------------------------------------
    def master_params(self, finding) -> None:
        call = finding.site.call
        optimizer = _argument(call, 0, "optimizer")
        if dotted_name(optimizer) is None or len(call.args) + len(call.keywords) != 1:
            raise Refused(f"amp.master_params (line {finding.line}) is not given one optimizer by name")
        text = self.source.segment(optimizer)
        parameters = f'(p for group in {text}.param_groups for p in group["params"])'
        self.edits.append(TextEdit(*self.source.span(call), parameters))

    def state(self, finding) -> None:
        call = finding.site.call
        if not self.enabled:
            raise Refused(f"apex's state (line {finding.line}) has no counterpart when AMP is off")
        scaler = self.reach(call, "amp's state")
        method = finding.site.name.rsplit(".", 1)[1]
        start = self.source.span(call.func)[0]
        self.edits.append(TextEdit(start, self.source.span(call.func)[1], f"{scaler}.{method}"))
        self.note("checkpoints written by apex hold amp.state_dict()'s loss scaler, which "
                  "scaler.load_state_dict() does not read: resume them without it")
