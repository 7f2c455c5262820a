"""The optimizer steps and the gradients read on the way to them: `scaler.step`, one `update()` per
block, `unscale_` before the first read, and the clipping apex let run after every backward moved
to the step (or the reason it cannot be)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import List, Optional, Set, Tuple

from ..resolve import chain_root, dotted_name
from ..table import TextEdit
from ._amp_common import Refused, _GRAD_READERS, _loads, _pure, _stores
from ._amp_norms import returns_gradient_norm


_TORCH_CLIPPING = {f"torch.nn.utils{module}.{name}" for module in ("", ".clip_grad")
                   for name in ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_")}


def _threshold(call: ast.Call) -> Optional[ast.AST]:
    """The max_norm (or clip_value) given to torch's clipping."""
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg in ("max_norm", "clip_value")), None)


def _lines(lines: List[int]) -> str:
    lines = sorted(set(lines))
    return f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"


def _calls_method(node: ast.AST, names: Set[str]) -> bool:
    """`self.<one of names>(...)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names \
        and dotted_name(node.func.value) == "self"


class StepsAndReads:
    """The optimizer steps, and the gradient reads between the scaled backward and them. A part of the
    migration (apex_amp._Migration), which holds the state these methods share."""

    # optimizer.step() -> scaler.step(optimizer); scaler.update() ------------------------------
    def steps(self) -> None:
        """Every `optimizer.step()` of the functions that scale losses; and the gradient reads
        between the backward and the step see unscaled gradients, as they did with apex."""
        scopes = {id(self.scope_of(statement)) for statement in self.backward_statements}
        scaling = self.scaling_methods()  # and the methods that call a method that scales
        if scaling:
            scopes |= {id(self.scope_of(n)) for n in ast.walk(self.scaler.home) if _calls_method(n, scaling)}
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
        scaling = self.scaling_methods()
        return any(any(node is b for b in self.backward_statements) or _calls_method(node, scaling)
                   for node in ast.walk(statement))

    def scaling_methods(self) -> Set[str]:
        """The methods of the class holding the scaler (`self.scaler`) that run a scaled backward."""
        if not self.scaler_name.startswith("self."):
            return set()
        return {self.scope_of(b).name for b in self.backward_statements
                if isinstance(self.scope_of(b), ast.FunctionDef)}

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
                    # on micro-batches torch's clipping and norms of the gradients stay, given the scale;
                    # the rest moves to the step
                    in_place = [moved for moved, _ in pending if not every_time and self.scalable_read(moved)]
                    stuck = next((moved for moved, _ in pending if moved not in in_place and not (
                        self.only_clips(moved) or every_time and self.plain(moved))), None)
                    if stuck is not None:
                        raise Refused(f"gradients are read on line {stuck.lineno}, between the scaled backward and "
                                      f"the optimizer step (line {step.lineno}) but away from the step: the scaler "
                                      "unscales them once, at the step (apex did on every backward), so there they "
                                      "are scaled")
                    self.read_scaled(in_place)
                    return [(moved, self.conditions_between(moved, owners[level:], step, between, every_time))
                            for moved, level in pending if moved not in in_place]
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

    def scalable_read(self, statement: ast.stmt) -> bool:
        """torch's clipping or a norm of the gradients, alone, assigned to a name, or under `if
        <condition>:` (`else:` one of them too): reads that can be given the scale."""
        if isinstance(statement, ast.If):
            return _pure(statement.test) and all(self.scalable_read(s) for s in statement.body + statement.orelse)
        return self.torch_clipping(statement) or self.gradient_norm(statement) is not None

    def torch_clipping(self, statement: ast.stmt) -> bool:
        """torch's `clip_grad_norm_(...)`/`clip_grad_value_(...)`, alone or assigned to a name:
        clipping whose threshold can be given the scale."""
        simple = isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)
        call = statement.value if isinstance(statement, ast.Expr) or simple else None
        return isinstance(call, ast.Call) and self.qualified(call.func) in _TORCH_CLIPPING \
            and _threshold(call) is not None and not any(isinstance(a, ast.Starred) for a in call.args) \
            and all(k.arg is not None for k in call.keywords)

    def gradient_norm(self, statement: ast.stmt) -> Optional[ast.Call]:
        """`norm = get_grad_norm(amp.master_params(optimizer))`, of a function of this module or
        one it imports by name whose body returns a norm of the gradients (_amp_norms): the call."""
        if not (isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)
                and isinstance(statement.value, ast.Call) and isinstance(statement.value.func, ast.Name)):
            return None
        call = statement.value
        given = [a for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Call)
                 and dotted_name(a.func) in ("amp.master_params", "apex.amp.master_params")]
        function = self.module_function(call.func.id)
        if len(given) == 1 and function is not None and returns_gradient_norm(function, call, given[0]):
            return call
        return None

    def module_function(self, name: str) -> Optional[ast.FunctionDef]:
        """The module-level function `name` means here: defined in this module, or imported by
        name from a module on disk (`from utils import get_grad_norm`), bound once."""
        bindings = [n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name == name] + [n for n in ast.walk(self.tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                                           and any((a.asname or a.name).split(".")[0] == name for a in n.names)]
        if len(bindings) != 1 or name in _stores(self.tree) or any(
                isinstance(n, ast.arg) and n.arg == name for n in ast.walk(self.tree)):
            return None  # bound again somewhere, a parameter included
        binding = bindings[0]
        if isinstance(binding, ast.FunctionDef):
            return binding
        if not isinstance(binding, ast.ImportFrom) or self.ctx.path is None or binding not in self.tree.body:
            return None
        from ..project import ProjectImports  # the rules load before the project module
        from ._amp_across import _amp_tree

        project = self.ctx.project if self.ctx.project is not None else ProjectImports([])
        path = project.module_file(Path(self.ctx.path), "." * (binding.level or 0) + (binding.module or ""))
        tree = _amp_tree(project, path) if path is not None else None
        original = next(a.name for a in binding.names if (a.asname or a.name) == name)
        found = [n for n in getattr(tree, "body", []) if isinstance(n, ast.FunctionDef) and n.name == original]
        return found[0] if len(found) == 1 else None

    def qualified(self, node: ast.AST) -> Optional[str]:
        """The dotted name of what `node` names through this module's imports (`nn.utils.x` with
        `from torch import nn`), None when an import binds its root otherwise somewhere else or
        the module assigns it."""
        root, rest = dotted_name(node), ""
        if root is None:
            return None
        if "." in root:
            root, rest = root.split(".", 1)
            rest = "." + rest
        if self.import_meanings is None:
            meanings: dict = {}
            for n in ast.walk(self.tree):
                for alias in getattr(n, "names", []) if isinstance(n, (ast.Import, ast.ImportFrom)) else []:
                    if isinstance(n, ast.ImportFrom):
                        bound, meaning = alias.asname or alias.name, f"{n.module}.{alias.name}" if not n.level else None
                    else:
                        bound = alias.asname or alias.name.split(".")[0]
                        meaning = alias.name if alias.asname else bound
                    meanings.setdefault(bound, set()).add(meaning)
            assigned = _stores(self.tree) | {n.name for n in ast.walk(self.tree) if isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            self.import_meanings = {name: next(iter(m)) for name, m in meanings.items()
                                    if len(m) == 1 and None not in m and name not in assigned}
        base = self.import_meanings.get(root)
        return base + rest if base else None

    def read_scaled(self, statements: List[ast.stmt]) -> None:
        """Clipping and norms after a micro-batch's backward, where the gradients are scaled by
        the scale the scaler will unscale them by at the step: clipping at its threshold times
        the scale clips them as apex clipped the unscaled ones, and a norm, divided by it, is
        theirs (the scale changes only at update(), after the step)."""
        def flattened(statement: ast.stmt) -> List[ast.stmt]:
            if isinstance(statement, ast.If):
                return [s for inner in statement.body + statement.orelse for s in flattened(inner)]
            return [statement]

        reads = [s for statement in statements for s in flattened(statement)]
        clipped, divided = [], []
        for statement in reads:
            clipping, call = self.torch_clipping(statement), statement.value
            scaler = self.reach(statement, "the gradient clipping" if clipping else "the gradient norm")
            if clipping:
                threshold = _threshold(call)
                text = self.source.segment(threshold)
                atomic = isinstance(threshold, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant))
                self.edits.append(TextEdit(*self.source.span(threshold),
                                           f"{text if atomic else f'({text})'} * {scaler}.get_scale()"))
                clipped.append(statement.lineno)
                if not (isinstance(statement, ast.Assign) and self.qualified(call.func).endswith(("norm_", "norm"))):
                    continue
            end = self.source.span(call)[1]
            self.edits.append(TextEdit(end, end, f" / {scaler}.get_scale()"))
            divided.append(statement.lineno)
        if clipped:
            self.note(f"the gradient clipping of {_lines(clipped)} runs after every micro-batch, as with apex; there "
                      "the gradients are still scaled, so it clips them at its threshold times the scale"
                      f"{' and divides the norm it returns by it' if set(clipped) & set(divided) else ''} "
                      "(scaler.get_scale() waits for the GPU)")
        others = sorted(set(divided) - set(clipped))
        if others:
            self.note(f"the gradient norm of {_lines(others)} is read after every micro-batch, as with apex; there "
                      "the gradients are still scaled, so it is divided by the scale "
                      "(scaler.get_scale() waits for the GPU)")

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
