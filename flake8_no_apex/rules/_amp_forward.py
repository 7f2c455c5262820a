"""The scaled backward and its forward pass: `with amp.scale_loss(...)` becomes
`scaler.scale(loss).backward()`, and the statements the loss depends on, from the first that runs
a model, go under autocast."""
from __future__ import annotations

import ast
import io
import tokenize
from typing import Dict, List, Set

from ..resolve import dotted_name
from ..table import TextEdit
from ._amp_common import (
    _FLOAT16, Refused, _Site, _argument, _chains, _elements, _literal, _loads, _steps_or_backward, _stores)

_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + ((ast.Match,) if hasattr(ast, "Match") else ())


class ForwardAndBackward:
    """The scaled backward of each `amp.scale_loss`, and its forward pass under autocast. A part of the
    migration (apex_amp._Migration), which holds the state these methods share."""

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
        for element in _elements(optimizer):
            if dotted_name(element) not in self.optimizers:
                self.optimizer_parameter(element, call, finding)
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

    def optimizer_parameter(self, element: ast.AST, call: ast.Call, finding) -> None:
        """`def backward(loss, optimizer): with amp.scale_loss(loss, optimizer)`: the parameter is
        one of amp.initialize's optimizers when every call of the function gives it one by name
        (`backward(errD, optD)`, `self._backward(..., self.d_optimizer)`)."""
        function = self.scope_of(call)
        if not (isinstance(element, ast.Name) and isinstance(function, ast.FunctionDef)):
            return
        parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
        if element.id not in parameters:
            return
        what = f"the optimizer amp.scale_loss scales for on line {finding.line}"
        method = isinstance(self.parents.get(id(function)), ast.ClassDef)
        positional = parameters[1:] if method else parameters
        for caller in self.only_calls_of(function, what):
            given = dict(zip(positional, caller.args)) | {k.arg: k.value for k in caller.keywords}
            if dotted_name(given.get(element.id)) not in self.optimizers:
                raise Refused(f"amp.scale_loss (line {finding.line}) scales for {element.id}, a parameter of "
                              f"{function.name}(), and the call on line {caller.lineno} gives it another optimizer "
                              "than amp.initialize's")
        if any(isinstance(n, ast.Name) and n.id == element.id and not isinstance(n.ctx, ast.Load)
               for n in ast.walk(function)):
            raise Refused(f"{function.name}() assigns its parameter {element.id}, the optimizer amp.scale_loss scales "
                          f"for on line {finding.line}")
        self.optimizers.add(element.id)

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
        backward is known, so that one forward pass of several losses is wrapped once). A loss
        given to the function as a parameter (`def optimize(self, loss)`) is computed by its
        callers: the forward pass before each call goes under autocast."""
        model_roots = {name.split(".")[0] for name in self.models}
        found = self.forward_region(anchor, _loads(loss) - model_roots, finding)
        if not isinstance(found, set):
            self.forward_regions.append(found)
            return
        function = self.scope_of(anchor)
        parameters = [a.arg for a in function.args.posonlyargs + function.args.args] if isinstance(
            function, ast.FunctionDef) else []
        given = [p for p in parameters if p in found]
        if len(given) != 1 or found != {given[0]}:
            raise Refused(f"the loss scaled on line {finding.line} is computed where the fix cannot see "
                          "which statements are its forward pass (no call of the model before it in its function)")
        self.scaling_functions.add(id(function))
        for call in self.only_calls_of(function, f"the loss scaled on line {finding.line}"):
            positional = parameters[1:] if isinstance(self.parents.get(id(function)), ast.ClassDef) else parameters
            arguments = dict(zip(positional, call.args)) | {k.arg: k.value for k in call.keywords}
            argument = arguments.get(given[0])
            if not isinstance(argument, ast.Name):
                raise Refused(f"the call of {function.name}() on line {call.lineno} does not give it the loss by "
                              "name (computed in the call, it would stay out of autocast)")
            region = self.forward_region(self.statement_of(call), _loads(argument) - model_roots, finding)
            if isinstance(region, set):
                raise Refused(f"the loss {function.name}() scales (line {finding.line}) is computed before the call "
                              f"on line {call.lineno} where the fix cannot see its forward pass")
            self.forward_regions.append(region)

    def steps_or_backward(self, statement: ast.stmt) -> bool:
        """The statement runs a backward pass or a step, itself or by calling a function of the
        module that scales a loss it is given (`self.optimize(loss)`)."""
        return _steps_or_backward(statement) or any(
            isinstance(n, ast.Call) and id(self.local_function(n)) in self.scaling_functions
            for n in ast.walk(statement))

    def only_calls_of(self, function: ast.FunctionDef, what: str) -> List[ast.Call]:
        """Every reference to a module-level function or a method of the class (`self.m`) is a
        plain call of it in this module (no *args, no **kwargs)."""
        owner = self.parents.get(id(function))
        method = isinstance(owner, ast.ClassDef)
        calls = []
        for node in ast.walk(owner if method else self.tree):
            reference = node.attr == function.name and dotted_name(node.value) == "self" if method and isinstance(
                node, ast.Attribute) else not method and isinstance(node, ast.Name) and node.id == function.name
            if not reference:
                continue
            call = self.parents.get(id(node))
            if not (isinstance(call, ast.Call) and call.func is node) or any(
                    isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                raise Refused(f"{what} is {function.name}()'s parameter, and {function.name}() is used on line "
                              f"{node.lineno} other than called with its arguments listed")
            calls.append(call)
        if not calls or self.ctx.in_strings(function.name) or (not method and self.ctx.exported(function.name)):
            raise Refused(f"{what} is {function.name}()'s parameter, and {function.name}() is not called only "
                          "in this module")
        return calls

    def forward_region(self, anchor: ast.stmt, needed: Set[str], finding):
        """The forward pass before the anchor, as (site, first index, last index, finding); the
        names still needed (a set) when the walk reaches the function's body without finding the
        model."""
        model_roots = {name.split(".")[0] for name in self.models}
        at, inner = anchor, []
        while True:  # the block of the backward, then the blocks around it (`if args.fp16:`, `with`)
            site = self.places[id(at)]
            dependencies, boundary = [], None
            for statement in reversed(site.block[:site.index]):
                if statement is self.init_statement:
                    break
                if self.steps_or_backward(statement):  # an earlier step: a GAN's discriminator's
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
            if dependencies and boundary is None:
                inner.append((site, site.block.index(dependencies[-1]), site.block.index(dependencies[0]), finding))
            if isinstance(site.owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and all(
                    self.local_function(n) is not None for s in dependencies for n in ast.walk(s)
                    if isinstance(n, ast.Call)):
                # from the function's parameters, by arithmetic or this module's functions (which run
                # no model: `loss = self.adjust_loss(loss)`): the forward passes are its callers'
                return needed
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
        # the loss computed from the model's outputs in the blocks nearer the backward (`if accumulate:
        # loss = criterion(outputs, y) / n`) runs under autocast too, as apex O1 cast its functions
        self.forward_regions.extend(r for r in inner if self.computes_loss(r[0].block[r[1]:r[2] + 1]))
        return site, index(first), index(last), finding

    def computes_loss(self, region: List[ast.stmt]) -> bool:
        """Statements that call a function (a criterion: operators on the loss alone are left as
        they are), none of which steps, runs a backward or holds a multi-line string."""
        nodes = [node for statement in region for node in ast.walk(statement)]
        return any(isinstance(node, ast.Call) for node in nodes) and not any(
            self.steps_or_backward(statement) for statement in region) and not any(
            isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno != node.end_lineno for node in nodes)

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
            if self.steps_or_backward(statement):
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

    def note_forward_passes_left_in_float32(self) -> None:
        """The models' calls outside the training step (evaluation) stay out of autocast: apex ran
        them in mixed precision too (O1 patched torch's functions everywhere, O2 made the weights
        float16), so they now run in float32: said, with their lines."""
        wrapped = {id(n) for site, first, last, _ in self.forward_regions
                   for statement in site.block[first:last + 1] for n in ast.walk(statement)}
        models = self.models | self.model_wrappers()
        lines = sorted({node.lineno for node in ast.walk(self.tree) if isinstance(node, ast.Call)
                        and dotted_name(node.func) in models and id(node) not in wrapped})
        if lines and self.forward_regions:
            shown = ", ".join(map(str, lines[:3])) + (" ..." if len(lines) > 3 else "")
            self.note(f"the model's other forward passes (line{'s' if len(lines) > 1 else ''} {shown}) stay out of "
                      "autocast, so they run in float32: apex ran them in mixed precision too; put them under "
                      "autocast for its speed")

    def autocast_float16_inputs(self, finding) -> None:
        """`x = x.half()` in a function whose forward passes stay out of autocast (an evaluation
        loop), or at module level: apex ran the model on such tensors (O1 patched torch's
        functions everywhere, O2 made the weights float16); migrated, the model is float32 there
        and would raise on them, so the forward passes there go under autocast too, which takes
        float16 inputs (its ops cast them). A model made float16 (`model.half()`, pure float16
        inference) is the program's own choice."""
        in_regions = {id(n) for site, first, last, _ in self.forward_regions
                      for statement in site.block[first:last + 1] for n in ast.walk(statement)}
        wrapped = {id(scope) for site, *_ in self.forward_regions for scope in [self.scope_of(site.statement)]
                   if scope is not None}
        models = self.models | self.model_wrappers()
        casts: Dict[int, List[ast.Call]] = {}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and (node.func.attr == "half" and not node.args
                         or node.func.attr == "to" and any(dotted_name(a) in _FLOAT16 for a in [
                             *node.args, *(k.value for k in node.keywords if k.arg == "dtype")]))):
                continue
            receiver = dotted_name(node.func.value) or ""
            if any(receiver == m or receiver.startswith(m + ".") or m.startswith(receiver + ".") for m in models) \
                    or id(self.statement_of(node)) in self.undone or id(self.scope_of(node)) in wrapped:
                continue
            casts.setdefault(id(self.scope_of(node)), []).append(node)
        said, cast_lines, pass_lines = [], [], []
        for calls in casts.values():
            cast = calls[0]
            scope = self.scope_of(cast)
            passes = [s for s in ast.walk(scope or self.tree) if isinstance(s, ast.stmt) and id(s) not in in_regions
                      and self.scope_of(s) is scope and self.calls_model(s, models)]
            if not passes and scope is not None:
                raise Refused(f"a tensor is made float16 on line {cast.lineno} ({self.source.segment(cast)}) for "
                              f"a model {scope.name}() does not call by name: the migrated model is float32 and would "
                              "raise on it outside autocast")
            for statement in passes:
                if isinstance(statement, _COMPOUND) or self.steps_or_backward(statement):
                    raise Refused(f"a tensor is made float16 on line {cast.lineno} for the model, which line "
                                  f"{statement.lineno} runs in a statement that cannot be put under autocast alone")
                site = self.places[id(statement)]
                self.forward_regions.append((site, site.index, site.index, finding))
            if passes:
                said.append(f"{scope.name}()" if scope is not None else "the module")
                cast_lines += [c.lineno for c in calls]
                pass_lines += [s.lineno for s in passes]
        if said:
            self.note(f"the forward passes of {' and '.join(said)} (line{'s' if len(pass_lines) > 1 else ''} "
                      f"{', '.join(map(str, sorted(pass_lines)))}) take tensors made float16 (line"
                      f"{'s' if len(cast_lines) > 1 else ''} {', '.join(map(str, sorted(cast_lines)))}), so they run "
                      "under autocast too: apex ran the model on them, a float32 model takes them only under autocast")

    def calls_model(self, statement: ast.stmt, models: Set[str]) -> bool:
        """The statement itself (not a block inside it) runs a model: calls it, a name it is
        wrapped under, the module it is a part of, or its `.module`/`.forward`."""
        owners = {".".join(parts[:end]) for parts in (name.split(".") for name in models)
                  for end in range(1, len(parts))}
        runs = models | owners | {f"{m}.{attr}" for m in models for attr in ("module", "forward")}
        heads = [statement] if not isinstance(statement, _COMPOUND) else [
            getattr(statement, field) for field in ("test", "iter", "items", "subject") if hasattr(statement, field)]
        return any(isinstance(n, ast.Call) and dotted_name(n.func) in runs
                   for head in heads for part in (head if isinstance(head, list) else [head])
                   for n in ast.walk(part))

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
