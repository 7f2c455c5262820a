"""Findings in the files that pin dependencies: requirements and constraints files,
pyproject.toml, setup.cfg, setup.py and conda environments, when they pin NVIDIA apex (the
`Dependency` matchers). Same codes and messages as in Python, at the exact line; the fix (unsafe:
an environment without apex fails where code still imports it) drops the line that pins it."""
from __future__ import annotations

import ast
import re
from typing import Iterator, List, Optional, Tuple

from .compat import load_toml
from .edits import Source
from .files import MalformedFile
from .rules import RULES
from .table import Dependency, Finding, Floors, Grade, Plan, Rule, Site, TextEdit, plan
from .targets import requirement_name

# yaml (conda environments) and packaging's requirement parser (a line naming apex) are
# imported where they are needed: most dependency files need neither.

_DEPENDENCY_RULES = [(m, r) for r in RULES for m in r.match if isinstance(m, Dependency)]
Hit = Tuple[Rule, str, str]  # (rule, the requirement as written, "source" or "pypi")
Candidate = Tuple[int, int, int, str]  # (line, column, width in characters, the requirement)


def _dependency(text: str) -> Optional[Hit]:
    """(rule, shown name, kind) when a requirement line pins a watched distribution."""
    line = text.strip()
    lowered = line.lower()
    for matcher, rule in _DEPENDENCY_RULES:
        if any(marker in lowered for marker in matcher.url_markers):
            return rule, line, "source"
        if (requirement_name(line) or "").lower() != matcher.name:
            continue  # another project's: no parse
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.name.lower() == matcher.name:
            return rule, line, "source" if requirement.url else "pypi"
    return None


def _requirement_lines(text: str) -> Iterator[Candidate]:
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split(" #", 1)[0].strip()
        if content and not content.startswith(("#", "-r", "-c", "--")):
            yield number, len(line) - len(line.lstrip()), len(content), content.removeprefix("-e ").strip()


def _quoted_strings(text: str) -> Iterator[Candidate]:
    """Every quoted string of a TOML file, with where it stands (its quotes included)."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in re.finditer(r"\"([^\"]*)\"|'([^']*)'", line):
            value = match.group(1) if match.group(1) is not None else match.group(2)
            yield number, match.start(), match.end() - match.start(), value


def check_dependencies(name: str, text: str, floors: Floors) -> List[Finding]:
    """Requirements/constraints files, pyproject.toml dependency strings, setup.cfg, setup.py."""
    if name == "pyproject.toml":
        try:
            load_toml(text)
        except ValueError as error:
            raise MalformedFile(f"cannot parse: {error}") from None
        candidates = list(_quoted_strings(text))
    elif name == "setup.py":
        candidates = list(_setup_py_requirements(text))
    else:
        candidates = list(_requirement_lines(text))
    return _findings(((line, col, width, _dependency(candidate)) for line, col, width, candidate in candidates), floors)


def _findings(hits: Iterator[Tuple[int, int, int, Optional[Hit]]], floors: Floors) -> List[Finding]:
    found = []
    for line, col, width, hit in hits:
        if hit:
            rule, shown, kind = hit
            finding = rule.finding(Site(None, repr(shown), value=kind), line, col, floors, width)
            if finding:
                found.append(finding)
    return found


_REQUIREMENT_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require")


def _setup_py_requirements(text: str) -> Iterator[Candidate]:
    """The requirement strings a setup.py passes to setup(): in `install_requires=[...]` and the
    other requirement keywords, also through a list or dict assigned to a name first."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return
    lines = text.splitlines()
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in _REQUIREMENT_KEYWORDS:
            value = assigned.get(node.value.id, node.value) if isinstance(node.value, ast.Name) else node.value
            for constant in ast.walk(value):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    yield (constant.lineno, *_characters(lines[constant.lineno - 1], constant), constant.value)


def _characters(line: str, node: ast.expr) -> Tuple[int, int]:
    """(column, width) in characters of a node that starts on `line` (ast counts UTF-8 bytes);
    a string that goes on covers the rest of the line."""
    encoded = line.encode("utf-8")
    col = len(encoded[:node.col_offset].decode("utf-8", errors="ignore"))
    end = node.end_col_offset if node.end_lineno == node.lineno else len(encoded)
    return col, len(encoded[:end].decode("utf-8", errors="ignore")) - col


# --- conda environment files -------------------------------------------------------------------
def is_conda_environment(name: str, text: str) -> bool:
    return name.startswith("environment") or bool(
        re.search(r"^channels\s*:", text, re.MULTILINE) and re.search(r"^dependencies\s*:", text, re.MULTILINE))


def _conda_package(spec: str) -> str:
    """`conda-forge::nvidia-apex=0.1=py_0` -> `nvidia-apex`."""
    spec = spec.split("::", 1)[-1].strip()
    match = re.match(r"[A-Za-z0-9_.\-]+", spec)
    return match.group().lower() if match else ""


def check_conda(text: str, floors: Floors) -> List[Finding]:
    """apex in a conda environment: a package in `dependencies`, or a requirement in its `pip:`."""
    import yaml

    from .yaml_configs import compose, where

    root = compose(text)
    if not isinstance(root, yaml.MappingNode):
        return []
    hits = []
    for key, value in root.value:
        if getattr(key, "value", None) != "dependencies" or not isinstance(value, yaml.SequenceNode):
            continue
        for item in value.value:
            if isinstance(item, yaml.ScalarNode):
                for matcher, rule in _DEPENDENCY_RULES:
                    if _conda_package(item.value) in matcher.conda_names:
                        hits.append((*where(item), (rule, item.value, "source")))
            elif isinstance(item, yaml.MappingNode):
                for pip_key, requirements in item.value:
                    if getattr(pip_key, "value", None) == "pip" and isinstance(requirements, yaml.SequenceNode):
                        hits += [(*where(r), _dependency(r.value))
                                 for r in requirements.value if isinstance(r, yaml.ScalarNode)]
    return _findings(iter(hits), floors)


# --- the fix: drop the line ------------------------------------------------------------------
# What may stand on a line besides the requirement for the whole line to be the pin: list
# syntax (a YAML `- `, TOML quotes and a trailing comma) and a comment.
_LIST_ITEM = re.compile(r"""[ \t]*(?:-[ \t]+)?["']?(?P<requirement>[^"'#]*?)["']?[ \t]*,?[ \t]*(?:#.*)?""")


def drop_line(source: Source, finding: Finding, syntax: str) -> Optional[Plan]:
    """Remove the line that pins the dependency, when that line holds nothing else (one item
    of a list, one requirement). A pin that shares its line, continues on the next (a hash
    list), or is the only item of its YAML list (the emptied key would read as null) is left to
    a person, and so is any finding but a dependency's. `syntax`: "toml", "yaml" or "lines"."""
    if not any(isinstance(m, Dependency) for m in finding.rule.match):
        return None
    line = source.line(finding.line)
    body = line.rstrip("\r\n")
    match = _LIST_ITEM.fullmatch(body)
    if match is None or not match.group("requirement").strip() or body.rstrip().endswith("\\"):
        return None
    start = source.offset(finding.line, 0)
    edit = TextEdit(start, start + len(line), "")
    if syntax == "toml" and _tables(source.text) != _tables(source.apply([edit])):
        return None
    if syntax == "yaml" and not _has_siblings(source.text, finding.line):
        return None
    return plan([edit], Grade.UNSAFE)


def _tables(text: str) -> object:
    """The container structure of a TOML file (which keys hold arrays, which tables), or None
    when it does not parse: dropping an array item must keep it."""
    try:
        return _containers(load_toml(text))
    except ValueError:
        return None


def _containers(value: object) -> object:
    if isinstance(value, dict):
        return {key: _containers(item) for key, item in value.items()}
    if isinstance(value, list):
        return ["array", *(_containers(item) for item in value if isinstance(item, (dict, list)))]
    return None


def _has_siblings(text: str, line: int) -> bool:
    """Whether the one-line YAML list item on `line` shares its list with another item."""
    import yaml

    from .yaml_configs import compose

    try:
        root = compose(text)
    except MalformedFile:
        return False
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if isinstance(item, yaml.ScalarNode) and item.start_mark.line + 1 == line == item.end_mark.line + 1:
                    return len(node.value) > 1
            stack += node.value
        elif isinstance(node, yaml.MappingNode):
            stack += [value for _, value in node.value]
    return False
