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
"""
from __future__ import annotations

import ast
import io
import os
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from ..edits import Source, open_paren, remove_statement
from ..resolve import chain_root, dotted_name
from ..table import Grade, Plan, TextEdit, plan
from ._torch import torch_name

_INITIALIZE, _SCALE_LOSS = "apex.amp.initialize", "apex.amp.scale_loss"
_MASTER_PARAMS, _STATE_DICT = "apex.amp.master_params", "apex.amp.state_dict"
_LOAD_STATE_DICT = "apex.amp.load_state_dict"
_TO_PYTHON_FLOAT = "apex.fp16_utils.to_python_float"
_FP16_OPTIMIZER, _NETWORK_TO_HALF = "apex.fp16_utils.FP16_Optimizer", "apex.fp16_utils.network_to_half"
_REGISTRY = ("apex.amp.register_half_function", "apex.amp.register_float_function",
             "apex.amp.register_promote_function")
# apex's decorators: under O1 (apex/amp/amp.py, _decorator_helper and wrap.make_cast_wrapper at 22.04-dev)
_DECORATORS = ("apex.amp.half_function", "apex.amp.float_function", "apex.amp.promote_function")
_HANDLED = {_INITIALIZE, _SCALE_LOSS, _MASTER_PARAMS, _STATE_DICT, _LOAD_STATE_DICT, _FP16_OPTIMIZER, _NETWORK_TO_HALF,
            *_REGISTRY}
_OP_LISTS_NOTE = ("autocast has op lists of its own, which they cannot change (torch's Autocast Op Reference says "
                  "which ops run in float16 and which in float32): cast the inputs of an op whose precision matters")
_APEX_AMP_PREFIXES = ("apex.amp.", "apex.fp16_utils.")
_HELPER_USES = ("scale_loss", "state_dict", "load_state_dict", "master_params")  # what a helper module does for apex
_HELPER_USES_NAMES = tuple(f"apex.amp.{name}" for name in _HELPER_USES)
_FP16_OPTIMIZER_KEYWORDS = ("init_optimizer", "static_loss_scale", "dynamic_loss_scale", "verbose")
# FP16_Optimizer's own state: code reading it needs a person
_FP16_OPTIMIZER_STATE = ("loss_scale", "overflow", "optimizer", "loss_scaler", "fp16_groups", "fp32_from_fp16_groups",
                         "fp32_from_fp32_groups", "update_master_grads", "inspect_master_grad_data",
                         "dynamic_loss_scale", "first_closure_call_this_step", "clip_fp32_grads")
# the amp.initialize keywords with a native counterpart; the others (cast_model_type, master_weights,
# min_loss_scale, ...) leave the code to a person. Autocast keeps batch norm in fp32 itself.
_INITIALIZE_KEYWORDS = ("models", "optimizers", "opt_level", "enabled", "loss_scale", "num_losses",
                        "keep_batchnorm_fp32", "verbosity", "min_loss_scale", "max_loss_scale")
_APEX_AMP_MODULES = ("amp", "fp16_utils")
_DYNAMIC_START = "2.0**16"  # apex's dynamic loss scale starts there, as GradScaler does
_NEVER = "2**31 - 1"  # a growth interval no run reaches: the scale of a fixed apex loss scale stays
_FIXED_SCALE = ("apex applied the steps whose gradients overflowed; the scaler keeps the scale (it never grows) "
                "but skips such a step and halves it")
_SCALER_NAMES = ("scaler", "grad_scaler", "amp_scaler")
_GRAD_READERS = ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "master_params", "clip_master_grads")
NOT_MIGRATED = "apex AMP not migrated"


class Refused(Exception):
    """The module's apex AMP code is not the pattern the migration knows: say why."""


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


@dataclass
class _Local:
    """One module's migration planned on the text the run found: why not, or the plan's facts."""

    refused: Optional[str]
    migration: Optional["_Migration"] = None


def _analysed(project, path: Path) -> _Local:
    """The migration of another module of the run, planned alone (once per run), with the
    floors and codes the run fixes it with."""
    from ..fixer import Round

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
        migration = _Migration(ctx, alone=True)
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


def _amp_functions(project, path: Path) -> Set[str]:
    """The module-level functions of a module of the run that use apex's amp (`amp.scale_loss`,
    `amp.state_dict()` ...), as the run found it."""
    tree = _amp_tree(project, path)
    if tree is None:
        return set()
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and any(
        isinstance(n, ast.Attribute) and n.attr in _HELPER_USES and dotted_name(n.value) in ("amp", "apex.amp")
        for n in ast.walk(node))}


def _scales(project, path: Path) -> bool:
    tree = _amp_tree(project, path)
    return tree is not None and any(isinstance(n, ast.Attribute) and n.attr == "scale_loss" for n in ast.walk(tree))


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


def _argument(call: ast.Call, position: int, name: str) -> Optional[ast.AST]:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal(node: Optional[ast.AST]) -> object:
    return node.value if isinstance(node, ast.Constant) else ...


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def _number(node: Optional[ast.AST]) -> object:
    """The value of a number written as one or as arithmetic on numbers (`2.**17`, `2 ** 24`);
    ... for anything else."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _number(node.left), _number(node.right)
        if _is_number(left) and _is_number(right) and not (isinstance(node.op, ast.Pow) and abs(right) > 64) \
                and not (isinstance(node.op, ast.Div) and right == 0):
            return _ARITHMETIC[type(node.op)](left, right)
        return ...
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_number(_number(node.operand)):
        return -_number(node.operand)
    value = _literal(node)
    return value if _is_number(value) else ...


def _pure(node: ast.AST) -> bool:
    """An expression that reads names, attributes, constant keys and literals, and compares
    them: evaluated twice in a row, it gives the same value and does nothing else."""
    allowed = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Subscript, ast.Load,
               ast.cmpop, ast.boolop, ast.Not, ast.Tuple)
    nodes = list(ast.walk(node))
    return all(isinstance(n, allowed) for n in nodes) and all(
        isinstance(n.slice, ast.Constant) for n in nodes if isinstance(n, ast.Subscript))


def _steps_or_backward(statement: ast.stmt) -> bool:
    """The statement runs a backward pass or an optimizer step (apex's scaled one included)."""
    for n in ast.walk(statement):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "step"):
            return True
        if isinstance(n, ast.withitem) and "scale_loss" in (dotted_name(getattr(n.context_expr, "func", None)) or ""):
            return True
    return False


def _elements(node: Optional[ast.AST]) -> List[ast.AST]:
    """The models (or optimizers) amp.initialize is given: one, or a list or tuple of them."""
    if node is None:
        return []
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else [node]


def _stores(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _loads(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _chains(node: ast.AST) -> Iterator[str]:
    for n in ast.walk(node):
        text = dotted_name(n)
        if text:
            yield text


@dataclass
class _Site:
    """A statement of a block: where it is, for edits and for the data flow."""

    statement: ast.stmt
    block: List[ast.stmt]
    index: int
    owner: Optional[ast.AST]  # the statement or module the block belongs to


@dataclass
class _Scaler:
    """Where the scaler lives: a local or global name, or an attribute of self."""

    name: str
    home: Optional[ast.AST]  # the function or class (for self.<name>) that creates it, None: the module
    passed_to: Dict[int, ast.FunctionDef] = field(default_factory=dict)  # functions it becomes a parameter of
    returned_to: Dict[int, ast.FunctionDef] = field(default_factory=dict)  # callers of home it is returned to


class _Migration:
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
        self.switches: Set[str] = set()  # the conditions that enable apex (ast dumps): the scaler's
        self.undone: Set[int] = set()  # statements the migration deletes (converting the model to half)
        self.imports: Set[str] = set()
        self.registrations: List[int] = []  # the lines that changed apex's op lists
        self.dropped: Set[int] = set()  # initializations of models without an optimizer, which go
        self.shared_by_methods = False  # the scaler is an attribute only because methods of a class share it
        self.alone = alone  # planned for another module's plan: the modules it hands the scaler are not checked
        self.helper_functions: Dict[int, ast.FunctionDef] = {}  # (a helper module's) functions given the scaler
        self.helper_calls: Dict[Tuple[Path, str], List[ast.Call]] = {}  # calls of other modules' such functions

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
        uses: Dict[str, list] = {name: [] for name in _HANDLED if name.startswith(group)}
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
        if not uses[_INITIALIZE]:
            if self.ctx.project is None or self.ctx.path is None:
                raise Refused("amp.initialize is not called in this module, so the scaler has no place to be created")
            self.as_helper(uses)
        else:
            self.as_initializer(uses)
        for finding in uses[_SCALE_LOSS]:
            self.scale_loss(finding)
        self.wrap_forward_passes()
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
                local = _analysed(self.ctx.project, path)
                if local.refused is not None:
                    raise Refused(f"{_shown(path, self.ctx.path)} would take the scaler and cannot migrate: "
                                  f"{_quoted(local.refused)}")

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
        self.own_lines(branch) if not self.is_elif(branch) else None
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

    def as_initializer(self, uses: Dict[str, list]) -> None:
        """The module that initializes apex: the scaler is created there, and handed to the
        functions of other modules of the run that scale losses or save apex's state."""
        native = next((n for n in ast.walk(self.tree) if isinstance(n, ast.Attribute) and n.attr in (
            "GradScaler", "NativeScaler") and (dotted_name(n) or "").startswith(("torch.", "timm."))), None)
        if native is not None:
            raise Refused(f"the module also has a native AMP path ({dotted_name(native)} on line {native.lineno}) "
                          "beside apex's: make apex's choice take it and delete apex's branches by hand (dropping "
                          "them alone would leave that choice without mixed precision, or without a backward)")
        models_only = [f for f in uses[_INITIALIZE] if self.without_optimizers(f.site.call)]
        training = [f for f in uses[_INITIALIZE] if f not in models_only]
        if not training:
            raise Refused("amp.initialize is given no optimizer in this module, so there is no training to migrate")
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
        if not uses[_SCALE_LOSS] and not any(_scales(self.ctx.project, path) for path in helpers):
            raise Refused("amp.scale_loss is not used in the module that calls amp.initialize"
                          + (" nor in the functions of the run it hands the scaler" if helpers else ""))

    # the scaler across the modules of a run -------------------------------------------------
    def hand_scaler_to_helpers(self) -> Set[Path]:
        """Each call of a function imported from another module of the run that uses apex AMP
        passes the scaler (`do_train(..., scaler=scaler)`): the modules of those functions."""
        project, modules = self.ctx.project, set()
        self.helper_calls: Dict[Tuple[Path, str], List[ast.Call]] = {}
        if project is None or self.ctx.path is None:
            return modules
        me = Path(self.ctx.path).resolve()
        for node in self.tree.body:
            if not isinstance(node, ast.ImportFrom) or any(a.name == "*" for a in node.names):
                continue
            module = "." * (node.level or 0) + (node.module or "")
            path = project.module_path(me, module)
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
                    scaler = self.reach(call, f"the call of {local}()")
                    at = max((self.source.span(a)[1] for a in [*call.args, *call.keywords]), default=None)
                    if at is None:
                        at = open_paren(self.source, call)
                        if at is None:
                            raise Refused(f"the call of {local}() on line {call.lineno} is not one the fix can extend")
                        self.edits.append(TextEdit(at, at, f"{parameter}={scaler}"))
                    else:
                        self.edits.append(TextEdit(at, at, f", {parameter}={scaler}"))
                self.helper_calls[(path, alias.name)] = calls
                modules.add(path)
        return modules

    def as_helper(self, uses: Dict[str, list]) -> None:
        """A module whose functions scale losses (or save apex's state) for another module of
        the run that initializes apex (`do_train` of `engine/trainer.py`): each such function
        takes the scaler as a parameter, its callers pass it; their models, optimizers and the
        conditions that enable apex are the parameters those callers give them."""
        project, me = self.ctx.project, Path(self.ctx.path).resolve()
        functions: Dict[int, ast.FunctionDef] = {}
        for finding in (f for found in uses.values() for f in found):
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
                local = _analysed(project, caller)
                if local.refused is not None:
                    raise Refused(f"{function.name}() is called from {_shown(caller, me)}, which cannot migrate: "
                                  f"{_quoted(local.refused)}")
                if not self.alone:
                    for other in local.migration.helper_modules():
                        other_local = _analysed(project, other)
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
            if getattr(binding, "probed", False):
                self.undo_probe(binding.statement)
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
                    if f"apex.amp.{chain.split('.')[1:2][0] if '.' in chain else ''}" in _HANDLED:
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
        if not (isinstance(probe, ast.Try) and self.imports_amp(probe)):
            raise Refused(f"the import of apex on line {statement.lineno} is in a `try` that does more than import it")
        self.undone.add(id(probe))

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
            enabled = ["enabled=" + " and ".join(
                f"({c})" if len(conditions) > 1 and " " in c or ":=" in c else c for c in conditions)]
            return ", ".join(scaler_keywords + (enabled if conditions else []))

        self.init = finding
        self.init_statement = guard if guard is not None else statement
        self.replaced = guard if whole else statement
        self.scaler = self.place_scaler(statement)
        torch = self.torch(finding) if self.enabled else "torch"
        created = [f"{self.scaler_name} = {self.spelled('grad_scaler', torch, keywords(conditions))}"] \
            if self.enabled else []
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

    def add_switch(self, test: ast.AST, statement: ast.stmt) -> None:
        """A condition that enables apex; a parameter of the initializing function also as the
        argument each call of it passes (`use_fp16` is `args.fp16` in the caller that trains)."""
        self.switches.add(ast.dump(test))
        function = self.scope_of(statement)
        if not (isinstance(test, ast.Name) and isinstance(function, ast.FunctionDef)
                and self.parents.get(id(function)) is self.tree):
            return
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        for call in self.calls_of(function):
            if test.id in positional and positional.index(test.id) < len(call.args):
                argument = call.args[positional.index(test.id)]
            else:
                argument = next((k.value for k in call.keywords if k.arg == test.id), None)
            if argument is not None and not isinstance(argument, ast.Starred):
                self.switches.add(ast.dump(argument))

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
                for h in statement.handlers for s in h.body)
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
        if getattr(method, "name", "") in self.ctx.named_in_strings:
            raise Refused(f"{method.name}() is named in a string: pass the scaler by hand")

    def calls_of(self, function: ast.FunctionDef) -> List[ast.Call]:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == function.name]

    # with amp.scale_loss(...) -> scaler.scale(loss).backward() and the forward pass under autocast
    def scale_loss(self, finding) -> None:
        call = finding.site.call
        statement = self.statement_of(call)
        if not (isinstance(statement, (ast.With, ast.AsyncWith)) and len(statement.items) == 1
                and statement.items[0].context_expr is call):
            raise Refused(f"amp.scale_loss (line {finding.line}) is not the only item of a `with`")
        scaled = statement.items[0].optional_vars
        body = statement.body
        backward = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
        if not (isinstance(scaled, ast.Name) and isinstance(backward, ast.Call)
                and isinstance(backward.func, ast.Attribute) and backward.func.attr == "backward"
                and isinstance(backward.func.value, ast.Name) and backward.func.value.id == scaled.id):
            raise Refused(f"the body of amp.scale_loss (line {finding.line}) does more than scaled_loss.backward()")
        loss, optimizer = _argument(call, 0, "loss"), _argument(call, 1, "optimizers")
        if loss is None or not _elements(optimizer) or any(
                dotted_name(o) not in self.optimizers for o in _elements(optimizer)):
            raise Refused(f"amp.scale_loss (line {finding.line}) scales for another optimizer than amp.initialize's")
        for keyword in call.keywords:
            if keyword.arg in ("loss", "optimizers", "loss_id"):
                continue  # one scaler serves every loss: apex's loss ids go
            if keyword.arg == "delay_unscale":  # the micro-steps of gradient accumulation
                if _literal(keyword.value) is not False:
                    self.note("delay_unscale= went: the scaler scales every micro-batch by the same scale and "
                              "unscales the accumulated gradients once, at the optimizer step")
                continue
            raise Refused(f"amp.scale_loss's {keyword.arg}= (line {finding.line}) needs a person")
        if self.uses_model(loss):
            raise Refused(f"the loss of amp.scale_loss (line {finding.line}) is computed in the `with` itself")
        arguments = self.source.text[self.source.span(backward.func)[1]:self.source.span(backward)[1]]
        self.scaled_backward(statement, loss, arguments, finding)

    def scaled_backward(self, statement: ast.stmt, loss: ast.AST, arguments: str, finding) -> None:
        """The statement that runs the scaled backward becomes `scaler.scale(loss).backward()`,
        and the forward pass that computed the loss runs under autocast."""
        anchor = self.with_fallback(statement, loss, arguments)
        self.own_lines(anchor)
        loss_text = self.source.segment(loss)
        if self.enabled:
            scaler = self.reach(anchor, "the scaled backward")
            text = f"{scaler}.scale({loss_text}).backward{arguments}"
            self.forward_pass(anchor, loss, finding)
        else:
            atomic = isinstance(loss, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
            text = f"{loss_text if atomic else f'({loss_text})'}.backward{arguments}"
        self.rewrite_with_comments(anchor, text, pivot=statement.end_lineno)
        self.backward_statements.append(anchor)

    def with_fallback(self, statement: ast.stmt, loss: ast.AST, arguments: str) -> ast.stmt:
        """`if args.fp16: <with amp.scale_loss> else: loss.backward()` is one scaled backward
        when the condition is the one amp.initialize was guarded by."""
        site = self.places[id(statement)]
        owner = site.owner
        if not (isinstance(owner, ast.If) and owner.body == [statement] and len(owner.orelse) == 1):
            return statement
        other = owner.orelse[0]
        call = other.value if isinstance(other, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
                and self.source.segment(call.func.value) == self.source.segment(loss)
                and self.source.text[self.source.span(call.func)[1]:self.source.span(call)[1]] == arguments):
            raise Refused(f"the `else` of amp.scale_loss's `if` (line {owner.lineno}) does more than loss.backward()")
        if ast.dump(owner.test) not in self.switches:
            raise Refused(f"the `if` of the scaled backward (line {owner.lineno}) tests another condition than "
                          "the one that enables apex")
        return owner

    def rewrite_with_comments(self, statement: ast.stmt, text: str, pivot: int) -> None:
        """Replace a compound statement by one line of code, keeping its comments: those at the
        end of its code lines at the end of the new one, those on lines of their own (and the
        more deeply indented comment lines right after it, which were about its last block)
        above the new line when they came before line `pivot`, below it otherwise."""
        indent = self.indentation(statement)
        start = self.source.line_start(statement.lineno)
        last = statement.end_lineno
        while last < len(self.source.lines) and self.source.line(last + 1).startswith(indent + " ") \
                and self.source.line(last + 1).strip().startswith("#"):
            last += 1
        end = self.line_end(last)
        above, trailing, below = [], [], []
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.source.text[start:end]).readline):
                if token.type == tokenize.COMMENT:
                    own_line = not token.line[:token.start[1]].strip()
                    lineno = statement.lineno + token.start[0] - 1
                    (trailing if not own_line else above if lineno < pivot else below).append(token.string)
        except (tokenize.TokenError, SyntaxError):
            raise Refused(f"the comments of line {statement.lineno} cannot be read") from None
        newline = self.source.newline
        lines = [indent + c for c in above] + [indent + text + "".join("  " + c for c in trailing)] + [
            indent + c for c in below]
        self.edits.append(TextEdit(start, end, newline.join(lines)))

    def forward_pass(self, anchor: ast.stmt, loss: ast.AST, finding) -> None:
        """Find the statements the loss depends on, from the first one that uses the model, in
        the block of the backward or a block around it; they go under autocast (once every
        backward is known, so that one forward pass of several losses is wrapped once)."""
        model_roots = {name.split(".")[0] for name in self.models}
        needed = _loads(loss) - model_roots
        at = anchor
        while True:  # the block of the backward, then the blocks around it (`if args.fp16:`, `with`)
            site = self.places[id(at)]
            dependencies, boundary = [], None
            for statement in reversed(site.block[:site.index]):
                if statement is self.init_statement:
                    break
                if _steps_or_backward(statement):  # an earlier step: a GAN's discriminator's
                    boundary = boundary or statement
                    continue
                stored = _stores(statement) & needed
                if stored:
                    dependencies.append(statement)
                    if isinstance(statement, (ast.Assign, ast.AnnAssign)):  # the value the loss reads: earlier
                        needed -= stored  # ones of the name (a first forward pass) are not its
                    needed |= _loads(statement) - model_roots
            uses_model = [s for s in dependencies if self.uses_model(s)]
            if uses_model:
                break
            if not isinstance(site.owner, (ast.If, ast.With, ast.AsyncWith, ast.Try)) or id(site.owner) not in \
                    self.places or site.block is not getattr(site.owner, "body", None) and not isinstance(
                    site.owner, ast.If):
                raise Refused(f"the loss scaled on line {finding.line} is computed where the fix cannot see "
                              "which statements are its forward pass (no call of the model before it in its function)")
            at = site.owner
        index = site.block.index
        after = [s for s in uses_model if boundary is None or index(s) > index(boundary)]
        first, last = (after or uses_model)[-1], dependencies[0]
        if boundary is not None and index(first) < index(boundary) < index(last):
            raise Refused(f"the forward pass of the loss scaled on line {finding.line} is interleaved with "
                          f"another backward or step (line {boundary.lineno})")
        self.forward_regions.append((site, index(first), index(last), finding))

    def wrap_forward_passes(self) -> None:
        """Each forward pass under autocast; those that overlap in a block (two losses of one
        forward pass) as one."""
        by_block: Dict[int, list] = {}
        for region in self.forward_regions:
            by_block.setdefault(id(region[0].block), []).append(region)
        for regions in by_block.values():
            regions.sort(key=lambda r: r[1])
            merged = [list(regions[0])]
            for region in regions[1:]:
                if region[1] <= merged[-1][2]:
                    merged[-1][2] = max(merged[-1][2], region[2])
                else:
                    merged.append(list(region))
            for site, first_index, last_index, finding in merged:
                self.wrap(site, site.block[first_index:last_index + 1], finding)

    def wrap(self, site: _Site, region: List[ast.stmt], finding) -> None:
        for statement in region:
            if _steps_or_backward(statement):
                raise Refused(f"the forward pass before line {finding.line} also steps or runs backward")
            for node in ast.walk(statement):
                if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno != node.end_lineno:
                    raise Refused(f"the forward pass before line {finding.line} holds a multi-line string")
        first, last = region[0], region[-1]
        self.own_lines(first)
        self.own_lines(last)
        indent, unit = self.indentation(first), self.unit(site)
        scaler = self.reach(first, "the forward pass")
        torch = self.torch(finding)
        enabled = f"enabled={scaler}.is_enabled()" if self.dynamic else ""
        header = f"{indent}with {self.spelled('autocast', torch, enabled)}:{self.source.newline}"
        start = self.source.line_start(first.lineno)
        end = self.line_end(last.end_lineno)
        lines = self.source.text[start:end].splitlines(True)
        self.edits.append(TextEdit(start, end, header + "".join(
            unit + line if line.strip() else line for line in lines)))

    def uses_model(self, node: ast.AST, depth: int = 0) -> bool:
        """The model is read, called through an attribute (`model.module(x)`), the module it is
        a part of is called (`model(x)` runs the `model.top_model` apex was given), or a
        function or method of this module that does (`self.batch_outputs(batch)`)."""
        prefixes = tuple(name + "." for name in self.models)
        owners = {".".join(parts[:end]) for parts in (name.split(".") for name in self.models)
                  for end in range(1, len(parts))}
        if self.models & set(_chains(node)):
            return True
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                if (dotted_name(n.func) or "").startswith(prefixes) or dotted_name(n.func) in owners:
                    return True
                function = self.local_function(n) if depth < 2 else None
                if function is not None and any(self.uses_model(s, depth + 1) for s in function.body):
                    return True
        return False

    def model_wrappers(self) -> Set[str]:
        """Names the models are wrapped or moved under (`self._pytorch_model = DDP(self.model)`,
        `net = model.cuda()`): calling them runs the model."""
        wrappers: Set[str] = set()
        while True:
            known = self.models | wrappers
            for node in ast.walk(self.tree):
                if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and dotted_name(node.targets[0])):
                    continue
                value = node.value
                wrapped = dotted_name(value) in known or isinstance(value, ast.Call) and (
                    value.args and dotted_name(value.args[0]) in known
                    and ("Parallel" in (dotted_name(value.func) or "") or dotted_name(value.func) == "DDP")
                    or isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "cuda")
                    and dotted_name(value.func.value) in known)
                if wrapped:
                    wrappers.add(dotted_name(node.targets[0]))
            if wrappers <= known - self.models or not wrappers - known:
                return wrappers - self.models

    # optimizer.step() -> scaler.step(optimizer); scaler.update() ------------------------------
    def steps(self) -> None:
        """Every `optimizer.step()` of the functions that scale losses; and the gradient reads
        between the backward and the step see unscaled gradients, as they did with apex."""
        scopes = {id(self.scope_of(statement)) for statement in self.backward_statements}
        if self.scaler_name.startswith("self."):  # and the methods that call a method that scales
            scaling = {self.scope_of(statement).name for statement in self.backward_statements
                       if isinstance(self.scope_of(statement), ast.FunctionDef)}
            scopes |= {id(self.scope_of(n)) for n in ast.walk(self.scaler.home) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Attribute) and n.func.attr in scaling
                       and dotted_name(n.func.value) == "self"}
        steps = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step" \
                    and dotted_name(node.func.value) in self.optimizers:
                statement = self.statement_of(node)
                scope = self.scope_of(node)
                if id(scope) not in scopes:
                    if self.local_to(chain_root(node.func.value).id, scope):
                        continue  # another function's own optimizer
                    raise Refused(f"the optimizer step on line {node.lineno} is away from the scaled backward")
                if not (isinstance(statement, ast.Expr) and statement.value is node) or node.args or node.keywords:
                    raise Refused(f"the optimizer step on line {node.lineno} is not a plain call")
                steps.append(statement)
        if not steps:
            raise Refused("no optimizer.step() follows the scaled backward")
        if not self.enabled:
            return
        # one update() per iteration: after the last optimizer step of a block (a GAN steps its
        # discriminator, then its generator), once every optimizer of it has stepped
        last = {id(self.places[id(step)].block): step for step in steps}
        for step in steps:
            self.own_lines(step)
            scaler = self.reach(step, "the optimizer step")
            indent = self.indentation(step)
            optimizer = self.source.segment(step.value.func.value)
            self.edits.append(TextEdit(*self.source.span(step), f"{scaler}.step({optimizer})"))
            if last[id(self.places[id(step)].block)] is step:
                self.edits.append(TextEdit(self.line_end(step.end_lineno), self.line_end(step.end_lineno),
                                           f"{self.source.newline}{indent}{scaler}.update()"))
            self.unscale_before_reads(step, scaler, optimizer)

    def unscale_before_reads(self, step: ast.stmt, scaler: str, optimizer: str) -> None:
        place = self.places[id(step)]
        backward = [b for b in self.backward_statements if self.places[id(b)].block is place.block]
        # the reads on the way to the step: in its block after the last statement that runs a
        # scaled backward (in an `if` of its own, maybe), then in the blocks of the `if`s around
        # it, and in the block that runs the backward when what follows steps on every path;
        # not in a loop's block that steps on some iterations only (no_reads_before's part)
        reads, at = [], step
        while True:
            site = self.places[id(at)]
            before = site.block[:site.index]
            since = max((i + 1 for i, statement in enumerate(before) if self.runs_backward(statement)), default=0)
            if since and at is not step and not self.always_steps([at], step):
                break  # the reads after the backward of that block run on micro-batches without a step
            region = before[since:]
            self.covered.update(id(n) for statement in region for n in ast.walk(statement))
            reads[:0] = [statement for statement in region if self.reads_gradients(statement)][:1]
            if since or not isinstance(site.owner, (ast.If, ast.With)) or id(site.owner) not in self.places:
                break
            at = site.owner
        unscaled = bool(reads)
        if reads:
            statement = reads[0]
            self.own_lines(statement)
            start = self.source.line_start(statement.lineno)
            self.edits.append(TextEdit(start, start, f"{self.indentation(statement)}{scaler}.unscale_("
                                                     f"{optimizer}){self.source.newline}"))
        moved = [m for anchor in self.backward_statements if anchor not in backward
                 for m in self.no_reads_before(anchor, step)]
        if moved:
            self.moves.append((step, moved, None if unscaled else f"{scaler}.unscale_({optimizer})"))

    def always_steps(self, block: List[ast.stmt], step: ast.stmt) -> bool:
        """The statements step the optimizer of `step` on every path through them (`if a:
        optimizer.step() else: optimizer.step()`)."""
        text = ast.dump(step)
        for statement in block:
            if ast.dump(statement) == text:
                return True
            if isinstance(statement, ast.If) and self.always_steps(statement.body, step) \
                    and self.always_steps(statement.orelse, step):
                return True
        return False

    def runs_backward(self, statement: ast.stmt) -> bool:
        """The statement runs a scaled backward, itself or through a method of the class that
        holds the scaler (`self._training_step(...)`)."""
        scaling = {self.scope_of(b).name for b in self.backward_statements
                   if isinstance(self.scope_of(b), ast.FunctionDef)} if self.scaler_name.startswith("self.") else set()
        return any(any(node is b for b in self.backward_statements) or isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr in scaling and dotted_name(node.func.value) == "self"
            for node in ast.walk(statement))

    def no_reads_before(self, anchor: ast.stmt, step: ast.stmt) -> List[Tuple[ast.stmt, List[str]]]:
        """From a scaled backward to the optimizer step (out of the backward's blocks, into the
        one of the step), nothing reads the gradients, as those reads would be scaled; but
        clipping, which apex let run after every backward, moves to the step (with the
        conditions it ran under): returned with them."""
        at, owners, pending, between = anchor, [], [], []
        while id(at) in self.places:
            site = self.places[id(at)]
            for statement in site.block[site.index + 1:]:
                if step in list(ast.walk(statement)):  # the backward leads to this step: its reads count
                    every_time = statement is step  # the step follows each backward: any plain read may move
                    stuck = next((moved for moved, _ in pending if not (
                        self.only_clips(moved) or every_time and self.plain(moved))), None)
                    if stuck is not None:
                        raise Refused(f"gradients are read on line {stuck.lineno}, between the scaled backward and "
                                      f"the optimizer step (line {step.lineno}) but away from the step: the scaler "
                                      "unscales them once, at the step (apex did on every backward), so there they "
                                      "are scaled")
                    return [(moved, self.conditions_between(moved, owners[level:], step, between, every_time))
                            for moved, level in pending]
                if id(statement) in self.covered:
                    continue  # read after the scaler unscales, on the way to the step
                if self.reads_gradients(statement):
                    pending.append((statement, len(owners)))
                else:
                    between.append(statement)
            if not isinstance(site.owner, ast.stmt) or isinstance(
                    site.owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return []  # the step is in another function (one that calls this one)
            owners.append(site.owner)
            at = site.owner
        return []

    @staticmethod
    def plain(statement: ast.stmt) -> bool:
        """Assignments, calls and `if`s of them: moved later in the same pass, the statement
        runs as often, with the same values, when nothing between touches its names."""
        return isinstance(statement, (ast.Assign, ast.AugAssign, ast.Expr, ast.If)) and not any(
            isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await, ast.Raise,
                           ast.FunctionDef, ast.Lambda, ast.NamedExpr)) for n in ast.walk(statement))

    def only_clips(self, statement: ast.stmt) -> bool:
        """`clip_grad_norm_(...)`, `norm = clip_grad_norm_(...)` or `if <condition>:` over them:
        clipping alone."""
        if isinstance(statement, ast.If) and not statement.orelse and _pure(statement.test):
            return all(self.only_clips(s) for s in statement.body)
        simple = isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)
        call = statement.value if isinstance(statement, ast.Expr) or simple else None
        name = getattr(getattr(call, "func", None), "attr", None) or getattr(getattr(call, "func", None), "id", "")
        # torch's clip_grad_*, or a clipper object given the parameters (`grad_clipper.step(amp.master_params(o))`)
        return isinstance(call, ast.Call) and (name.startswith("clip_grad_") or "clip" in (
            dotted_name(call.func) or "").lower() and any(dotted_name(getattr(a, "func", None)) in (
                "amp.master_params", "apex.amp.master_params") for a in call.args))

    def conditions_between(self, moved: ast.stmt, owners: List[ast.AST], step: ast.stmt,
                           between: List[ast.stmt], every_time: bool) -> List[str]:
        """The conditions clipping ran under, re-read at the step: only `if`s without side
        effects, whose names nothing between the two places assigns or reads what clipping
        assigns (a loop around it, or anything else, would make it run another number of
        times). Where the step runs after every backward the move changes nothing."""
        conditions = []
        child: ast.AST = moved
        for owner in owners:
            if not (isinstance(owner, ast.If) and _pure(owner.test) and id(child) in self.places
                    and self.places[id(child)].block is owner.body):
                raise Refused(f"the gradient clipping of line {moved.lineno} runs after every scaled backward, and "
                              f"the `{type(owner).__name__.lower()}` around it (line {owner.lineno}) keeps the fix "
                              "from moving it to the optimizer step, where the scaler unscales the gradients")
            conditions.insert(0, self.source.segment(owner.test))
            child = owner
        read = _loads(moved) | {t for o in owners for t in _loads(o.test)}
        if any(_stores(statement) & read for statement in between):
            raise Refused(f"the gradient clipping of line {moved.lineno} reads names assigned before the optimizer "
                          f"step (line {step.lineno}), where it would move")
        if any(_loads(statement) & _stores(moved) for statement in between):
            raise Refused(f"what the gradient clipping of line {moved.lineno} assigns is read before the optimizer "
                          f"step (line {step.lineno}), where it would move")
        if every_time:
            return conditions
        if _stores(moved):
            raise Refused(f"the gradient clipping of line {moved.lineno} assigns a name, which would keep its old "
                          "value on the micro-batches without an optimizer step if it moved to the step")
        self.note(f"the gradient clipping of line {moved.lineno} ran after every backward (apex unscaled the "
                  "gradients each time); the scaler unscales them once, at the optimizer step, so it moved there: "
                  "with gradient accumulation it now clips the accumulated gradients once per step instead of "
                  "their running sum after every micro-batch")
        return conditions

    def move_clipping(self) -> None:
        """Clipping moved to the step: deleted where it was, written (with the rewrites inside
        it and its conditions) right before the step, after the scaler unscales."""
        for step, moved, unscale in self.moves:
            self.own_lines(step)
            indent, unit = self.indentation(step), self.unit(self.places[id(step)])
            lines = [indent + unscale] if unscale else []
            for statement, conditions in moved:
                self.own_lines(statement)
                start, end = self.source.span(statement)
                inside = [e for e in self.edits if start <= e.start and e.end <= end]
                text = self.source.text[start:end]
                for edit in sorted(inside, key=lambda e: e.start, reverse=True):
                    text = text[:edit.start - start] + edit.text + text[edit.end - start:]
                self.edits = [e for e in self.edits if e not in inside]
                self.replace_statement(statement, [])
                depth = indent
                for condition in conditions:
                    lines.append(f"{depth}if {condition}:")
                    depth += unit
                old = self.indentation(statement)
                first, *rest = text.splitlines()
                lines.append(depth + first)
                lines.extend(depth + line[len(old):] if line.startswith(old) else line for line in rest)
            at = self.source.line_start(step.lineno)
            self.edits.append(TextEdit(at, at, "".join(line + self.source.newline for line in lines)))

    @staticmethod
    def local_to(name: str, function: Optional[ast.AST]) -> bool:
        """A name a function assigns itself, so an object of its own (a parameter may be the
        very optimizer the migration rewires)."""
        if function is None or isinstance(function, ast.Lambda):
            return False
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        return name not in parameters and name in _stores(function) and not any(
            isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(function))

    def reads_gradients(self, statement: ast.AST, depth: int = 0) -> bool:
        """The statement reads gradients: `.grad`, clipping, apex's master parameters, or a
        function or method of this module that does (`self.rescale_gradients()`)."""
        for node in ast.walk(statement):
            if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in _GRAD_READERS:
                    return True
                function = self.local_function(node)
                if function is not None and depth < 3 and any(
                        self.reads_gradients(s, depth + 1) for s in function.body):
                    return True
        return False

    def local_function(self, call: ast.Call) -> Optional[ast.FunctionDef]:
        """The module-level function `f(...)` calls, or the method `self.m(...)` calls in its class."""
        if isinstance(call.func, ast.Name):
            return next((s for s in self.tree.body if isinstance(s, ast.FunctionDef) and s.name == call.func.id), None)
        if isinstance(call.func, ast.Attribute) and dotted_name(call.func.value) == "self":
            owner = next((n for n in self.enclosing(call) if isinstance(n, ast.ClassDef)), None)
            return next((s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == call.func.attr),
                        None) if owner is not None else None
        return None

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

    def return_scaler(self) -> None:
        """The function that initializes apex returns the scaler too, to the callers that train
        (`model, optimizer, scheduler = init_optimizer_and_amp(...)`): only when every return
        of it is a tuple after the scaler exists, and every reference to it unpacks one."""
        if not self.scaler.returned_to:
            return
        home = self.scaler.home
        name = self.scaler.name
        if self.parents.get(id(home)) is not self.tree or home.name in self.ctx.named_in_strings \
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
        when every reference to such a function is a call from the initializing function."""
        for function in self.scaler.passed_to.values():
            arguments = function.args
            if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs \
                    or not arguments.args:
                raise Refused(f"{function.name}() takes *args, keyword-only or no parameters: pass the scaler by hand")
            calls = []
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Name) and node.id == function.name:
                    call = self.parents.get(id(node))
                    if not (isinstance(call, ast.Call) and call.func is node
                            and self.scaler.home in self.enclosing(call) and call.lineno > self.init_statement.lineno):
                        raise Refused(f"{function.name}() is used elsewhere than after amp.initialize in "
                                      "the function that calls it: pass the scaler by hand")
                    calls.append(call)
            if not calls or function.name in self.ctx.named_in_strings:
                raise Refused(f"{function.name}() is not called where the scaler is created")
            if self.ctx.exported(function.name):
                raise Refused(f"{function.name}() would take the scaler as a parameter, and another module of the "
                              "run imports it: pass the scaler by hand")
            last = arguments.args[-1]
            default = arguments.defaults[-1] if arguments.defaults else None
            end = max(self.source.span(last)[1], self.source.span(default)[1] if default else 0)
            parameter = self.scaler.name + ("=None" if default else "")
            self.edits.append(TextEdit(end, end, f", {parameter}"))
            for call in calls:
                listed = [*call.args, *call.keywords]
                if listed:
                    at = max(self.source.span(a)[1] for a in listed)
                    self.edits.append(TextEdit(at, at, f", {self.scaler.name}={self.scaler.name}"))
                else:
                    at = open_paren(self.source, call)
                    if at is None:
                        raise Refused(f"the call of {function.name}() is not one the fix can extend")
                    self.edits.append(TextEdit(at, at, f"{self.scaler.name}={self.scaler.name}"))
