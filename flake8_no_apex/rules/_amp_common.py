"""What the parts of the apex AMP migration share: the apex names it knows, its refusal, and small
readers of the syntax tree."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set

from ..resolve import dotted_name

if TYPE_CHECKING:
    from dataclasses import dataclass, field
else:  # the same classes, each made from one compiled text (records.py says why)
    from ..records import dataclass, field


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
_FLOAT16 = ("torch.float16", "torch.half")
NOT_MIGRATED = "apex AMP not migrated"


class Refused(Exception):
    """The module's apex AMP code is not the pattern the migration knows: say why."""


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
