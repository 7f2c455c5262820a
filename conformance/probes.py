"""Questions a released wheel's source can answer with `ast`: does a module bind a name, does a
class take a parameter, does a function or class warn that it is deprecated."""
from __future__ import annotations

import ast
import types
from typing import Callable, Iterator, List, Optional

from wheels import Release

Probe = Callable[[Release], bool]

# Calls that announce a deprecation in these libraries: typing_extensions' @deprecated (torch),
# rank_zero_deprecation (Lightning), an enum's deprecate() hook, warnings.warn with a category.
_DEPRECATION_CALLS = {"deprecated", "rank_zero_deprecation", "_deprecation"}
_DEPRECATION_CATEGORIES = {"FutureWarning", "DeprecationWarning", "LightningDeprecationWarning"}


def _tree(release: Release, path: str) -> Optional[ast.Module]:
    text = release.source(path)
    return ast.parse(text) if text is not None else None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _strings(node: ast.AST) -> str:
    return " ".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _deprecations(node: ast.AST) -> Iterator[ast.Call]:
    """Deprecation calls in a node's body and decorators."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        callee = _name(call.func)
        if callee in _DEPRECATION_CALLS:
            yield call
        elif callee == "warn" and any(_name(a) in _DEPRECATION_CATEGORIES for a in [*call.args, *(
                k.value for k in call.keywords)]):
            yield call


def _definition(tree: ast.Module, *names: str) -> Optional[ast.AST]:
    """A class, function or method: `("Trainer", "amp_backend")` is a method of a class."""
    scope: ast.AST = tree
    for name in names:
        scope = next((n for n in getattr(scope, "body", []) if isinstance(
            n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
        if scope is None:
            return None
    return scope


def binds(path: str, name: str) -> Probe:
    """The module binds `name` at top level: a definition, an assignment or an import."""
    def probe(release: Release) -> bool:
        tree = _tree(release, path)
        if tree is None:
            return False
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                    return True
        return False
    return probe


def has_file(path: str) -> Probe:
    return lambda release: release.has(path)


def parameter(path: str, owner: str, name: str, function: Optional[str] = "__init__") -> Probe:
    """`owner.function` (a class's `__init__` by default; `owner` itself with function=None)
    takes a parameter `name`."""
    def probe(release: Release) -> bool:
        tree = _tree(release, path)
        node = _definition(tree, *((owner,) if function is None else (owner, function))) if tree else None
        if node is None:
            return False
        arguments = node.args
        return name in [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    return probe


def member(path: str, owner: str, name: str) -> Probe:
    """A class body binds `name`: a dataclass field, an enum member, a method or property."""
    def probe(release: Release) -> bool:
        tree = _tree(release, path)
        node = _definition(tree, owner) if tree else None
        if node is None:
            return False
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and _name(statement.target) == name:
                return True
            if isinstance(statement, ast.Assign) and any(_name(t) == name for t in statement.targets):
                return True
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
                return True
        return False
    return probe


class warns:
    """The class, function or method `names` (empty: anywhere in the module) announces a
    deprecation, with `mentioning` in the call's text if given. `messages` gives the texts,
    whose versions ("deprecated in v1.9.0", "removed in version 5") must agree with the rule."""

    def __init__(self, path: str, *names: str, mentioning: str = ""):
        self.path, self.names, self.mentioning = path, names, mentioning

    def messages(self, release: Release) -> List[str]:
        tree = _tree(release, self.path)
        node = (_definition(tree, *self.names) if self.names else tree) if tree else None
        texts = [_strings(call) for call in _deprecations(node)] if node is not None else []
        return [text for text in texts if self.mentioning in text]

    def __call__(self, release: Release) -> bool:
        return bool(self.messages(release))


class warns_for_value(warns):
    """A deprecation warning that mentions `field` is raised for `self.<field> = value`: the
    `if` that guards it, evaluated with that value (transformers' `fp16_backend != "auto"`)."""

    def __init__(self, path: str, field: str, value: object):
        super().__init__(path, mentioning=field)
        self.field, self.value = field, value

    def messages(self, release: Release) -> List[str]:
        tree = _tree(release, self.path)
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.If):
                texts = [_strings(c) for s in node.body for c in _deprecations(s) if self.field in _strings(c)]
                if texts:
                    condition = compile(ast.Expression(node.test), self.path, "eval")
                    self_ = types.SimpleNamespace(**{self.field: self.value})
                    return texts if eval(condition, {}, {"self": self_}) else []
        return []


def text_anywhere(text: str) -> Probe:
    """Some Python file of the wheel contains `text` (a message, a new spelling)."""
    return lambda release: any(text in source for _, source in release.python_sources())


def library_holds(path: str, text: str) -> Probe:
    """The compiled library `path` of the wheel holds the string `text`: a message its C++ raises."""
    return lambda release: text.encode() in (release.raw(path) or b"")


def mentions(path: str, text: str) -> Probe:
    """The wheel's file `path` holds `text`: an attribute a class reads or sets on itself, or a
    signature of torch/_C/__init__.pyi (the stubs of the C++ bindings, which have no Python source)."""
    return lambda release: text in (release.source(path) or "")
