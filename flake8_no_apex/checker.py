"""Apply the rule table to a module: one walk, resolved names, exact node positions."""
from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from packaging.version import Version

from .edits import Source
from .prefilter import _NOT_IDENTIFIER_BYTES
from .resolve import ScopeVisitor, canonical, chain_root, instance_attributes, push_children, walk
from .rules import RULES
from .table import (
    LIBRARY_ROOTS,
    AttributeRead,
    Keyword,
    Modules,
    Parameter,
    Finding,
    Rule,
    Site,
    Symbols,
    symbol_matches,
)

_ROOT_TO_LIBRARY = {root: lib for lib, roots in LIBRARY_ROOTS.items() for root in roots}


def _holds_keys(value: ast.AST, keys: Tuple[str, ...]) -> bool:
    """A dict literal or `dict(...)` call with one of the keys: a config section (`"amp": {"enabled": true}`)."""
    if isinstance(value, ast.Dict):
        return any(_literal(k) in keys for k in value.keys if k is not None)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and any(
        k.arg in keys for k in value.keywords)


_INTERPRETERS = ("python", "python3", "torchrun", "deepspeed", "accelerate")


def _runs_a_script(elements: List[ast.AST], items: List[object]) -> bool:
    """An argument vector that starts a training script (`[sys.executable, "train.py", ...]`,
    `["torchrun", "-m", "pkg.train", ...]`): the options in it are the script's, whether the module
    that builds it imports the script's library or not."""
    if not elements:
        return False
    first = elements[0]
    interpreter = items[0] in _INTERPRETERS or isinstance(items[0], str) and items[0].endswith(
        ("/python", "/python3")) or isinstance(first, ast.Attribute) and first.attr == "executable" and isinstance(
        first.value, ast.Name) and first.value.id == "sys"
    return interpreter and any(isinstance(item, str) and (item.endswith(".py") or item == "-m") for item in items[1:])


def _calls_method_of(call: Optional[ast.Call], hint: str, method: str) -> bool:
    """`accelerator.autocast(...)`, `self.accelerator.autocast(...)`: the method on a receiver whose
    last identifier holds the hint."""
    func = getattr(call, "func", None)
    if not (isinstance(func, ast.Attribute) and func.attr == method):
        return False
    return hint in _last_identifier(func.value).lower()


def _last_identifier(receiver: ast.AST) -> str:
    """`accelerator` of `accelerator` and of `self.accelerator`: what a receiver is named."""
    return receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", "")


# Calls that import or probe a module named by a string: `importlib.import_module("apex.amp")`,
# `__import__("apex")`, and the availability checks Lightning used, `RequirementCache("apex")`
# and `module_available("apex.amp")` (which the unrelated PyPI package `apex` also satisfies).
_DYNAMIC_IMPORTS = ("importlib.import_module", "importlib.util.find_spec")
_AVAILABILITY_CHECKS = ("RequirementCache", "module_available")


class RuleIndex:
    """The rule table, keyed the way the checker looks things up."""

    def __init__(self, rules: Iterable[Rule]):
        self.symbols: Dict[str, List[Tuple[str, str, Rule]]] = defaultdict(list)
        self._symbol_of: Dict[str, Optional[Tuple[str, Rule]]] = {}  # `symbol`'s answers so far
        self.modules: List[Tuple[Modules, Rule]] = []
        # (prefix, replacement, rule) of the deprecated modules by their root, in table order
        self._module_prefixes: Dict[str, List[Tuple[str, str, Rule]]] = defaultdict(list)
        self.roots: Dict[str, Tuple[str, str, Rule]] = {}  # package root -> (subject, replacement, rule)
        self.keywords: Dict[str, List[Tuple[Keyword, Rule]]] = defaultdict(list)
        self.positional: List[Tuple[Keyword, Rule]] = []
        self.dict_keys: Dict[str, List[Tuple[Keyword, Rule]]] = defaultdict(list)
        self.argv: Dict[str, List[Tuple[Keyword, Rule]]] = defaultdict(list)
        self.attributes: Dict[str, List[Tuple[AttributeRead, Rule]]] = defaultdict(list)
        self.parameters: Dict[str, List[Tuple[Parameter, Rule]]] = defaultdict(list)
        self.shim_spellings = tuple(sorted({s for rule in rules for s in rule.shim_spellings}))
        self._shim_names = frozenset(self.shim_spellings)
        self._shim_prefixes = tuple(f"{s}." for s in self.shim_spellings)  # for str.startswith
        self._module_of: Dict[str, Optional[Tuple[str, str, Rule]]] = {}  # `deprecated_module`'s answers
        # the Trainer's keyword rows by name: what a config's `trainer` section can set (YAML, a
        # Hydra override `trainer.precision=16`, `cfg.trainer.precision = 16`)
        self.trainer_settings: Dict[str, List[Tuple[Keyword, Rule]]] = defaultdict(list)
        for rule in rules:
            for m in rule.match:
                if isinstance(m, Symbols):
                    for name, replacement in m.names.items():
                        self.symbols[name.rsplit(".", 1)[-1]].append((f"{m.module}:{name}", replacement, rule))
                elif isinstance(m, Modules):
                    self.modules.append((m, rule))
                    if m.root:
                        self.roots[m.root] = (m.root_subject, m.root_replacement, rule)
                elif isinstance(m, Keyword):
                    self.keywords[m.name].append((m, rule))
                    if "lightning:Trainer" in m.callees and not m.position:
                        self.trainer_settings[m.name].append((m, rule))
                    if m.position is not None:
                        self.positional.append((m, rule))
                    if m.dict_forms:
                        self.dict_keys[m.name].append((m, rule))
                    if m.argv:
                        self.argv[m.name].append((m, rule))
                elif isinstance(m, AttributeRead):
                    self.attributes[m.name].append((m, rule))
                elif isinstance(m, Parameter):
                    self.parameters[m.function].append((m, rule))
        for m, rule in self.modules:
            for prefix, replacement in m.prefixes.items():
                self._module_prefixes[prefix.split(".")[0]].append((prefix, replacement, rule))
        # the words a finding spells where it is (`Checker.skips`): a symbol's, a module root's, a
        # keyword's, an attribute's, a parameter's, a positional argument's callee's; and `import`
        self.words = frozenset({
            *self.symbols, *self._module_prefixes, *self.roots, *self.keywords, *self.dict_keys, *self.argv,
            *self.attributes, *self.parameters, *(m.name for rows in self.parameters.values() for m, _ in rows),
            *(part for m, _ in self.positional for spec in m.callees for part in spec.split(":")[1].split(".")),
            "import"})
        self._byte_words = frozenset(word.encode() for word in self.words)
        self._callee_names = frozenset(spec.rsplit(".", 1)[-1].split(":")[-1] for m, _ in self.positional
                                       for spec in m.callees)  # what a callee of theirs is last named
        self._reaches: Dict[str, bool] = {}  # `reaches_rule`'s answers by dotted name
        for specs in self.symbols.values():  # the most specific module wins: `...utilities.enums:AMPType`
            specs.sort(key=lambda entry: -len(entry[0].split(":")[0]))  # before `...utilities:AMPType`
        for prefixes in self._module_prefixes.values():  # and `apex.contrib.fmha` before `apex.contrib`
            prefixes.sort(key=lambda entry: -len(entry[0]))

    def symbol(self, qualname: str) -> Optional[Tuple[str, Rule]]:
        """(replacement, rule) for a qualified name, or None; each name is worked out once (a
        module reads the same few names over and over)."""
        if qualname in self._symbol_of:
            return self._symbol_of[qualname]
        canon = canonical(qualname)
        hit = next(((replacement, rule) for spec, replacement, rule in self.symbols.get(canon.rsplit(".", 1)[-1], ())
                    if symbol_matches(spec, canon)), None)
        self._symbol_of[qualname] = hit
        return hit

    def deprecated_module(self, qualname: str) -> Optional[Tuple[str, str, Rule]]:
        """(deprecated module, replacement, rule) when `qualname` is or lies inside one; worked
        out once per name (asked at every read of an imported name)."""
        if qualname in self._module_of:
            return self._module_of[qualname]
        hit = next(((prefix, replacement, rule)
                    for prefix, replacement, rule in self._module_prefixes.get(qualname.split(".", 1)[0], ())
                    if qualname == prefix or qualname.startswith(prefix + ".")), None)
        self._module_of[qualname] = hit
        return hit

    def reaches_rule(self, binding) -> bool:
        """Whether code may reach a rule through a name so bound without spelling any of `words`:
        an alias of a deprecated symbol or module, of a package root a rule watches, or of a
        positional argument's callee, or a local subclass of one (called, it is its base; its
        attributes are read with their own names)."""
        return self._reaches_rule(binding.qualname) or self._reaches_rule(binding.subclass_of)

    def _reaches_rule(self, qualname: Optional[str]) -> bool:
        if not qualname:
            return False
        reaches = self._reaches.get(qualname)
        if reaches is None:
            reaches = self._reaches[qualname] = self.symbol(qualname) is not None or \
                self.deprecated_module(qualname) is not None or qualname.split(".", 1)[0] in self.roots or \
                qualname.rsplit(".", 1)[-1] in self._callee_names and any(
                    symbol_matches(spec, canonical(qualname)) for m, _ in self.positional for spec in m.callees)
        return reaches

    def is_shim_spelling(self, name: str) -> bool:
        """Whether a dotted name is a new spelling a compatibility shim tests for, or inside one."""
        return name in self._shim_names or name.startswith(self._shim_prefixes)


@lru_cache(maxsize=None)
def default_index() -> RuleIndex:
    return RuleIndex(RULES)


def _literal(node: Optional[ast.AST]) -> object:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        return node.value
    return None


def _branches(m: Keyword, value: ast.AST) -> List[ast.AST]:
    """The values a keyword may take: both arms of `16 if fp16 else 32` (nested too), when the
    row looks for particular literal values; otherwise the expression itself."""
    if m.values is None or not isinstance(value, ast.IfExp):
        return [value]
    return [*_branches(m, value.body), *_branches(m, value.orelse)]


class Checker(ScopeVisitor):
    """Finds every rule's usages in one module."""

    def __init__(
        self,
        index: Optional[RuleIndex] = None,
        floors: Optional[Mapping[str, Version]] = None,
        walrus: bool = True,
        source: Optional[Source] = None,
    ):
        super().__init__(walrus)
        # the module's text, for `skips` (without it every function body is visited)
        self._source = source
        self._translated: Optional[bytes] = None  # an ASCII module's text, its non-identifier bytes blanked
        self._reaching: Dict[int, Tuple[Dict[str, object], FrozenSet[object]]] = {}  # `_reaching_names`
        self._skipped_words: List[object] = []  # the words of each skipped body (a set once asked)
        self.index = index or default_index()
        self.floors = dict(floors or {})
        self.findings: Dict[Tuple[int, int, str], Finding] = {}
        # what the version targets hide: a project on older releases cannot act on it yet
        self.hidden: Dict[Tuple[int, int, str], Finding] = {}
        self.imported: set = set()  # libraries the module imports
        # reported only if the library is imported: (library, finding, hidden by the targets)
        self._pending: List[Tuple[str, Finding, bool]] = []
        self._bare_roots: List[Tuple[ast.AST, ast.alias, bool]] = []  # (import, alias, in an import probe)
        self._root_uses: Dict[str, List[str]] = defaultdict(list)
        self.calls: Dict[int, ast.Call] = {}  # callee node id -> its call
        self.imports: List[Tuple[ast.alias, ast.stmt, object]] = []  # (alias, statement, binding)
        self.hints: set = set()  # ids of the names and attribute chains read in annotations
        # what the instances of each local class get from it (`instance_attributes`, a walk of
        # the whole class), by the ids of the class and its local bases: the tree outlives the walk
        self._class_attributes: Dict[Tuple[int, ...], FrozenSet[str]] = {}

    def check(self, tree: ast.AST) -> List[Finding]:
        self.run(tree)
        self._source = None  # (a Source the fixer gives `all_joined_strings` holds no cycle through it)
        self._finish_bare_roots()
        for library, finding, hidden in self._pending:
            if library in self.imported:
                self._add(finding, hidden)
        for key in self.findings.keys() & self.hidden.keys():  # a place another row reports is no hidden one
            del self.hidden[key]
        return sorted(self.findings.values(), key=lambda f: (f.line, f.col, f.code))

    # --- bodies that cannot hold a finding ------------------------------------------------
    def skips(self, fn: ast.AST, scopes) -> bool:
        """A function body (the module, its classes and the functions around it visited) whose
        text spells none of the words a finding needs where it stands (`RuleIndex.words`) nor a
        name that reaches a rule from the scopes it sees (`RuleIndex.reaches_rule`) cannot hold a
        finding: what a finding reads is spelled at it, but for the names it goes through.
        Most of a large module's functions are such (Lightning's: 44% of the nodes)."""
        source = self._source
        if source is None:
            return False
        first = fn.body[0]  # from its decorators on (a decorated statement's line is its `def`'s)
        decorators = getattr(first, "decorator_list", None)
        start, end = source.lines_span(decorators[0].lineno if decorators else first.lineno, fn.end_lineno)
        if self._translated is None:
            self._translated = source.text.encode("ascii").translate(_NOT_IDENTIFIER_BYTES) \
                if source.text.isascii() else b""
        if self._translated:
            words: List[object] = self._translated[start:end].split()
            needed = self.index._byte_words
        else:  # characters, split as the pre-filter splits them (prefilter.present says why)
            text = source.text[start:end].encode("utf-8", "surrogatepass").translate(_NOT_IDENTIFIER_BYTES)
            words = text.decode("utf-8", "surrogatepass").split()
            needed = self.index.words
        if not needed.isdisjoint(words):
            return False
        # the scopes it sees, as `lookup` does (its own holds only parameters and the unbound yet)
        if any(not self._reaching_names(scope).isdisjoint(words) for scope in scopes[:-1] if scope.kind != "class"):
            return False
        self._skipped_words.append(words)
        return True

    def _reaching_names(self, scope) -> FrozenSet[object]:
        """The names of a scope that reach a rule (in the text's kind: bytes for an ASCII module).
        A scope is whole when a body it sees is asked about: the module's and each class's walked
        first, a function's before the functions inside it."""
        known = self._reaching.get(id(scope))
        if known is None:
            names = [name for name, binding in scope.items() if self.index.reaches_rule(binding)]
            # (the scope is kept with its names: an id is unique only while its object lives)
            known = self._reaching[id(scope)] = (scope, frozenset(
                [name.encode() for name in names] if self._translated else names))
        return known[1]

    def complete(self, names: Optional[Iterable[str]] = None) -> bool:
        """Visit the skipped bodies (`ScopeVisitor.complete`); with `names`, those that spell one
        of them: only such a body can read, bind or name in a string a name in question, so the
        uses of its import, the names bound and the strings are then whole as far as it is
        concerned. Whether any was visited. (Asked while the tree is the one walked.)"""
        if not self.skipped:
            return False
        if names is None:
            super().complete()
            self._skipped_words = []
            return True
        wanted = {name.encode() for name in names} if self._translated else set(names)
        self._skipped_words = [words if isinstance(words, frozenset) else frozenset(words)
                               for words in self._skipped_words]
        picked = [i for i, words in enumerate(self._skipped_words) if not words.isdisjoint(wanted)]
        if not picked:
            return False
        super().complete(picked)
        chosen = set(picked)
        self._skipped_words = [words for i, words in enumerate(self._skipped_words) if i not in chosen]
        return True

    def all_joined_strings(self) -> List[ast.JoinedStr]:
        """Every f-string of the module, those of the skipped bodies too (found without their visit)."""
        return self.joined_strings + [node for _, fn in self.skipped for statement in fn.body
                                      for node in walk(statement) if isinstance(node, ast.JoinedStr)]

    def hidden_findings(self) -> List[Finding]:
        """What the rules would report but the version targets hide (after `check`)."""
        return sorted(self.hidden.values(), key=lambda f: (f.line, f.col, f.code))

    # --- reporting --------------------------------------------------------------------
    def _add(self, finding: Finding, hidden: bool = False) -> None:
        (self.hidden if hidden else self.findings).setdefault((finding.line, finding.col, finding.code), finding)

    def report(self, rule: Rule, site: Site, position: Tuple[int, int], library: Optional[str] = None) -> None:
        if self.in_fallback and rule.shim_exempt:
            return
        hidden = not rule.applies(self.floors)
        if rule.fixer is not None and not hidden:
            names = {module: self.name_for(module, position) for module in rule.fix_modules}
            site = site._replace(module_names=names, shim=bool(self.in_dual_path))
        finding = Finding(*position, rule.code, rule.message(site, self.floors), rule, site)
        if library is None:
            self._add(finding, hidden)
        else:
            self._pending.append((library, finding, hidden))

    # --- imports ----------------------------------------------------------------------
    def _imported(self, module: Optional[str]) -> None:
        if module:
            library = _ROOT_TO_LIBRARY.get(module.split(".")[0])
            if library:
                self.imported.add(library)

    def visit_Import(self, node: ast.Import) -> None:
        super().visit_Import(node)
        for alias in node.names:
            self._imported(alias.name)
            position = (alias.lineno, alias.col_offset)
            binding = self.scopes[-1][alias.asname or alias.name.split(".")[0]]
            self.imports.append((alias, node, binding))
            hit = self.index.deprecated_module(alias.name)
            if hit:
                prefix, replacement, rule = hit
                self.report(rule, Site(alias, prefix, replacement, statement=node, binding=binding), position)
            elif alias.name in self.index.roots:
                self._bare_roots.append((node, alias, self.in_import_probe > 0))
            else:
                self._import_symbol(alias.name, Site(alias, alias.name, statement=node, binding=binding), position)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        super().visit_ImportFrom(node)
        aliases = [alias for alias in node.names if alias.name != "*"]
        bindings = {id(alias): self.scopes[-1][alias.asname or alias.name] for alias in aliases}
        self.imports += [(alias, node, bindings[id(alias)]) for alias in aliases]
        if node.level or not node.module:
            return
        self._imported(node.module)
        hit = self.index.deprecated_module(node.module)
        if hit:
            # `from apex.contrib import fmha`: a module below with a row of its own is its own finding
            deeper = {id(a): h for a in aliases if a.name != "*"
                      and (h := self.index.deprecated_module(f"{node.module}.{a.name}")) and h[0] != hit[0]}
            for alias in aliases:
                if id(alias) in deeper:
                    prefix, replacement, rule = deeper[id(alias)]
                    self.report(rule, Site(alias, prefix, replacement, statement=node, binding=bindings[id(alias)]),
                                (alias.lineno, alias.col_offset))
            if len(deeper) < len(node.names):  # `import *` too
                prefix, replacement, rule = hit
                self.report(rule, Site(node, prefix, replacement, statement=node), (node.lineno, node.col_offset))
            return
        for alias in aliases:
            qualname = f"{node.module}.{alias.name}"
            position = (alias.lineno, alias.col_offset)
            binding = bindings[id(alias)]
            hit = self.index.deprecated_module(qualname)
            if hit:
                prefix, replacement, rule = hit
                self.report(rule, Site(alias, prefix, replacement, statement=node, binding=binding), position)
            else:
                self._import_symbol(qualname, Site(alias, qualname, statement=node, binding=binding), position)

    def _import_symbol(self, qualname: str, site: Site, position: Tuple[int, int]) -> None:
        hit = self.index.symbol(qualname)
        if hit:
            replacement, rule = hit
            self.report(rule, site._replace(replacement=replacement), position)

    def star_exports(self, module: str, name: str) -> bool:
        return self.index.symbol(f"{module}.{name}") is not None

    def _finish_bare_roots(self) -> None:
        """`import apex` is fine only when the module uses nothing but maintained parts."""
        for node, alias, probe in self._bare_roots:
            uses = self._root_uses.get(alias.name, [])
            deprecated = [hit for hit in map(self.index.deprecated_module, uses) if hit]
            if uses and not deprecated and alias.name not in uses:
                continue
            if probe and not uses:  # `try: import apex` / `except ImportError: HAVE_APEX = False`: is it installed?
                continue
            # the part the module uses that matters most: a removed one before a maintained one
            prefix, replacement, rule = min(deprecated, key=lambda hit: (hit[2].default_off, -len(hit[0]))) \
                if deprecated else self.index.roots[alias.name]
            site = Site(alias, prefix, replacement, statement=node)
            self.report(rule, site, (alias.lineno, alias.col_offset))

    def uses_new_spelling(self, body: List[ast.AST], roots: Optional[Dict[str, Optional[str]]] = None) -> bool:
        """Whether a block imports or names a new spelling (`torch.amp`, or inside it). Of an
        attribute chain only the whole is asked: `a.b.c` is inside a spelling if `a.b` is."""
        stack: List[object] = list(body)
        while stack:
            node = stack.pop()
            if not isinstance(node, ast.AST):
                continue
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{a.name}" for a in node.names] if node.module and not node.level else []
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Attribute):
                root = chain_root(node)
                stack.append(root)  # `f(torch.amp.x).y`: the call may hold chains of its own
                if not isinstance(root, ast.Name):
                    continue
                meaning = self.meaning(root.id)
                if roots is not None:
                    roots[root.id] = meaning
                if meaning is None:  # the chain names nothing
                    continue
                names = [self.qualname(node)]
            else:
                push_children(node, stack)
                continue
            if any(map(self.index.is_shim_spelling, names)):
                return True
        return False

    # --- references -------------------------------------------------------------------
    def _use(self, qualname: Optional[str]) -> None:
        if qualname:
            root = qualname.split(".", 1)[0]
            if root in self.index.roots:
                self._root_uses[root].append(qualname)

    def _symbol_reference(self, node: ast.AST, qualname: Optional[str], binding=None) -> bool:
        if qualname is None:
            return False
        hit = self.index.symbol(qualname)
        if hit is None:
            return False
        replacement, rule = hit
        self._use(qualname)
        call = self.calls.get(id(node))
        site = Site(node, qualname, replacement, call=call, binding=binding)
        self.report(rule, site, (node.lineno, node.col_offset))
        return True

    def visit_Name(self, node: ast.Name) -> None:
        """A read of a name: its import's binding records it (`_read_through`, inlined: this is
        the commonest node), then it is a symbol reference or a use of a library name."""
        if node.ctx.__class__ is not ast.Load:
            return
        if self.in_annotation:
            self.hints.add(id(node))
        binding = self.lookup(node.id)
        if binding is None:
            return
        if binding.statement is not None:
            binding.uses.append(node)
            self._maintained_use(node, binding)
        qualname = binding.qualname
        if qualname and not self._symbol_reference(node, qualname, binding):
            self._use(qualname)

    def _maintained_use(self, node: ast.Name, binding) -> None:
        """A use of a name imported from a maintained apex part (`isinstance(opt,
        DistributedFusedAdam)`, `FastLayerNormFN.apply(...)`): for a team removing apex, each use
        is a place to change, not only the import (APX110, opt-in)."""
        hit = self.index.deprecated_module(binding.qualname) if binding.qualname else None
        if hit is not None and hit[2].default_off and binding.qualname != hit[0]:
            prefix, replacement, rule = hit
            site = Site(node, binding.qualname, replacement, binding=binding)
            self.report(rule, site, (node.lineno, node.col_offset))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """A chain `a.b.c`, from the whole inwards: the longest part that is a deprecated
        symbol is reported (and the root's binding read), else each link's attribute read. The
        root is looked up once for the whole chain."""
        if not isinstance(node.ctx, ast.Load):
            self.visit(node.value)
            return
        links = []
        root: ast.AST = node
        while isinstance(root, ast.Attribute):
            links.append(root)
            root = root.value
        if self.in_annotation:
            self.hints.update(map(id, links))
        binding = self.lookup(root.id) if isinstance(root, ast.Name) else None
        if binding is None or not binding.qualname:  # no link names a library's symbol
            for link in links:
                self._attribute_read(link)
            if binding is not None:
                self._read_through(root, binding)  # (a binding without a name maintains no apex part)
            elif not isinstance(root, ast.Name):
                self.visit(root)
            return
        qualnames: List[str] = []  # of each link, innermost first
        qualname = binding.qualname
        for link in reversed(links):
            qualname = f"{qualname}.{link.attr}"
            qualnames.append(qualname)
        for link, qualname in zip(links, reversed(qualnames)):
            if self._symbol_reference(link, qualname, binding):
                self._read_through(root, binding)
                return
            self._attribute_read(link)
        self._use(qualnames[-1])  # the whole chain: `apex.contrib.fmha.X` is in apex.contrib.fmha
        self._read_through(root, binding)
        if binding.statement is not None:
            self._maintained_use(root, binding)
        self._symbol_reference(root, binding.qualname, binding)

    @staticmethod
    def _read_through(name: ast.Name, binding) -> None:
        """A read of a name whose binding is looked up: an import's binding records it, so a fix
        can rename every use, or remove the import once nothing reads it."""
        if binding is not None and binding.statement is not None:
            binding.uses.append(name)

    def _attribute_read(self, node: ast.Attribute) -> None:
        for m, rule in self.index.attributes.get(node.attr, ()):
            receiver = node.value
            last = _last_identifier(receiver)
            resolved = self.class_qualname(receiver)
            if resolved is None and isinstance(receiver, ast.Name):  # `self` of a subclass of the class
                binding = self.lookup(receiver.id)
                inherits = binding is not None and binding.instance_of is not None
                if inherits and node.attr not in self._set_on_instances(binding.classes):  # not one the class sets
                    resolved = binding.instance_of
            if m.receiver_hint and m.receiver_hint in last.lower() or (
                resolved and any(symbol_matches(spec, canonical(resolved)) for spec in m.receivers)
            ):
                self.report(rule, Site(node, node.attr), (node.lineno, node.col_offset), library=m.library)

    def _set_on_instances(self, classes: Tuple[ast.ClassDef, ...]) -> FrozenSet[str]:
        key = tuple(map(id, classes))
        found = self._class_attributes.get(key)
        if found is None:
            found = self._class_attributes[key] = instance_attributes(classes)
        return found

    # --- calls, keywords, dicts, argument vectors ------------------------------------
    def _callee(self, call: ast.Call) -> Optional[str]:
        name = self.class_qualname(call.func)
        if name and canonical(name) == "functools.partial" and call.args:
            name = self.class_qualname(call.args[0])
        return canonical(name) if name else None

    def visit_Call(self, node: ast.Call) -> None:
        self.calls[id(node.func)] = node
        callee = self._callee(node)
        if node.args and isinstance(_literal(node.args[0]), str):
            if self._imports_by_name(node, callee):
                self._dynamic_import(node.args[0])
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                self._argv_flag(node.args[0], node.args[0].value, None, definition=True)
        is_dict = isinstance(node.func, ast.Name) and node.func.id == "dict" and self.lookup("dict") is None
        for kw in node.keywords:
            if kw.arg is not None:
                for m, rule in self.index.keywords.get(kw.arg, ()):
                    self._keyword(m, rule, kw, kw.arg, kw.value, callee, node, is_dict)
            elif isinstance(kw.value, ast.Dict) and callee:  # f(**{"key": value})
                for key, value in zip(kw.value.keys, kw.value.values):
                    name = _literal(key)
                    for m, rule in self.index.keywords.get(name, ()) if isinstance(name, str) else ():
                        self._keyword(m, rule, key, name, value, callee, node, False, holder=kw.value)
        for m, rule in self.index.positional if callee else ():
            if len(node.args) > m.position and any(symbol_matches(s, callee) for s in m.callees):
                arg = node.args[m.position]
                if not isinstance(arg, ast.Starred):
                    self._keyword(m, rule, arg, m.name, arg, callee, node, False)
        self.generic_visit(node)

    def _imports_by_name(self, call: ast.Call, callee: Optional[str]) -> bool:
        if callee:
            return callee in _DYNAMIC_IMPORTS or callee.rsplit(".", 1)[-1] in _AVAILABILITY_CHECKS
        return isinstance(call.func, ast.Name) and call.func.id == "__import__" and self.lookup("__import__") is None

    def _dynamic_import(self, argument: ast.Constant) -> None:
        hit = self.index.deprecated_module(argument.value) or self.index.roots.get(argument.value)
        if hit:
            prefix, replacement, rule = hit
            self.report(rule, Site(argument, prefix, replacement), (argument.lineno, argument.col_offset))

    def _keyword(self, m: Keyword, rule: Rule, at: ast.AST, name: str, value, callee, call, is_dict,
                 holder: Optional[ast.Dict] = None) -> None:
        if callee and any(symbol_matches(spec, callee) for spec in m.callees):
            library = None
        elif m.any_call or (m.dict_forms and is_dict) or m.method is not None and _calls_method_of(call, *m.method):
            library = m.library
        else:
            return
        self._values(m, rule, at, name, value, library, call, holder)

    @staticmethod
    def _value_replacement(m: Keyword, value: object) -> Optional[str]:
        """The replacement for a matched value, "" when any value matches, None if no match."""
        if m.values is None:
            return None if value in m.other_values else ""
        try:
            return m.values.get(value)
        except TypeError:  # unhashable literal
            return None

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            self._setting(key, value, node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        """`trainer_args["amp_level"] = level`: a setting assembled piece by piece."""
        super().visit_Assign(node)
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.ctx, ast.Store):
                self._setting(target.slice, node.value)
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) and \
                    target.value.attr == "trainer":  # a config's Trainer section: `cfg.trainer.precision = 16`
                for m, rule in self.index.trainer_settings.get(target.attr, ()):
                    self._values(m, rule, target, target.attr, node.value, m.library)

    def _setting(self, key: ast.AST, value: ast.AST, holder: Optional[ast.Dict] = None) -> None:
        """A string key with its value, in a dict (`holder`) or assigned to one, in a module importing the library."""
        name = _literal(key)
        for m, rule in self.index.dict_keys.get(name, ()) if isinstance(name, str) else ():
            self._values(m, rule, key, name, value, m.library, holder=holder)

    def _values(self, m: Keyword, rule: Rule, at: ast.AST, name: str, value: ast.AST, library: Optional[str],
                call: Optional[ast.Call] = None, holder: Optional[ast.Dict] = None) -> None:
        """Report a setting whose value the row looks for; each literal arm of `16 if fp16 else 32`
        is a finding of its own, at the arm."""
        if m.section_keys and not _holds_keys(value, m.section_keys):
            return
        for branch in _branches(m, value):
            replacement = self._value_replacement(m, _literal(branch))
            if replacement is not None:
                site = Site(at, name, replacement, call=call, value=_literal(branch), value_node=branch, holder=holder)
                where = at if branch is value else branch
                self.report(rule, site, (where.lineno, where.col_offset), library=library)

    def _visit_sequence(self, node) -> None:
        items = [_literal(e) for e in node.elts] if isinstance(node.ctx, ast.Load) else []
        if any(isinstance(item, str) and item.startswith("--") for item in items):  # flags: an argument vector
            command = _runs_a_script(node.elts, items)  # a launcher's command line: no library import needed
            script = next((i for i, item in enumerate(items) if isinstance(item, str) and item.endswith(".py")
                           or i and items[i - 1] == "-m"), len(items))
            launcher = tuple(items[:2]) if command else ()
            for i, item in enumerate(items):
                if isinstance(item, str):  # _argv_flag takes only "--flag" items
                    self._argv_flag(node.elts[i], item, items[i + 1] if i + 1 < len(items) else None,
                                    command=command, launcher=launcher if i < script else ())
        self.generic_visit(node)

    visit_List = visit_Tuple = _visit_sequence

    def _argv_flag(self, at: ast.AST, item: str, following: object, definition: bool = False,
                   command: bool = False, launcher: tuple = ()) -> None:
        """A `--flag` of an argument vector (or one argparse defines); `launcher`: the launcher's
        own words (`accelerate launch`) when the flag comes before the script it starts."""
        if not item.startswith("--"):
            return
        flag, eq, inline_value = item[2:].partition("=")
        flag = flag.rsplit(".", 1)[-1]  # LightningCLI: --trainer.amp_backend
        for m, rule in self.index.argv.get(flag, ()):
            if definition and not m.cli_definitions or m.launcher and m.launcher != launcher:
                continue
            value = inline_value if eq else following
            replacement = self._value_replacement(m, value)
            if replacement is not None:
                site = Site(at, m.name, replacement, value=value)
                self.report(rule, site, (at.lineno, at.col_offset), library=None if command else m.library)

    # --- definitions ------------------------------------------------------------------
    def on_function(self, node) -> None:
        for m, rule in self.index.parameters.get(node.name, ()):
            args = node.args
            for arg in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]:
                if arg.arg == m.name:
                    self.report(rule, Site(arg, m.name), (arg.lineno, arg.col_offset), library=m.library)


def check_tree(tree: ast.AST, floors: Optional[Mapping[str, Version]] = None) -> List[Finding]:
    return Checker(floors=floors).check(tree)
