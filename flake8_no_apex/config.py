"""Settings of the standalone command: flake8's config files, `[tool.flake8-no-apex]` in
pyproject.toml, then the command line, with flake8's meaning for each key."""
from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from .compat import load_toml
from .codes import CODES, DEFAULT_OFF
from .targets import is_file

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Protocol, Sequence, Tuple


# flake8's default exclusions, and the trees a tool that writes must never touch
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg",
                   ".venv", "venv", "site-packages", "node_modules", "build", "dist", ".flake8-no-apex-cache")
_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")  # what flake8 accepts in select and ignore
_LISTS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude")
_STRINGS = ("apex-target-versions", "docs-url")
_SWITCHES = ("check-docs", "disable-noqa")
KEYS = (*_LISTS, "per-file-ignores", *_STRINGS, *_SWITCHES)


def _quick_ratio(a: str, b: str) -> float:
    """difflib's `quick_ratio`, a bound of the similarity `get_close_matches` compares with its
    cutoff, without loading difflib: twice the letters the two share, over their lengths."""
    return 2 * sum((Counter(a) & Counter(b)).values()) / (len(a) + len(b))


class ConfigError(ValueError):
    """A setting that cannot be used."""


def _split(value, key: str, source: str) -> List[str]:
    """A list as TOML writes it, or a comma (or line) separated string as flake8's INI files do."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = value
    elif isinstance(value, str):
        items = value.replace("\n", ",").split(",")
    else:
        raise ConfigError(f"{key} in {source}: expected a list of strings or a comma-separated string, got "
                          f"{_shown(value)}")
    return [item.strip() for item in items if item.strip()]


def _string(value, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key} in {source}: expected a string, got {_shown(value)}")
    return value.strip()


def _mapping(value, key: str, source: str) -> str:
    """per-file-ignores as flake8 writes it (`pattern:codes` pairs), as a list of them, or as a TOML
    table of patterns to codes, as ruff's is."""
    if isinstance(value, dict):
        return "\n".join(f"{pattern}:{','.join(_split(codes, f'{key} {pattern!r}', source))}"
                         for pattern, codes in value.items())
    return "\n".join(_split(value, key, source)) if isinstance(value, list) else _string(value, key, source)


def _shown(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def _boolean(value, key: str, source: str) -> bool:
    """A switch as TOML writes it, or as an INI file does (flake8's configparser: true/false, 1/0, yes/no, on/off)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{key} in {source}: expected true or false, got {_shown(value)}")


class Settings:
    """The settings of one run: config files, then the command line (a plain class: a warm
    `check` imports no dataclasses)."""

    def __init__(self, select: Optional[List[str]] = None, extend_select: Sequence[str] = (),
                 ignore: Optional[List[str]] = None, extend_ignore: Sequence[str] = (), per_file_ignores: str = "",
                 docs_url: str = "", exclude: Sequence[str] = DEFAULT_EXCLUDE, extend_exclude: Sequence[str] = (),
                 targets: str = "auto", check_docs: bool = False, disable_noqa: bool = False):
        self.select = select  # None: flake8's default selection
        self.extend_select = list(extend_select)
        self.ignore = ignore  # None: the default ignore list (codes.DEFAULT_OFF)
        self.extend_ignore = list(extend_ignore)
        self.per_file_ignores = per_file_ignores  # flake8's `pattern:codes ...` mapping
        self.docs_url = docs_url  # where docs/rules.md is, for the links in JSON and SARIF
        self.exclude = list(exclude)
        self.extend_exclude = list(extend_exclude)
        self.targets = targets
        self.check_docs = check_docs  # also the Python code of Markdown/RST files and docstring examples
        self.disable_noqa = disable_noqa  # report what `# noqa` comments suppress (flake8's option, for audits)
        self.targets_source = "--apex-target-versions"  # or the config file that set them
        self.sources: List[str] = []  # the config files read
        self.warnings: List[str] = []  # about them: keys nobody reads

    def update(self, values: Dict[str, object], source: str, unknown: str = "") -> None:
        """Take the known keys of `values`; `unknown` says which others are warned about:
        "all" (this tool's own table), "close" (a shared [flake8] section, where only a key
        that looks like a misspelling of one of ours is), or "" (the command line)."""
        for key, value in values.items():
            name = key.replace("_", "-")
            if name not in KEYS:
                self._unknown(key, source, unknown)
            elif name == "apex-target-versions":
                self.targets = _string(value, name, source)
                self.targets_source = f"apex-target-versions in {source}"
            elif name == "docs-url":
                self.docs_url = _string(value, name, source)
            elif name in _SWITCHES:
                setattr(self, name.replace("-", "_"), _boolean(value, name, source))
            elif name == "per-file-ignores":
                self.per_file_ignores = _mapping(value, name, source)
            else:
                setattr(self, name.replace("-", "_"), _split(value, name, source))
        self.sources.append(source)

    def _unknown(self, key: str, source: str, unknown: str) -> None:
        name = key.replace("_", "-")
        cutoff = 0.8 if unknown == "close" else 0.6
        closest: List[str] = []
        if any(_quick_ratio(name, known) >= cutoff for known in KEYS):  # (another tool's key: none is)
            import difflib

            closest = difflib.get_close_matches(name, KEYS, n=1, cutoff=cutoff)
        if unknown == "all" or (unknown == "close" and closest):
            hint = f"; did you mean {closest[0]!r}?" if closest else f"; known keys: {', '.join(KEYS)}"
            self.warnings.append(f"{source}: unknown key {key!r}{hint}")

    def validate(self) -> None:
        """Every code prefix of the selection is one flake8 accepts, and an APX one names a code
        (once per run: `selector` is asked for every file)."""
        for prefix in [*(self.select or []), *self.extend_select, *(self.ignore or []), *self.extend_ignore,
                       *(code for _, codes in self.per_file_mapping() for code in codes)]:
            if not _CODE.match(prefix):
                raise ConfigError(f"{prefix!r} is no error code: codes look like APX or APX201 (flake8's "
                                  f"pattern {_CODE.pattern})")
            if prefix.startswith("APX") and not any(code.startswith(prefix) for code in CODES):
                raise ConfigError(f"no code starts with {prefix!r}")

    def selector(self, path: Optional[Path] = None) -> Callable[[str], bool]:
        """Whether a code is reported in the file at `path`: flake8's own decision engine, with
        this plugin's code as the extended default selection and its opt-in codes (APX107,
        APX108, APX110) as the extended default ignore list, and the `per-file-ignores` entry
        flake8 would pick for the file (the longest pattern that matches it). With no selection
        setting at all, that engine's answer is known (every code but the opt-in ones), and flake8
        is not even imported."""
        if self._default_selection():
            return _selected_by_default
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(argparse.Namespace(
            select=self.select, extend_select=self.extend_select, ignore=self.ignore,
            extend_ignore=[*self.extend_ignore, *self.per_file_codes(path)],
            extended_default_select=["APX"], extended_default_ignore=list(DEFAULT_OFF)))
        return lambda code: engine.decision_for(code) is Decision.Selected

    def _default_selection(self) -> bool:
        return (self.select is None and self.ignore is None and not self.extend_select and not self.extend_ignore
                and not self.per_file_ignores)

    def per_file_mapping(self) -> List[Tuple[str, List[str]]]:
        if not self.per_file_ignores:
            return []
        from flake8 import utils as flake8_utils

        try:
            return flake8_utils.parse_files_to_codes_mapping(self.per_file_ignores)
        except ValueError as error:
            raise ConfigError(f"per-file-ignores: {error}") from None

    def per_file_codes(self, path: Optional[Path]) -> List[str]:
        """The codes of the longest `per-file-ignores` pattern matching the file, as flake8 picks
        them (patterns with a slash are relative to the working directory)."""
        if path is None or not self.per_file_ignores:
            return []
        import logging  # flake8's matcher logs its decisions: to a logger nobody shows

        from flake8 import utils as flake8_utils

        quiet = logging.getLogger("flake8_no_apex.per_file_ignores")
        matching = [(flake8_utils.normalize_path(pattern), codes) for pattern, codes in self.per_file_mapping()]
        matching = [(pattern, codes) for pattern, codes in matching
                    if flake8_utils.matches_filename(str(path), [pattern], "%(path)s", quiet)]
        return max(matching, key=lambda item: len(item[0]))[1] if matching else []


def _selected_by_default(code: str) -> bool:
    """flake8's decision for an APX code when no setting selects or ignores anything."""
    return code not in DEFAULT_OFF


if TYPE_CHECKING:
    class Parses(Protocol):
        """Where a run keeps what settings files parsed to (`cache.SettingsMemo`)."""

        def of(self, kind: str, path: Path, text: str, parse: Callable[[str], object]) -> object: ...


class _Unkept:
    def of(self, kind: str, path: Path, text: str, parse: Callable[[str], object]) -> object:
        return parse(text)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as error:
        raise ConfigError(f"{path}: cannot read its settings: {error}") from None


def _flake8_section(path: Path, parses: Parses) -> Optional[Dict[str, str]]:
    """The [flake8] section of an INI file, or None where it has none."""
    def section(text: str) -> Optional[Dict[str, str]]:
        import configparser  # only where such a file exists (and has changed)

        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text, source=str(path))
        except configparser.Error as error:
            raise ConfigError(f"{path}: cannot read its settings: {error}") from None
        return dict(parser.items("flake8")) if parser.has_section("flake8") else None

    return parses.of("ini", path, _read(path), section)  # type: ignore[return-value]


def _flake8_file(start: Path, parses: Parses) -> Optional[Tuple[Path, Dict[str, str]]]:
    """The first of setup.cfg, tox.ini, .flake8 with a [flake8] section, from `start` up."""
    for directory in (start, *start.parents):
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            path = directory / name
            if is_file(path):
                section = _flake8_section(path, parses)
                if section is not None:
                    return path, section
    return None


def _toml_table(path: Path, parses: Parses, whole_file: bool = False) -> Optional[Dict[str, object]]:
    """`[tool.flake8-no-apex]` of a TOML file; with `whole_file`, a file without that table is
    the table (a dedicated file named by --config, as ruff reads a ruff.toml)."""
    def table_of(text: str) -> Optional[Dict[str, object]]:
        try:
            data = load_toml(text)
        except ValueError as error:
            raise ConfigError(f"{path}: cannot read its settings: {error}") from None
        tool = data.get("tool", {})
        table = tool.get("flake8-no-apex") if isinstance(tool, dict) else None
        if table is not None and not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.flake8-no-apex] must be a table, not {type(table).__name__}")
        return data if table is None and whole_file else table

    return parses.of("toml-file" if whole_file else "toml", path, _read(path), table_of)  # type: ignore


def _pyproject(start: Path, parses: Parses) -> Optional[Tuple[Path, Dict[str, object]]]:
    for directory in (start, *start.parents):
        path = directory / "pyproject.toml"
        if is_file(path):
            table = _toml_table(path, parses)
            if table is not None:
                return path, table
    return None


def load(start: Path, config: Optional[str] = None, isolated: bool = False,
         parses: Optional[Parses] = None) -> Settings:
    """flake8's config file first, then `[tool.flake8-no-apex]`, which wins on conflicts; with
    `config`, that file alone (TOML or flake8's INI); `isolated`, none (as flake8's --isolated).
    `parses`: what the files parsed to on an earlier run, kept with their texts (the cache)."""
    parses = parses or _Unkept()
    settings = Settings()
    if isolated:
        return settings
    if config is not None:
        path = Path(config)
        if not is_file(path):
            raise ConfigError(f"{config}: the --config file does not exist")
        if path.suffix == ".toml":
            table = _toml_table(path, parses, whole_file=path.name != "pyproject.toml")
            found = [(path, table, "all")] if table is not None else []
        else:
            section = _flake8_section(path, parses)
            found = [(path, section, "close")] if section is not None else []
        if not found:
            settings.warnings.append(f"{config}: no [{'tool.flake8-no-apex' if path.suffix == '.toml' else 'flake8'}] "
                                     f"settings in the --config file")
    else:
        flake8_file, pyproject = _flake8_file(start, parses), _pyproject(start, parses)
        found = ([(*flake8_file, "close")] if flake8_file else []) + ([(*pyproject, "all")] if pyproject else [])
    for path, values, unknown in found:
        settings.update(values, str(path), unknown)
    return settings
