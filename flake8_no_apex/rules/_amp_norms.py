"""Whether a function a training loop calls on the gradients (Swin's `get_grad_norm`) returns a norm
of them: a value that scales as they do. With gradient accumulation apex showed it the unscaled
gradients after every micro-batch; GradScaler leaves them scaled until the step, so there the
value is the scale times apex's, and divided by the scale it is apex's exactly.

The function is read, never run: an abstract interpretation of its body over a few kinds of
values (the parameters, one parameter, a value of the gradients of some degree of homogeneity, a
constant, a value the scale cannot change). Anything else it does (a call it does not know, a
statement with effects, a branch on the gradients) and the answer is no."""
from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING, Dict, List, Union

from ..resolve import dotted_name

if TYPE_CHECKING:
    from dataclasses import dataclass
else:  # the same classes, each made from one compiled text (records.py says why)
    from ..records import dataclass


@dataclass(frozen=True)
class _Parameters:
    """An iterable of parameters: their `.grad` are the gradients."""


@dataclass(frozen=True)
class _Parameter:
    """One parameter of them."""


@dataclass(frozen=True)
class _Gradients:
    """A tensor or number that is multiplied by s**degree when every gradient is multiplied by
    s > 0 (`nonnegative`: it is never below zero, so a real power of it stays homogeneous)."""

    degree: float
    nonnegative: bool


@dataclass(frozen=True)
class _Each:
    """A list with one value of the gradients of `degree` per parameter (a comprehension)."""

    degree: float
    nonnegative: bool


@dataclass(frozen=True)
class _Constant:
    value: object


@dataclass(frozen=True)
class _Invariant:
    """A value the scale does not change (`len(parameters)`, a comparison of them)."""


_Value = Union[_Parameters, _Parameter, _Gradients, _Each, _Constant, _Invariant]
_ZERO = _Constant(0)


class _Unknown(Exception):
    """The body does something the interpretation does not follow."""


_NORMS = {"torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm"}
# methods that keep the degree and the sign (a sum or a maximum of values of one degree is of it)
_KEEPS = {"detach", "float", "double", "item", "cpu", "clone", "flatten", "sum", "max"}
_FUNCTIONS = _NORMS | {"torch.stack", "torch.tensor"}


def returns_gradient_norm(function: ast.FunctionDef, call: ast.Call, gradients: ast.AST) -> bool:
    """`call` of `function` returns a value homogeneous of degree one in the gradients of the
    parameters `gradients` (one of the call's arguments) names, its other arguments constants."""
    try:
        scope = _bind(function, call, gradients)
        returned = _Body(scope).run(function.body)
    except (_Unknown, RecursionError, ZeroDivisionError, OverflowError, TypeError, ValueError):
        return False
    return isinstance(returned, _Gradients) and math.isclose(returned.degree, 1.0, abs_tol=1e-9)


def _bind(function: ast.FunctionDef, call: ast.Call, gradients: ast.AST) -> Dict[str, _Value]:
    """The function's parameters as the call gives them."""
    arguments = function.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs \
            or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise _Unknown
    names = [a.arg for a in arguments.args]
    given: Dict[str, ast.AST] = dict(zip(names, call.args))
    if len(call.args) > len(names):
        raise _Unknown
    for keyword in call.keywords:
        if keyword.arg not in names or keyword.arg in given:
            raise _Unknown
        given[keyword.arg] = keyword.value
    defaults = dict(zip(names[len(names) - len(arguments.defaults):], arguments.defaults))
    scope: Dict[str, _Value] = {}
    for name in names:
        node = given.get(name, defaults.get(name))
        if node is gradients:
            scope[name] = _Parameters()
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
                node.value, bool):
            scope[name] = _Constant(node.value)
        else:
            raise _Unknown
    if _Parameters() not in scope.values():
        raise _Unknown
    return scope


def _join(a: _Value, b: _Value) -> _Value:
    """What a name holds after two paths that left it `a` and `b`: zero is of every degree."""
    if a == b:
        return a
    if a == _ZERO and isinstance(b, _Gradients):
        return b
    if b == _ZERO and isinstance(a, _Gradients):
        return a
    raise _Unknown


class _Body:
    def __init__(self, scope: Dict[str, _Value]):
        self.scope = scope
        self.returned: List[_Value] = []

    def run(self, body: List[ast.stmt]) -> _Value:
        self.block(body, top=True)
        if not self.returned:
            raise _Unknown
        value = self.returned[0]
        for other in self.returned[1:]:
            value = _join(value, other)
        return value

    def block(self, body: List[ast.stmt], top: bool = False) -> None:
        for index, statement in enumerate(body):
            if isinstance(statement, ast.Return):
                if statement.value is None:
                    raise _Unknown
                self.returned.append(self.value(statement.value))
                if top and index != len(body) - 1:
                    raise _Unknown
                return
            self.statement(statement, top and index == 0)
        if top:
            raise _Unknown  # it can end without returning

    def statement(self, statement: ast.stmt, first: bool) -> None:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and first:
            return  # the docstring
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            self.scope[statement.targets[0].id] = self.value(statement.value)
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            self.scope[statement.target.id] = self.binary(
                self.name(statement.target.id), statement.op, self.value(statement.value))
        elif isinstance(statement, ast.If):
            if not (self.type_test(statement.test) or isinstance(self.value(statement.test), (_Invariant, _Constant))):
                raise _Unknown  # a branch on the gradients: not homogeneous
            self.branches(statement.body, statement.orelse)
        elif isinstance(statement, ast.For) and not statement.orelse and isinstance(statement.target, ast.Name) \
                and self.value(statement.iter) == _Parameters():
            if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for s in statement.body for n in ast.walk(s)):
                raise _Unknown
            for _ in range(3):  # to the fixed point: a degree, once joined with zero, stays
                before = dict(self.scope)
                self.scope[statement.target.id] = _Parameter()
                self.block(statement.body)
                self.scope = {k: _join(before[k], v) if k in before else v for k, v in self.scope.items()}
                if self.scope == before:
                    break
            else:
                raise _Unknown
        else:
            raise _Unknown

    def type_test(self, test: ast.AST) -> bool:
        """`isinstance(parameters, torch.Tensor)`: one tensor given, not an iterable (the
        branch makes a list of it, which the join must still see as the parameters)."""
        return isinstance(test, ast.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2 \
            and isinstance(test.args[0], ast.Name) and self.scope.get(test.args[0].id) == _Parameters()

    def branches(self, body: List[ast.stmt], orelse: List[ast.stmt]) -> None:
        before, returned = dict(self.scope), len(self.returned)
        self.block(body)
        after_body, body_returned = self.scope, len(self.returned) > returned
        self.scope = dict(before)
        returned = len(self.returned)
        self.block(orelse)
        if body_returned:
            return  # what follows sees the other path's names
        if len(self.returned) > returned:
            self.scope = after_body
            return
        self.scope = {k: _join(after_body[k], self.scope[k]) for k in after_body.keys() & self.scope.keys()}

    def name(self, name: str) -> _Value:
        if name not in self.scope:
            raise _Unknown
        return self.scope[name]

    def value(self, node: ast.AST) -> _Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
                node.value, bool):
            return _Constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.value(node.value)
            if node.attr == "grad" and owner == _Parameter():
                return _Gradients(1.0, False)
            if node.attr == "data" and isinstance(owner, _Gradients):
                return owner
            raise _Unknown
        if isinstance(node, ast.BinOp):
            return self.binary(self.value(node.left), node.op, self.value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.value(node.operand)
            if isinstance(operand, _Constant):
                return _Constant(-operand.value)
            if isinstance(operand, _Gradients):
                return _Gradients(operand.degree, False)
            raise _Unknown
        if isinstance(node, ast.Compare):
            parts = [self.value(node.left), *map(self.value, node.comparators)]
            if any(isinstance(p, (_Gradients, _Each)) for p in parts):
                raise _Unknown  # its truth may change with the scale
            return _Invariant()
        if isinstance(node, ast.List) and len(node.elts) == 1 and self.value(node.elts[0]) in (
                _Parameters(), _Parameter()):
            return _Parameters()  # [parameters] in the branch of a single tensor
        if isinstance(node, ast.ListComp):
            return self.comprehension(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise _Unknown

    def comprehension(self, node: ast.ListComp) -> _Value:
        if len(node.generators) != 1:
            raise _Unknown
        generator = node.generators[0]
        if generator.is_async or not isinstance(generator.target, ast.Name) \
                or self.value(generator.iter) != _Parameters():
            raise _Unknown
        inner = _Body({**self.scope, generator.target.id: _Parameter()})
        if not all(inner.kept(test) for test in generator.ifs):
            raise _Unknown
        element = inner.value(node.elt)
        if element == _Parameter():
            return _Parameters()
        if isinstance(element, _Gradients):
            return _Each(element.degree, element.nonnegative)
        raise _Unknown

    def kept(self, test: ast.AST) -> bool:
        """A filter the scale cannot change: `p.grad is not None`, `p.requires_grad`."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            return isinstance(test.left, ast.Attribute) and test.left.attr == "grad" \
                and self.value(test.left.value) == _Parameter()
        if isinstance(test, ast.Attribute) and test.attr == "requires_grad":
            return self.value(test.value) == _Parameter()
        if isinstance(test, ast.BoolOp):
            return all(self.kept(v) for v in test.values)
        return False

    def call(self, node: ast.Call) -> _Value:
        function = dotted_name(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise _Unknown
        if isinstance(node.func, ast.Attribute) and function not in _FUNCTIONS:
            owner = self.value(node.func.value)
            if node.func.attr in _KEEPS and isinstance(owner, _Gradients) and not node.args and not node.keywords:
                return owner
            if node.func.attr == "abs" and isinstance(owner, _Gradients) and not node.args and not node.keywords:
                return _Gradients(owner.degree, True)
            if node.func.attr == "norm" and isinstance(owner, _Gradients):
                return self.norm(owner, node.args, node.keywords)
            raise _Unknown
        if function in _NORMS and node.args:
            owner = self.value(node.args[0])
            if isinstance(owner, _Gradients):
                return self.norm(owner, node.args[1:], node.keywords)
            raise _Unknown
        if function in ("float", "abs") and len(node.args) == 1 and not node.keywords:
            argument = self.value(node.args[0])
            if isinstance(argument, _Constant):
                return _Constant(float(argument.value) if function == "float" else abs(argument.value))
            if isinstance(argument, _Gradients):
                return _Gradients(argument.degree, argument.nonnegative or function == "abs")
            raise _Unknown
        if function == "float" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value in ("inf", "Infinity"):
            return _Constant(math.inf)
        if function == "list" and len(node.args) == 1 and not node.keywords \
                and self.value(node.args[0]) == _Parameters():
            return _Parameters()
        if function == "filter" and len(node.args) == 2 and not node.keywords:
            predicate = node.args[0]
            if isinstance(predicate, ast.Lambda) and len(predicate.args.args) == 1 \
                    and not (predicate.args.vararg or predicate.args.kwarg or predicate.args.kwonlyargs) \
                    and self.value(node.args[1]) == _Parameters():
                inner = _Body({**self.scope, predicate.args.args[0].arg: _Parameter()})
                if inner.kept(predicate.body):
                    return _Parameters()
            raise _Unknown
        if function == "len" and len(node.args) == 1 and self.value(node.args[0]) == _Parameters():
            return _Invariant()
        if function in ("torch.stack", "sum", "max") and len(node.args) == 1 and not node.keywords:
            each = self.value(node.args[0])
            if isinstance(each, _Each):
                return _Gradients(each.degree, each.nonnegative)
            raise _Unknown
        if function == "torch.tensor" and len(node.args) == 1 and all(
                k.arg in ("device", "dtype") for k in node.keywords):
            value = self.value(node.args[0])
            if isinstance(value, _Constant):
                return value
        raise _Unknown

    def norm(self, owner: _Gradients, args: List[ast.AST], keywords: List[ast.keyword]) -> _Value:
        """A p-norm of a value of the gradients: of its degree, never below zero."""
        order = args[0] if args else next((k.value for k in keywords if k.arg in ("p", "ord")), None)
        if len(args) > 1 or any(k.arg not in ("p", "ord", "dtype") for k in keywords):
            raise _Unknown
        if order is not None:
            value = self.value(order)
            if not (isinstance(value, _Constant) and value.value > 0):
                raise _Unknown
        return _Gradients(owner.degree, True)

    def binary(self, left: _Value, op: ast.operator, right: _Value) -> _Value:
        if isinstance(left, _Constant) and isinstance(right, _Constant):
            operations = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                          ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
            if type(op) not in operations:
                raise _Unknown
            return _Constant(operations[type(op)](left.value, right.value))
        if isinstance(op, ast.Add):
            if left == _ZERO and isinstance(right, _Gradients):
                return right
            if right == _ZERO and isinstance(left, _Gradients):
                return left
            if isinstance(left, _Gradients) and isinstance(right, _Gradients) and math.isclose(
                    left.degree, right.degree, abs_tol=1e-9):
                return _Gradients(left.degree, left.nonnegative and right.nonnegative)
            raise _Unknown
        if isinstance(op, (ast.Mult, ast.Div)) and isinstance(left, _Gradients) and isinstance(right, _Constant) \
                and right.value != 0 and math.isfinite(right.value):
            return _Gradients(left.degree, left.nonnegative and right.value > 0)
        if isinstance(op, ast.Mult) and isinstance(right, _Gradients) and isinstance(left, _Constant) \
                and left.value != 0 and math.isfinite(left.value):
            return _Gradients(right.degree, right.nonnegative and left.value > 0)
        if isinstance(op, ast.Pow) and isinstance(left, _Gradients) and isinstance(right, _Constant):
            exponent = right.value
            if not (isinstance(exponent, (int, float)) and math.isfinite(exponent) and exponent > 0):
                raise _Unknown
            whole = float(exponent).is_integer()
            if not (left.nonnegative or whole):
                raise _Unknown
            return _Gradients(left.degree * exponent, left.nonnegative or whole and int(exponent) % 2 == 0)
        raise _Unknown
