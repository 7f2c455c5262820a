"""Findings outside Python modules, for `flake8-no-apex check`: LightningCLI YAML configs
(`trainer: {amp_backend: apex}`, `class_path: ...ApexMixedPrecisionPlugin`) and dependency
files that pin NVIDIA apex. Same codes and messages as in Python, at the exact line."""
from __future__ import annotations

import ast
import re
from typing import Iterator, List, Optional, Tuple

import yaml
from packaging.requirements import InvalidRequirement, Requirement

from .compat import tomllib
from .checker import Finding, default_index
from .rules import RULES
from .table import Dependency, Floors, Site


YAML_SUFFIXES = (".yaml", ".yml")
_TRAINER_KEYS = ("amp_backend", "amp_level", "precision")


def _finding(rule, site: Site, line: int, col: int, floors: Floors) -> Optional[Finding]:
    if not rule.applies(floors):
        return None
    return Finding(line, col, rule.code, rule.message(site, floors), rule, site)


# --- LightningCLI configs ----------------------------------------------------------------------
def _trainer_keyword(name: str, value: object) -> Optional[Tuple[object, str]]:
    """(rule, replacement) of a Trainer argument set in a config, as on a Trainer call."""
    for matcher, rule in default_index().keywords.get(name, ()):
        if "lightning:Trainer" in matcher.callees and not matcher.position:
            if matcher.values is None:
                return rule, ""
            replacement = matcher.values.get(value) if not isinstance(value, bool) else None
            if replacement:  # rows of one keyword may split its values between them
                return rule, replacement
    return None


_CONSTRUCTOR = yaml.SafeLoader("")  # YAML's own reading of a scalar: 0x10, 0b10 and 1:30 are ints too


def _scalar(node: yaml.Node) -> object:
    """A YAML scalar as the Python value a LightningCLI config gives the Trainer."""
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError):
        return node.value


# A config larger than this is no LightningCLI config: it is left unread, with a word.
MAX_YAML_BYTES = 2_000_000


class YamlError(ValueError):
    """A YAML file that cannot be checked."""


def check_yaml(text: str, floors: Floors, trainer_group: bool = False) -> List[Finding]:
    """Trainer settings under any `trainer:` key (also below `fit:` and other subcommands), at
    the top level of a Hydra config group for the trainer (`trainer_group`: a file in a
    `trainer/` folder), and `class_path` values that name a deprecated Lightning class. Each node is visited once,
    however many aliases refer to it: a self-referencing anchor or a "billion laughs" file
    costs its size, not its expansion."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlError(f"larger than {MAX_YAML_BYTES // 1_000_000} MB; not read as a LightningCLI config")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise YamlError(f"cannot parse: {str(error).splitlines()[0]}") from None
    found: List[Finding] = []
    seen = set()

    def walk(node: yaml.Node, under_trainer: bool) -> None:
        if (id(node), under_trainer) in seen:
            return
        seen.add((id(node), under_trainer))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                line, col = key.start_mark.line + 1, key.start_mark.column
                if under_trainer and name in _TRAINER_KEYS and isinstance(value, yaml.ScalarNode):
                    hit = _trainer_keyword(name, _scalar(value))
                    if hit:
                        rule, replacement = hit
                        site = Site(None, name, replacement, value=_scalar(value))
                        found.append(_finding(rule, site, line, col, floors))
                if name == "class_path" and isinstance(value, yaml.ScalarNode):
                    hit = default_index().symbol(value.value)
                    if hit:
                        replacement, rule = hit
                        site = Site(None, value.value, replacement)
                        found.append(_finding(rule, site, value.start_mark.line + 1, value.start_mark.column, floors))
                walk(value, under_trainer or name == "trainer")
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, under_trainer)

    if root is not None:
        walk(root, trainer_group)
    return [f for f in found if f is not None]


def is_trainer_group(path) -> bool:
    """A Hydra config group of Trainer arguments: `conf/trainer/default.yaml`."""
    return path.parent.name == "trainer"


def looks_like_lightning_config(text: str) -> bool:
    return bool(re.search(r"^\s*(trainer|class_path)\s*:", text, re.MULTILINE))


# --- dependency files --------------------------------------------------------------------------
_DEPENDENCY_RULES = [(m, r) for r in RULES for m in r.match if isinstance(m, Dependency)]


def _dependency(text: str) -> Optional[Tuple[object, str, str]]:
    """(rule, shown name, kind) when a requirement line pins a watched distribution."""
    line = text.strip()
    lowered = line.lower()
    for matcher, rule in _DEPENDENCY_RULES:
        if any(marker in lowered for marker in matcher.url_markers):
            return rule, line, "source"
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.name.lower() == matcher.name:
            return rule, line, "source" if requirement.url else "pypi"
    return None


def _requirement_lines(text: str) -> Iterator[Tuple[int, int, str]]:
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split(" #", 1)[0].strip()
        if content and not content.startswith(("#", "-r", "-c", "--")):
            yield number, len(line) - len(line.lstrip()), content.removeprefix("-e ").strip()


def _quoted_strings(text: str) -> Iterator[Tuple[int, int, str]]:
    """Every quoted string of a TOML file, with where it stands."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in re.finditer(r"\"([^\"]*)\"|'([^']*)'", line):
            yield number, match.start(), match.group(1) if match.group(1) is not None else match.group(2)


def check_dependencies(name: str, text: str, floors: Floors) -> List[Finding]:
    """Requirements/constraints files, pyproject.toml dependency strings, setup.cfg, setup.py."""
    if name == "pyproject.toml":
        try:
            tomllib.loads(text)
        except ValueError:
            return []
        candidates = list(_quoted_strings(text))
    elif name == "setup.py":
        candidates = list(_setup_py_requirements(text))
    else:
        candidates = list(_requirement_lines(text))
    return _findings(((line, col, _dependency(candidate)) for line, col, candidate in candidates), floors)


def _findings(hits, floors: Floors) -> List[Finding]:
    found = []
    for line, col, hit in hits:
        if hit:
            rule, shown, kind = hit
            finding = _finding(rule, Site(None, repr(shown), value=kind), line, col, floors)
            if finding:
                found.append(finding)
    return found


_REQUIREMENT_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require")


def _setup_py_requirements(text: str) -> Iterator[Tuple[int, int, str]]:
    """The requirement strings a setup.py passes to setup(): in `install_requires=[...]` and the
    other requirement keywords, also through a list or dict assigned to a name first."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return
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
                    yield constant.lineno, constant.col_offset, constant.value


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
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise YamlError(f"cannot parse: {str(error).splitlines()[0]}") from None
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
                        hits.append((item.start_mark.line + 1, item.start_mark.column, (rule, item.value, "source")))
            elif isinstance(item, yaml.MappingNode):
                for pip_key, requirements in item.value:
                    if getattr(pip_key, "value", None) == "pip" and isinstance(requirements, yaml.SequenceNode):
                        hits += [(r.start_mark.line + 1, r.start_mark.column, _dependency(r.value))
                                 for r in requirements.value if isinstance(r, yaml.ScalarNode)]
    return _findings(hits, floors)


def is_dependency_file(name: str) -> bool:
    return name in ("pyproject.toml", "setup.cfg") or (
        name.endswith(".txt") and name.startswith(("requirements", "constraints"))
    )
