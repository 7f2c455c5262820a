"""Name resolution: which library object does an expression refer to?

`ScopeVisitor` walks a module once, keeping Python's scopes (module, class, function,
comprehension) and the bindings imports create in them, so that `tca.autocast` after
`import torch.cuda.amp as tca` resolves to `torch.cuda.amp.autocast`, while a parameter
named `torch` shadows the module. Like pyflakes, it visits function bodies after the
enclosing scope, so a function sees the module's final imports.
"""
from __future__ import annotations

import ast
import re
from collections import deque
from typing import Callable, Deque, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

# Lightning ships one code base under several names; fold them into one spelling so a
# rule written for `lightning.pytorch` also covers `pytorch_lightning`.
_CANONICAL_ROOTS = {
    "pytorch_lightning": "lightning.pytorch",
    "lightning_fabric": "lightning.fabric",
    "lightning_lite": "lightning.fabric",
}

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
# what the fallback of a shim may catch besides: a new signature an old release rejects
# (`torch.is_autocast_enabled("cuda")` before torch 2.4)
_FALLBACK_ERRORS = _IMPORT_ERRORS | {"TypeError"}


def canonical(qualname: str) -> str:
    head, dot, rest = qualname.partition(".")
    new = _CANONICAL_ROOTS.get(head)
    return new + dot + rest if new else qualname


class Binding:
    """What a name is bound to: a qualified name (imports and aliases of them) or None.
    An import's binding keeps its statement and the Name nodes that read it, so a fix can
    rename every use, or remove the import once nothing reads it."""

    __slots__ = ("qualname", "subclass_of", "instance_of", "classes", "statement", "uses", "guarded", "probed")

    def __init__(self, qualname: Optional[str] = None, subclass_of: Optional[str] = None, statement=None,
                 guarded: bool = False, instance_of: Optional[str] = None, classes: Tuple[ast.ClassDef, ...] = ()):
        self.qualname = qualname
        self.subclass_of = subclass_of  # a local class: the library class it derives from
        self.instance_of = instance_of  # `self` of a method of such a class: an instance of that library class
        # such a class (or `self`): its definition and its local bases', whose own attributes
        # `instance_attributes` reads when a rule asks (most modules never do)
        self.classes = classes
        self.statement = statement  # the import that created it
        self.uses: List[ast.Name] = []
        # made on some paths only (under an `if`, in a loop, an except handler): code that a
        # fix writes may not rely on it
        self.guarded = guarded
        # made in a `try:` whose handler binds the name to a fallback: what the name means
        # depends on the installed library, so uses are reported but never rewritten
        self.probed = False

    def bound_before(self, line: int, col: int) -> bool:
        """Whether an import binding has surely run before code at (line, col) runs."""
        if self.statement is None:
            return True
        return not self.guarded and (self.statement.lineno, self.statement.col_offset) < (line, col)


UNKNOWN = Binding()
UNBOUND = Binding()  # a function's local before its first assignment


class Scope(Dict[str, Binding]):
    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.star_modules: List[str] = []
        self.instance_of: Optional[str] = None  # a class scope: the library class the class derives from
        self.classes: Tuple[ast.ClassDef, ...] = ()  # and the class with its local bases


_VERSION_WORDS = re.compile(r"version|greater|less|_ge_|_lt_|at_least|older|newer", re.IGNORECASE)


_OLDER_WORDS = re.compile(r"less|_lt_|older|below|before", re.IGNORECASE)
NEWER, OLDER, EITHER = "newer", "older", "either"  # which releases take a version-checked body


def _mentions_version(node: ast.AST) -> bool:
    for part in walk(node):
        if isinstance(part, ast.Name) and (_VERSION_WORDS.search(part.id) or part.id == "hasattr"):
            return True
        if isinstance(part, ast.Attribute) and _VERSION_WORDS.search(part.attr):
            return True
    return False


def version_check(test: ast.AST) -> Optional[str]:
    """Whether an `if` test checks a library's version, and if so which releases take its body:
    NEWER (`torch.__version__ >= "2.4"`, `_TORCH_GREATER_EQUAL_2_4`, `at_least("1.10")`,
    `hasattr(torch, "amp")`), OLDER (`<`, `_LESS_THAN_`, `not ...`) or EITHER. None when it is
    no version check: also when it mixes in other tests (`use_half and at_least("1.10")`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = version_check(test.operand)
        return {NEWER: OLDER, OLDER: NEWER}.get(inner, inner)
    if isinstance(test, ast.BoolOp):
        parts = [version_check(value) for value in test.values]
        return EITHER if all(parts) else None
    if not _mentions_version(test):
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left_is_version = _mentions_version(test.left)
        operator = test.ops[0]
        if isinstance(operator, (ast.GtE, ast.Gt)):
            return NEWER if left_is_version else OLDER
        if isinstance(operator, (ast.Lt, ast.LtE)):
            return OLDER if left_is_version else NEWER
        return EITHER
    names = [p.id if isinstance(p, ast.Name) else p.attr
             for p in walk(test) if isinstance(p, (ast.Name, ast.Attribute))]
    if any(_OLDER_WORDS.search(name) for name in names):
        return OLDER
    if any(re.search(r"greater|_ge_|at_least|newer|hasattr", name, re.IGNORECASE) for name in names):
        return NEWER
    return EITHER


def chain_root(node: ast.AST) -> ast.AST:
    """`a` of `a.b.c`: the expression an attribute chain starts from."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def dotted_name(node: Optional[ast.AST]) -> Optional[str]:
    """`self.optimizer` for an attribute chain of names (or a name), None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (itself included), in no particular order: `ast.walk` without its
    per-node generators, in about half the time."""
    stack = [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST):  # a list's None (a `**` key) or str (`global` names)
            continue
        yield node
        push_children(node, stack)


def push_children(node: ast.AST, stack: List[object]) -> None:
    """Put a node's children on a stack (lists whole: what they hold besides nodes, None and
    strings, is for the taker to skip)."""
    for name in node._fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            stack.extend(value)
        elif isinstance(value, ast.AST):
            stack.append(value)


def _stored(target: ast.AST, names: Set[str]) -> None:
    """The names an assignment target binds: `x`, `a, *b`, `[c, d]` (not `obj.x` nor `a[i]`)."""
    if isinstance(target, ast.Name):
        names.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _stored(element, names)
    elif isinstance(target, ast.Starred):
        _stored(target.value, names)


def _target_names(target: ast.AST) -> Set[str]:
    names: Set[str] = set()
    _stored(target, names)
    return names


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody")


def _expression_bindings(node: ast.AST, names: Set[str]) -> None:
    """Names bound inside a statement's expressions (`:=`, which binds in the function even
    inside a comprehension), or by a statement kind not known below, walked whole. A lambda
    binds in a scope of its own, and so do a comprehension's `for` targets."""
    stack = [node]
    in_comprehension = set()  # ids of comprehension targets
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.AST) or isinstance(node, ast.Lambda):
            continue
        if isinstance(node, _COMPREHENSIONS):
            in_comprehension.update(id(n) for generator in node.generators for n in walk(generator.target))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in in_comprehension:
            names.add(node.id)
        push_children(node, stack)


def _local_names(fn: ast.AST, walrus: bool = True) -> Set[str]:
    """Names a function binds anywhere in its body: Python makes them local throughout. Only
    statements bind, but for `:=` (`walrus`: whether the module's text has one), so without it
    the expressions are not walked."""
    names: Set[str] = set()
    declared: Set[str] = set()
    stack = list(fn.body) if not isinstance(fn, ast.Lambda) else []
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _SIMPLE_STATEMENTS and not walrus:  # binds nothing, holds no statement
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            names.add(node.name)
            if walrus:  # decorators, defaults, bases: evaluated here
                _expression_fields(node, names)
            continue
        if kind is ast.Assign:
            for target in node.targets:
                _stored(target, names)
        elif kind in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor):
            _stored(node.target, names)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    _stored(item.optional_vars, names)
        elif kind is ast.Delete:
            for target in node.targets:
                _stored(target, names)
        elif kind in (ast.Import, ast.ImportFrom):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*")
            continue
        elif kind in (ast.Global, ast.Nonlocal):
            declared.update(node.names)
            continue
        elif kind is _MATCH:
            for case in node.cases:
                captures = (getattr(p, "name", None) or getattr(p, "rest", None) for p in walk(case.pattern))
                names.update(filter(None, captures))  # `case Point(x=x0)`, `case [*rest]`, `case {**rest}`
                if walrus and case.guard is not None:
                    _expression_bindings(case.guard, names)
                stack.extend(case.body)
        elif kind not in _KNOWN_STATEMENTS:  # `type X = ...`, or a statement of a later Python
            _expression_bindings(node, names)
            continue
        if kind in _COMPOUND_STATEMENTS:
            for field_name in _BLOCKS:
                stack.extend(getattr(node, field_name, ()))
            for handler in getattr(node, "handlers", ()):
                if handler.name:
                    names.add(handler.name)
                stack.extend(handler.body)
                if walrus and handler.type is not None:
                    _expression_bindings(handler.type, names)
        if walrus:
            _expression_fields(node, names)
    return names - declared


def _expression_fields(statement: ast.stmt, names: Set[str]) -> None:
    """`_expression_bindings` of every part of a statement but the statements it holds."""
    for field_name in statement._fields:
        if field_name not in _STATEMENT_FIELDS:
            value = getattr(statement, field_name, None)
            for part in value if value.__class__ is list else [value]:
                _expression_bindings(part, names)


_MATCH = getattr(ast, "Match", None)
# the known statements that hold others (`_local_names` looks into no other's blocks)
_COMPOUND_STATEMENTS = frozenset({ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try,
                                  *filter(None, [getattr(ast, "TryStar", None)])})
_SIMPLE_STATEMENTS = frozenset({ast.Expr, ast.Return, ast.Pass, ast.Break, ast.Continue, ast.Raise, ast.Assert})
_KNOWN_STATEMENTS = frozenset({*_SIMPLE_STATEMENTS, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete,
                               *_COMPOUND_STATEMENTS})
_STATEMENT_FIELDS = (*_BLOCKS, "handlers", "cases")


def _parameters(args: ast.arguments) -> List[ast.arg]:
    params = [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    return params


def instance_attributes(classes: Iterable[ast.ClassDef]) -> FrozenSet[str]:
    """What the instances of a class get from it and its local bases (`Binding.classes`)."""
    return frozenset().union(*map(_instance_attributes, classes))


def _instance_attributes(cls: ast.ClassDef) -> FrozenSet[str]:
    """What the methods of a class assign on their instance (`self.scaler = ...`), and the names its
    body binds (class attributes, methods, properties)."""
    found = set()
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(statement.name)
            positional = [*getattr(statement.args, "posonlyargs", []), *statement.args.args]
            if positional:
                receiver = positional[0].arg
                found.update(n.attr for n in walk(statement) if isinstance(n, ast.Attribute)
                             and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)
                             and n.value.id == receiver)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            found.update(n.id for t in targets for n in walk(t) if isinstance(n, ast.Name))
    return frozenset(found)


def _nothing(walker: object, node: ast.AST) -> None:
    return None


# the fields of each node type that `generic_visit` walks: all but those that only ever hold a
# node without children (`ctx`'s `Load`, an operator), which no visitor looks at: a tenth of the
# visits of a module
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
_NODE_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _node_fields(kind: type) -> Tuple[str, ...]:
    return tuple(name for name in kind._fields if name not in _LEAF_FIELDS)


def _is_elif(block: List[ast.stmt]) -> bool:
    """Whether an `else` block is an `elif` (or an `else:` holding only an `if`: the same tree)."""
    return len(block) == 1 and type(block[0]) is ast.If


class _ChainRest:
    """Whether the `else` of each `if` of an `elif` chain uses a new spelling, as a walk of that
    `else` would say at that point of the walk. Asked at every level, such walks cost the square
    of the chain's length; here each level's test and body are walked once, and walked again
    only when a name those walks read through (`torch` of `torch.amp.x`) means something else
    by the time a later level asks (a branch rebinding it): the same answers, in linear time."""

    def __init__(self, head: ast.If):
        self.levels = [head]
        while _is_elif(self.levels[-1].orelse):
            self.levels.append(self.levels[-1].orelse[0])
        self.first = len(self.levels)  # the first level `answers` holds
        self.answers: List[bool] = []
        self.roots: Dict[str, Optional[str]] = {}  # what the walks read through, and what it meant

    def uses_new_spelling(self, visitor: "ScopeVisitor", level: int) -> bool:
        """Of the `else` of the `if` at `level` (0: the head), in the visitor's scopes now."""
        if level < self.first or any(visitor.meaning(name) != meant for name, meant in self.roots.items()):
            self.first, self.roots = level, {}
            last = len(self.levels) - 1
            answer = visitor.uses_new_spelling(self.levels[last].orelse, self.roots)
            answers = [answer]
            for k in range(last - 1, level - 1, -1):  # the `else` of level k is the `if` of level k + 1
                following = self.levels[k + 1]
                answer = answer or visitor.uses_new_spelling([following.test, *following.body], self.roots)
                answers.append(answer)
            self.answers = answers[::-1]
        return self.answers[level - self.first]


class ScopeVisitor(ast.NodeVisitor):
    """Tracks bindings; subclasses add what to do at references, calls and imports."""

    def __init__(self, walrus: bool = True) -> None:
        self.walrus = walrus  # whether the module may bind names inside expressions (`:=`)
        self.scopes: List[Scope] = [Scope("module")]
        self._deferred: Deque[tuple] = deque()  # (scopes, function): bodies to visit, in order
        # the bodies `skips` passed over: visited only if some later question needs them (`complete`)
        self.skipped: List[tuple] = []
        self.in_fallback = 0  # depth inside `except ImportError` handlers of a shim
        self.in_import_probe = 0  # depth inside `try:` bodies whose handlers catch ImportError
        self.in_annotation = 0  # depth inside annotations of parameters, returns and variables
        self.in_dual_path = 0  # depth inside a branch whose sibling uses the new spelling: never fixed
        self.guarded = 0  # depth inside blocks that run on some paths only, in the current scope
        self._methods: Dict[type, Callable[[object, ast.AST], object]] = {}
        self.bound_names: Set[str] = set()  # every name bound (or deleted) in any scope of the module
        # the names the module scope has bound to each dotted name, for `name_for` (a scan of the
        # module's names per finding made a module of thousands of names quadratic)
        self._module_names: Dict[str, Dict[str, None]] = {}
        # the strings of expressions whose strings may name things: annotations (`"Trainer"`)
        # and `__all__` values
        self.holder_strings: List[str] = []
        self._holding = 0  # depth inside such an expression
        # the (first, last) lines of each literal written over several lines: where flake8 may
        # read lines as one for `# noqa` (with backslash continuations)
        self.multiline_literals: List[Tuple[int, int]] = []
        self.joined_strings: List[ast.JoinedStr] = []  # every f-string: where an edit must requote

    # --- the walk: NodeVisitor's, with each node type's method looked up once ------------------
    def visit(self, node: ast.AST):
        kind = type(node)
        method = self._methods.get(kind)
        if method is None:  # the class's function, not a bound method: the walker holds no cycle
            method = getattr(type(self), "visit_" + kind.__name__, None)
            if method is None:  # a node without children (`Load`, `Add`) has nothing to visit
                method = type(self).generic_visit if kind._fields else _nothing
            self._methods[kind] = method
        return method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        fields = _NODE_FIELDS.get(node.__class__)
        if fields is None:
            fields = _NODE_FIELDS[node.__class__] = _node_fields(node.__class__)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_Constant(self, node: ast.Constant) -> None:
        """A constant holds no names (NodeVisitor's own visit_Constant is a slow shim for the old
        Num/Str visitors)."""
        if node.end_lineno != node.lineno:
            self.multiline_literals.append((node.lineno, node.end_lineno))
        if self._holding and isinstance(node.value, str):
            self.holder_strings.append(node.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        """`a + b + c ...` nests to the left, a level per operator: walked as a loop (a generated
        sum or concatenation of a few hundred terms would exceed Python's recursion limit), in
        generic_visit's order: left, right (the operator is a leaf)."""
        chain = []
        while type(node) is ast.BinOp:
            chain.append(node)
            node = node.left
        self.visit(node)
        for operation in reversed(chain):
            self.visit(operation.right)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.joined_strings.append(node)
        if node.end_lineno != node.lineno:
            self.multiline_literals.append((node.lineno, node.end_lineno))
        self.generic_visit(node)

    # --- entry point ------------------------------------------------------------------
    def run(self, tree: ast.AST) -> None:
        self.visit(tree)
        self._visit_deferred(skipping=True)

    def _visit_deferred(self, skipping: bool) -> None:
        deferred = self._deferred
        while deferred:
            scopes, fn = deferred.popleft()
            if skipping and self.skips(fn, scopes):
                self.skipped.append((scopes, fn))
                continue
            scope = scopes[-1]
            for name in _local_names(fn, self.walrus):  # local throughout: unbound until assigned
                scope.setdefault(name, UNBOUND)  # (a parameter stays one)
            self.bound_names.update(scope)
            saved, self.scopes, self.guarded = self.scopes, scopes, 0
            for stmt in fn.body:
                self.visit(stmt)
            self.scopes = saved

    def skips(self, fn: ast.AST, scopes: List[Scope]) -> bool:
        """Hook: whether a function body can be passed over, its visit sure to find nothing. What
        else the visit records (the uses of imports, the names bound, strings, f-strings) it then
        records only when `complete` is asked for it."""
        return False

    def complete(self, picked: Optional[List[int]] = None) -> None:
        """Visit the bodies `skips` passed over (those at the indices `picked` of `skipped`, else
        all), and the functions inside them, as `run` would have: what they record is then as a
        walk of those bodies records it (lists in another order). The tree must be as it was."""
        chosen = set(range(len(self.skipped)) if picked is None else picked)
        self._deferred.extend(entry for i, entry in enumerate(self.skipped) if i in chosen)
        self.skipped = [entry for i, entry in enumerate(self.skipped) if i not in chosen]
        self._visit_deferred(skipping=False)

    # --- lookups ----------------------------------------------------------------------
    def lookup(self, name: str) -> Optional[Binding]:
        scopes = self.scopes
        binding = scopes[-1].get(name)
        if binding is not None:
            return binding
        for depth in range(len(scopes) - 2, -1, -1):
            scope = scopes[depth]
            if scope.kind != "class":  # methods do not see class attributes as bare names
                binding = scope.get(name)
                if binding is not None:
                    return binding
        for module in scopes[0].star_modules:
            if self.star_exports(module, name):
                return Binding(f"{module}.{name}")
        return None

    def star_exports(self, module: str, name: str) -> bool:
        """Whether `from module import *` binds `name` as far as the rules care."""
        return False

    def name_for(self, qualname: str, at: tuple) -> Optional[str]:
        """A name that refers to the module `qualname` at (line, col), bound by an import that
        has surely run by then: '' when none is and the module's own name is free to import
        (an `import` at the top is then added), None when that name means something else."""
        binding = self.lookup(qualname)
        if binding is not None:
            if binding.qualname != qualname:
                return None
            return qualname if binding.bound_before(*at) else ""
        module = self.scopes[0]
        for name in self._module_names.get(qualname, ()):  # in the module scope's own order (`bind`)
            binding = module[name]
            if binding.qualname == qualname and self.lookup(name) is binding and binding.bound_before(*at):
                return name
        return ""

    def meaning(self, name: str) -> Optional[str]:
        """The dotted name a bare name refers to here, or None."""
        binding = self.lookup(name)
        return binding.qualname if binding else None

    def qualname(self, node: ast.AST) -> Optional[str]:
        """The dotted name an expression refers to, or None when it is not a library's."""
        if isinstance(node, ast.Name):
            return self.meaning(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def class_qualname(self, node: ast.AST) -> Optional[str]:
        """Like `qualname`, but a local subclass stands for the library class it extends."""
        name = self.qualname(node)
        if name is None and isinstance(node, ast.Name):
            binding = self.lookup(node.id)
            name = binding.subclass_of if binding else None
        return name

    def bind(self, name: str, binding: Binding) -> None:
        """A name bound to two different things in one scope (`ctx = suppress`, then in a
        branch `ctx = torch.cuda.amp.autocast`) is neither: flow is not followed, and a
        finding (let alone a fix) through it could be wrong on the other path."""
        self.bound_names.add(name)
        scope = self.scopes[-1]
        prior = scope.get(name)
        if binding.qualname and prior is not None and prior is not UNBOUND and prior.qualname != binding.qualname:
            binding = Binding(None, statement=binding.statement, guarded=binding.guarded)  # still tracks uses
        scope[name] = binding
        if binding.qualname and scope is self.scopes[0]:
            # (what the module scope holds was bound here; a name that meant anything else first
            # never means a dotted name again, so these names come in the scope's order)
            self._module_names.setdefault(binding.qualname, {})[name] = None

    # --- binding statements -----------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        guarded = bool(self.guarded)
        for alias in node.names:
            if alias.asname:
                self.bind(alias.asname, Binding(alias.name, statement=node, guarded=guarded))
            else:
                root = alias.name.split(".")[0]
                self.bind(root, Binding(root, statement=node, guarded=guarded))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                if not node.level and node.module:
                    self.scopes[-1].star_modules.append(node.module)
                continue
            qualname = f"{node.module}.{alias.name}" if not node.level and node.module else None
            self.bind(alias.asname or alias.name, Binding(qualname, statement=node, guarded=bool(self.guarded)))

    def _assign(self, targets: Iterable[ast.AST], value: Optional[ast.AST]) -> None:
        alias = self.qualname(value) if value is not None else None
        for target in targets:
            if isinstance(target, ast.Name):
                self.bind(target.id, Binding(alias) if alias else UNKNOWN)
            else:
                self.visit(target)  # `obj.attr = ...` reads obj
                for name in _target_names(target) if isinstance(target, (ast.Tuple, ast.List, ast.Starred)) else ():
                    self.bind(name, UNKNOWN)

    def _visit_holding(self, node: ast.AST, holds: bool = True) -> None:
        """Visit an expression whose strings may name things (if `holds`)."""
        self._holding += holds
        self.visit(node)
        self._holding -= holds

    def visit_Assign(self, node: ast.Assign) -> None:
        self._visit_holding(node.value, any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
        self._assign(node.targets, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        exports = isinstance(node.target, ast.Name) and node.target.id == "__all__"
        self.in_annotation += 1
        self._visit_holding(node.annotation, not exports)
        self.in_annotation -= 1
        if node.value is not None:
            self._visit_holding(node.value, exports)
        self._assign([node.target], node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._visit_holding(node.value, isinstance(node.target, ast.Name) and node.target.id == "__all__")
        self._assign([node.target], None)

    def visit_Delete(self, node: ast.Delete) -> None:
        """`del x` unbinds what was bound (no binding is followed through it), and reads `a` in
        `del a[i]`."""
        for target in node.targets:
            self.bound_names.update(_target_names(target))
            self.visit(target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bind(node.target.id, UNKNOWN)

    def _visit_loop(self, node) -> None:
        self.visit(node.iter)
        self._assign([node.target], None)
        self._visit_guarded(node.body + node.orelse)

    visit_For = visit_AsyncFor = _visit_loop

    def visit_While(self, node: ast.While) -> None:
        self.visit(node.test)
        self._visit_guarded(node.body + node.orelse)

    def _visit_guarded(self, statements) -> None:
        """Statements that run on some paths only."""
        self.guarded += 1
        for stmt in statements:
            self.visit(stmt)
        self.guarded -= 1

    def _visit_with(self, node) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._assign([item.optional_vars], None)
        for stmt in node.body:
            self.visit(stmt)

    visit_With = visit_AsyncWith = _visit_with

    # --- scopes -----------------------------------------------------------------------
    def _visit_function(self, node) -> None:
        for expr in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(expr)
        self.in_annotation += 1
        for arg in _parameters(node.args):
            if arg.annotation is not None:
                self._visit_holding(arg.annotation)
        if node.returns is not None:
            self._visit_holding(node.returns)
        self.in_annotation -= 1
        self.bind(node.name, UNKNOWN)
        self.on_function(node)
        scope = Scope("function")  # (the names its body binds are added when it is visited)
        for arg in _parameters(node.args):
            scope[arg.arg] = UNKNOWN
        receiver = self._receiver(node)
        if receiver is not None:  # `self` of a subclass of a library class: reads on it are the library's
            scope[receiver] = Binding(None, instance_of=self.scopes[-1].instance_of, classes=self.scopes[-1].classes)
        self.bound_names.update(scope)
        self._deferred.append(([*self.scopes, scope], node))

    def _receiver(self, node) -> Optional[str]:
        """The instance parameter of a method of a class that derives from a library class."""
        positional = [*getattr(node.args, "posonlyargs", []), *node.args.args]
        decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
        if self.scopes[-1].kind != "class" or self.scopes[-1].instance_of is None or not positional \
                or decorators & {"staticmethod", "classmethod"}:
            return None
        return positional[0].arg

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    def on_function(self, node) -> None:
        """Hook: a function definition, seen in its enclosing scope."""

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for expr in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(expr)
        scope = Scope("function")
        for arg in _parameters(node.args):
            scope[arg.arg] = UNKNOWN
        self.bound_names.update(scope)
        self.scopes.append(scope)
        self.visit(node.body)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr)
        base = next(filter(None, map(self.class_qualname, node.bases)), None)
        inherited = [self.lookup(b.id) for b in node.bases if isinstance(b, ast.Name)]
        classes = (node, *(c for b in inherited if b is not None for c in b.classes))
        self.scopes.append(Scope("class"))
        self.scopes[-1].instance_of, self.scopes[-1].classes = base, classes
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.bind(node.name, Binding(None, subclass_of=base, classes=classes))

    def _visit_comprehension(self, node) -> None:
        first, *rest = node.generators
        self.visit(first.iter)
        self.scopes.append(Scope("comprehension"))
        for generator in node.generators:
            if generator is not first:
                self.visit(generator.iter)
            self._assign([generator.target], None)
            for condition in generator.ifs:
                self.visit(condition)
        for field_name in ("elt", "key", "value"):
            if hasattr(node, field_name):
                self.visit(getattr(node, field_name))
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    # --- try / except ImportError ---------------------------------------------------------
    def visit_Try(self, node) -> None:
        """`try: <new> except ImportError: <old>`: the names keep the try body's binding,
        since the body is the path taken wherever the new spelling exists."""
        scope = self.scopes[-1]
        before = dict(scope)
        guards_import = any(self._catches_import_error(h) for h in node.handlers)
        self.in_import_probe += guards_import
        for stmt in node.body:
            self.visit(stmt)
        self.in_import_probe -= guards_import
        from_body = {k: v for k, v in scope.items() if before.get(k) is not v}
        falls_back = guards_import or any(self._catches_import_error(h, _FALLBACK_ERRORS) for h in node.handlers)
        shim = falls_back and self.uses_new_spelling(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                self.visit(handler.type)
            if handler.name:
                self.bind(handler.name, UNKNOWN)
            fallback = shim and self._catches_import_error(handler, _FALLBACK_ERRORS)
            self.in_fallback += fallback
            before_handler = dict(scope)
            self._visit_guarded(handler.body)
            self.in_fallback -= fallback
            if guards_import and not shim:  # a probe with a fallback (`except AttributeError: fwd = noop`)
                for name, binding in from_body.items():
                    if scope.get(name) is not before_handler.get(name):
                        binding.probed = True
        if guards_import:
            scope.update(from_body)
        self._visit_guarded(node.orelse)
        for stmt in node.finalbody:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        """`if <version check>: <new> else: <old>` (either way round) is a shim too: the old
        branch is a fallback, and names keep the new branch's binding. An `elif` chain is walked
        as a loop, not a recursion (a generated chain of hundreds of branches would exceed
        Python's recursion limit): each `elif` is visited exactly as if `visit` had been called
        on it inside its parent's `else` branch, whose effects are undone innermost first."""
        scope = self.scopes[-1]
        enclosing: List[Tuple[bool, bool, Optional[Dict[str, object]], Dict[str, object]]] = []
        rest = _ChainRest(node) if _is_elif(node.orelse) else None  # a chain: its rest is asked at every level
        while True:
            self.visit(node.test)
            new_first = new_second = False
            if node.orelse:
                new_first = self.uses_new_spelling(node.body)
                new_second = (rest.uses_new_spelling(self, len(enclosing)) if rest is not None
                              else self.uses_new_spelling(node.orelse))
            # which releases take each branch matters only to a shim: one branch with the new spelling
            takes_body = version_check(node.test) if new_first != new_second else None
            takes_else = {NEWER: OLDER, OLDER: NEWER}.get(takes_body, takes_body)
            kept: Dict[str, object] = {}
            branches = ((node.body, new_second, new_first, takes_body),
                        (node.orelse, new_first, new_second, takes_else))
            for branch, other_new, new, releases in branches:
                dual_path = other_new and not new  # the other branch has the new spelling: never fixed
                # reported only when it is the branch for newer releases (the deprecated spelling in
                # the path every current release takes) or the check is no version check at all
                fallback = dual_path and releases is not None and releases != NEWER
                keeps = new and not other_new and takes_body is not None  # the new branch's bindings
                before = dict(scope) if keeps else None
                self.in_fallback += fallback
                self.in_dual_path += dual_path
                if branch is node.orelse and _is_elif(branch):
                    self.guarded += 1
                    enclosing.append((fallback, dual_path, before, kept))
                    break
                self._visit_guarded(branch)
                self.in_fallback -= fallback
                self.in_dual_path -= dual_path
                if before is not None:
                    kept.update({k: v for k, v in scope.items() if before.get(k) is not v})
            else:
                scope.update(kept)
                break
            node = node.orelse[0]
        for fallback, dual_path, before, kept in reversed(enclosing):
            self.guarded -= 1
            self.in_fallback -= fallback
            self.in_dual_path -= dual_path
            if before is not None:
                kept.update({k: v for k, v in scope.items() if before.get(k) is not v})
            scope.update(kept)

    def uses_new_spelling(self, body: List[ast.AST], roots: Optional[Dict[str, Optional[str]]] = None) -> bool:
        """Hook: whether a block is the new-spelling half of a compatibility shim. `roots`, if
        given, learns the names the answer was read through, with what each meant then."""
        return False

    @staticmethod
    def _catches_import_error(handler: ast.ExceptHandler, errors=_IMPORT_ERRORS) -> bool:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(
            (isinstance(t, ast.Name) and t.id in errors)
            or (isinstance(t, ast.Attribute) and t.attr in errors)
            for t in types
        )
