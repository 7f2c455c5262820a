"""The vocabulary of the rule table: timelines, fix grades, matchers, rules, and what a rule
produces (findings, edits, plans).

A rule is data. Its matchers say *what* to look for in terms the checker understands
(qualified names, keyword arguments, attribute reads, parameters); the checker owns *how*
to find them. Adding a deprecation means adding a `Rule` row to a module in `rules/`.

The rows and what they produce are NamedTuples (immutable, compared field by field, changed
with `_replace`), not frozen dataclasses: Python compiles a dataclass's methods when the class
is made, about 1 ms each (a NamedTuple: 0.3 ms), and these 13 were a fifth of a cold `check`'s imports.
"""
from __future__ import annotations

import ast
import enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, FrozenSet, Iterable, List, Mapping, Optional, Protocol, Tuple, Union

from packaging.version import Version

from .edits import TextEdit
from .spellings import pick, spell

if TYPE_CHECKING:
    from typing import NamedTuple

    from .resolve import Binding
else:  # typing's class syntax, without its compile of every field's annotation (records.py)
    from .records import NamedTuple

LIBRARY_NAMES = {
    "accelerate": "accelerate",
    "apex": "NVIDIA apex",
    "deepspeed": "DeepSpeed",
    "lightning": "Lightning",
    "mmcv": "mmcv",
    "torch": "torch",
    "transformers": "transformers",
}

# The import roots by which code reaches each library. Lightning ships under several
# distribution names; the resolver folds them into `lightning.pytorch` / `lightning.fabric`.
LIBRARY_ROOTS = {
    "accelerate": ("accelerate",),
    "apex": ("apex",),
    "lightning": ("lightning", "pytorch_lightning", "lightning_fabric", "lightning_lite",
                  "flash"),  # lightning-flash: its Trainer subclasses Lightning's
    "torch": ("torch",),
    "transformers": ("transformers",),
    "timm": ("timm",),
    "mmcv": ("mmcv",),
    "deepspeed": ("deepspeed",),  # its ApexScaler wraps apex.amp: the rule's timeline is apex's
}
# Libraries whose releases carry no version a project could declare a floor of (apex is
# installed from a git checkout): its rules apply whatever the targets say.
UNVERSIONED = ("apex",)


# How the newest release treats a usage that is not removed: what `deprecated_in` started.
DEPRECATED = "deprecated"  # a deprecation warning (FutureWarning, LightningDeprecationWarning, ...)
DISCOURAGED = "discouraged"  # Lightning's UserWarning "supported for historical reasons but ... discouraged"
LEGACY = "legacy"  # accepted silently, as an alias of the new spelling
_STATUS_PHRASES = {
    DEPRECATED: "is deprecated since {release}",
    DISCOURAGED: 'is "supported for historical reasons but its usage is discouraged" since {release}',
    LEGACY: "is a legacy spelling (accepted without a warning) since {release}",
}


class Timeline(NamedTuple):
    """One deprecation's history, as released versions of `library` (see docs/timeline.md)."""

    library: str
    deprecated_in: Optional[str]
    removed_in: Optional[str] = None
    replacement_since: Optional[str] = None
    source: str = ""  # the docs/timeline.md row ids this comes from, e.g. "PT-01"
    status: str = DEPRECATED  # what happens from deprecated_in on, until removed_in
    # the day a library without releases since (apex: no tag after 25.09) deleted it from its
    # main branch, with the commit: what a build from source gets today
    removed_on: str = ""
    deprecated_on: str = ""  # likewise, the day the warning came, where no release has it

    def phrase(self, floor: Optional[Version] = None) -> str:
        """How the usage stands for a project whose oldest supported release of the
        library is `floor` (None: the newest release)."""
        name = LIBRARY_NAMES[self.library]
        if self.removed_in and (floor is None or floor >= Version(self.removed_in)):
            return f"was removed in {name} {short_version(self.removed_in)}"
        if self.removed_on:
            return f"was removed from {name} on {self.removed_on}"
        if self.deprecated_on:
            return f"is deprecated in {name} since {self.deprecated_on}"
        if self.deprecated_in:
            return _STATUS_PHRASES[self.status].format(release=f"{name} {short_version(self.deprecated_in)}")
        if self.removed_in:
            return f"is removed in {name} {short_version(self.removed_in)}"
        if self.replacement_since:
            return f"is maintained, but has a native equivalent since {name} {short_version(self.replacement_since)}"
        return "is maintained and has no native equivalent"

    @property
    def gated(self) -> bool:
        """Whether the version targets decide if the usage is reported (see `Rule.applies`)."""
        return self.library not in UNVERSIONED

    def level(self, floor: Optional[Version] = None) -> str:
        """SARIF's level, as `phrase` words it: what is gone is an error, what is going a
        warning, what is maintained a note."""
        if self.removed_in and (floor is None or floor >= Version(self.removed_in)) or self.removed_on:
            return "error"
        if self.deprecated_in or self.removed_in or self.deprecated_on:
            return "warning"
        return "note"


def short_version(version: str) -> str:
    """'2.0.0' -> '2.0', as release notes name versions; '2.1.1' stays."""
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


class Grade(enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display-only"


class Fix(NamedTuple):
    grade: Grade
    why: str


# --- matchers -----------------------------------------------------------------------------
# A symbol is written "module:Name". It matches the qualified name module.Name and any
# module.sub.Name below it, so "torch.cuda.amp:autocast" also covers
# torch.cuda.amp.autocast_mode.autocast, and "lightning:Trainer" every Lightning spelling.


def symbol_matches(spec: str, qualname: str) -> bool:
    module, name = spec.split(":")
    return qualname == f"{module}.{name}" or (
        qualname.startswith(module + ".") and qualname.endswith("." + name)
    )


class Symbols(NamedTuple):
    """Names from a library, reported at the import that binds them and at every use.

    `names` maps each name to the text that replaces it (used as `{replacement}` in advice).
    """

    module: str
    names: Mapping[str, str]


class Modules(NamedTuple):
    """Imports of deprecated modules (`import m`, `from m import x`, `from pkg import m`).

    A bare `import <root>` is reported too, unless the module only uses parts of the
    package outside `prefixes` (the maintained ones).
    """

    prefixes: Mapping[str, str]  # deprecated module -> its native replacement
    root: Optional[str] = None
    root_subject: str = ""  # what a bare `import <root>` or `find_spec("<root>")` stands for
    root_replacement: str = ""


class Keyword(NamedTuple):
    """A keyword argument, optionally only with some literal values.

    Found on calls whose callee matches one of `callees` (symbol specs, including local
    subclasses and `functools.partial(callee, ...)`), at `position` among their positional
    arguments, and, in modules that import `library`:
    - with `any_call`, on any call (users wrap Trainer construction in their own helpers);
    - with `dict_forms`, as a key of a dict literal or a `dict(...)` keyword;
    - with `argv`, as a `--name` string in a list or tuple literal (an argument vector), and,
      with `cli_definitions` too, as the flag an argparse `add_argument("--name")` defines
      (old Lightning scripts forward it through `Trainer.from_argparse_args`).
    """

    name: str
    callees: Tuple[str, ...] = ()
    values: Optional[Mapping[object, str]] = None  # literal value -> its replacement text
    other_values: Tuple[object, ...] = ()  # with values=None: literal values another row reports
    position: Optional[int] = None
    library: Optional[str] = None
    any_call: bool = False
    dict_forms: bool = False
    argv: bool = False
    cli_definitions: bool = False
    # (receiver hint, method): a call of that method on a receiver named like the hint
    # (`accelerator.autocast(cache_enabled=...)`, `self.accelerator.autocast(...)`), in modules importing `library`
    method: Optional[Tuple[str, str]] = None
    # a config section: reported only where the value is a dict literal (or `dict(...)`) holding one of these keys
    section_keys: Tuple[str, ...] = ()
    # with `argv`: a flag of a launcher only (`("accelerate", "launch")`), before the script it starts
    launcher: Tuple[str, ...] = ()


class AttributeRead(NamedTuple):
    """`<receiver>.name` read in a module importing `library`, where the receiver looks
    like `receiver_hint` (its last identifier contains it; "" for none) or resolves to
    `receivers` (a library class, a local subclass of it, or `self` in a method of one)."""

    name: str
    library: str
    receiver_hint: str
    receivers: Tuple[str, ...] = ()


class Parameter(NamedTuple):
    """A parameter `name` of a method `function` defined in a module importing `library`."""

    function: str
    name: str
    library: str


class Dependency(NamedTuple):
    """A distribution pinned in dependency files (requirements, pyproject, setup.cfg), by
    name or by a URL or wheel that names it."""

    name: str
    url_markers: Tuple[str, ...] = ()  # lower-case fragments of URLs that mean the distribution
    conda_names: Tuple[str, ...] = ()  # its package names in conda environments


Matcher = Union[Symbols, Modules, Keyword, AttributeRead, Parameter, Dependency]


class Site(NamedTuple):
    """What the checker found, as the advice of a rule needs it."""

    node: ast.AST  # the reference, keyword, key, import alias (or import, for a module)
    name: str  # the qualified name, keyword or attribute that matched
    replacement: str = ""  # from the matcher's table
    call: Optional[ast.Call] = None  # the call whose callee or argument matched
    value: object = None  # the literal value of a matched keyword, if any
    value_node: Optional[ast.AST] = None  # the expression of a matched keyword or dict key
    holder: Optional[ast.Dict] = None  # the dict literal of a matched key
    statement: Optional[ast.stmt] = None  # the import, for a finding at an import
    binding: Optional["Binding"] = None  # the resolver's Binding of the import or of the reference's root
    # each module in the rule's `fix_modules` -> the name that reaches it here ('' if free to
    # import, None if that name means something else): what the fixer may write
    module_names: Mapping[str, Optional[str]] = MappingProxyType({})
    shim: bool = False  # in the old-release half of code that also has the new spelling: not fixed


Floors = Mapping[str, Version]  # library -> oldest supported release; missing: the newest


class ByFloor(NamedTuple):
    """An advice template that changes with the oldest supported release of `library`:
    `steps` are (first release the text applies to, text), oldest first, None for older."""

    library: str
    steps: Tuple[Tuple[Optional[str], str], ...]

    def template(self, floors: Floors) -> str:
        return pick(self.steps, floors.get(self.library))


# A string is a template ({name}, {replacement} and the spellings); a callable returns
# finished code, whose braces are not placeholders.
Advice = Union[str, ByFloor, Callable[[Site, Floors], str]]


class Rule(NamedTuple):
    """One deprecated usage. Several rows may share a code when their timelines differ."""

    code: str
    title: str  # short name for docs and listings
    match: Tuple[Matcher, ...]
    timeline: Timeline
    subject: str  # what is wrong; formatted with {name}, {value} ("(...)" added for calls)
    advice: Advice  # what to write instead; formatted with {name}, {replacement}
    fix: Fix
    doc: str
    before: str
    after: str
    invalid: Tuple[str, ...] = ()  # more snippets that must report this code
    valid: Tuple[str, ...] = ()  # snippets that must not report it
    fixer: Optional["Fixer"] = None
    recipe: str = ""  # for findings a person must migrate: a template using the spellings
    language: str = "python"  # what the examples are written in ("requirements" for dependency rules)
    default_off: bool = False  # in flake8's extended default ignore
    shim_exempt: bool = False  # not reported in an `except ImportError` fallback
    fixes_probes: bool = False  # its fixer rewrites names bound in `try: import ... except ImportError: x = None`
    fix_modules: Tuple[str, ...] = ()  # modules its fixer's code names: resolved at each finding (Site.module_names)
    # qualified names (and their prefixes) of the new spelling: a block using one is the new half
    # of a compatibility shim, whose `except ImportError`/`else` half is a fallback (see shim_exempt)
    shim_spellings: Tuple[str, ...] = ()

    def applies(self, floors: Floors) -> bool:
        """Whether a project supporting releases from `floors` on can act on the finding:
        its replacement exists in them (or, for a deletion, the usage is deprecated there).
        Unknown floors count as the newest release; an unversioned library is never gated."""
        floor = floors.get(self.timeline.library)
        threshold = self.timeline.replacement_since or self.timeline.deprecated_in
        return not self.timeline.gated or floor is None or threshold is None or floor >= Version(threshold)

    def finding(self, site: Site, line: int, col: int, floors: Floors, width: int = 0) -> Optional["Finding"]:
        """The finding at (line, col), or None when the targets say it cannot be acted on yet.
        `width`: how many characters it covers on its line, where there is no node to end it."""
        if not self.applies(floors):
            return None
        return Finding(line, col, self.code, self.message(site, floors), self, site, width)

    def message(self, site: Site, floors: Optional[Floors] = None) -> str:
        floors = floors or {}
        subject = self.subject.format(name=site.name, value=render_literal(site.value))
        if site.call is not None and site.call.func is site.node:
            subject += "(...)"
        if callable(self.advice):
            advice = self.advice(site, floors)
        else:
            spelled = spell(floors)
            template = self.advice.template(floors) if isinstance(self.advice, ByFloor) else self.advice
            advice = template.format(name=site.name, replacement=site.replacement.format(**spelled), **spelled)
        phrase = self.timeline.phrase(floors.get(self.timeline.library))
        return f"{self.code} {subject} {phrase}; {advice}"


def render_literal(value: object) -> str:
    """A literal as code, with the double quotes most style guides use."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


# --- what rules produce -------------------------------------------------------------------
class Finding(NamedTuple):
    line: int  # an inputs.CellLine where `fix` reports a notebook's finding
    col: int  # 0-based, as flake8 expects from plugins
    code: str
    message: str  # starts with the code, as flake8 expects
    rule: Rule
    site: Site
    width: int = 0  # characters covered on `line` by a finding without a node (a YAML key, a requirement)

    @property
    def description(self) -> str:
        """The message without its code: formats that give the code a field of its own."""
        return self.message.split(" ", 1)[1]


class Plan(NamedTuple):
    """The edits that fix one finding (or several, all or nothing)."""

    edits: Tuple[TextEdit, ...]
    grade: Grade
    imports: FrozenSet[str] = frozenset()  # modules the edits name and that must be imported
    releases: FrozenSet[str] = frozenset()  # imported names whose uses the edits rewrite
    note: str = ""  # what the user must know about the rewrite (how numerics change, ...)


def plan(edits: Iterable[TextEdit], grade: Grade, imports: Iterable[str] = (), releases: Iterable[str] = (),
         note: str = "") -> Plan:
    return Plan(_merged_deletions(sorted(set(edits))), grade, frozenset(imports), frozenset(releases), note)


def _merged_deletions(edits: List[TextEdit]) -> Tuple[TextEdit, ...]:
    """Deletions that overlap are one: two keywords removed from the end of a call each take
    the comma between them."""
    merged: List[TextEdit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        if last is not None and not last.text and not edit.text and edit.start < last.end:
            merged[-1] = TextEdit(last.start, max(last.end, edit.end), "")
        else:
            merged.append(edit)
    return tuple(merged)


class Fixer(Protocol):
    """A rule's fix: from the round's `fixer.FixContext` (the module, its resolved imports and
    findings) and one finding, the plan that fixes it, or None to leave it to a person (after
    `ctx.explain(line, why)` when the reason helps)."""

    def __call__(self, ctx: Any, finding: Finding) -> Optional[Plan]: ...
