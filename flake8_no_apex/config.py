"""Settings of the standalone command: flake8's config files, `[tool.flake8-no-apex]` in
pyproject.toml, then the command line, with flake8's meaning for each key."""
from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .compat import load_toml
from .codes import CODES, DEFAULT_OFF
from .targets import is_file


# flake8's default exclusions, and the trees a tool that writes must never touch
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg",
                   ".venv", "venv", "site-packages", "node_modules", "build", "dist", ".flake8-no-apex-cache")
_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")  # what flake8 accepts in select and ignore
KEYS = ("select", "extend-select", "ignore", "extend-ignore", "per-file-ignores", "exclude", "extend-exclude",
        "apex-target-versions", "docs-url", "check-docs")


class ConfigError(ValueError):
    """A setting that cannot be used."""


def _split(value) -> List[str]:
    items = value if isinstance(value, list) else str(value).replace("\n", ",").split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _boolean(value, key: str, source: str) -> bool:
    """A switch as TOML writes it, or as an INI file does (flake8's configparser: true/false, 1/0, yes/no, on/off)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{key} in {source}: expected true or false, got {value!r}")


class Settings:
    """The settings of one run: config files, then the command line (a plain class: a warm
    `check` imports no dataclasses)."""

    def __init__(self, select: Optional[List[str]] = None, extend_select: Sequence[str] = (),
                 ignore: Optional[List[str]] = None, extend_ignore: Sequence[str] = (), per_file_ignores: str = "",
                 docs_url: str = "", exclude: Sequence[str] = DEFAULT_EXCLUDE, extend_exclude: Sequence[str] = (),
                 targets: str = "auto", check_docs: bool = False):
        self.select = select  # None: flake8's default selection
        self.extend_select = list(extend_select)
        self.ignore = ignore  # None: the default ignore list (codes.DEFAULT_OFF)
        self.extend_ignore = list(extend_ignore)
        self.per_file_ignores = per_file_ignores  # flake8's `pattern:codes ...` mapping
        self.docs_url = docs_url  # where the README with the rule docs is, for links in JSON and SARIF
        self.exclude = list(exclude)
        self.extend_exclude = list(extend_exclude)
        self.targets = targets
        self.check_docs = check_docs  # also the Python code of Markdown/RST files and docstring examples
        self.targets_source = "--apex-target-versions"  # or the config file that set them
        self.sources: List[str] = []  # the config files read

    def update(self, values: Dict[str, object], source: str) -> None:
        for key, value in values.items():
            key = key.replace("_", "-")
            if key not in KEYS:
                continue
            if key == "apex-target-versions":
                self.targets = str(value).strip()
                self.targets_source = f"apex-target-versions in {source}"
            elif key == "docs-url":
                self.docs_url = str(value).strip()
            elif key == "check-docs":
                self.check_docs = _boolean(value, key, source)
            elif key == "per-file-ignores":
                self.per_file_ignores = "\n".join(value) if isinstance(value, list) else str(value)
            else:
                setattr(self, key.replace("-", "_"), _split(value))
        self.sources.append(source)

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


def _flake8_file(start: Path) -> Optional[Tuple[Path, Dict[str, str]]]:
    """The first of setup.cfg, tox.ini, .flake8 with a [flake8] section, from `start` up."""
    for directory in (start, *start.parents):
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            path = directory / name
            if is_file(path):
                import configparser  # only where such a file exists

                parser = configparser.RawConfigParser()
                try:
                    parser.read(path, encoding="utf-8")
                except (configparser.Error, UnicodeDecodeError, OSError) as error:
                    raise ConfigError(f"{path}: cannot read its settings: {error}") from None
                if parser.has_section("flake8"):
                    return path, dict(parser.items("flake8"))
    return None


def _pyproject(start: Path) -> Optional[Tuple[Path, Dict[str, object]]]:
    for directory in (start, *start.parents):
        path = directory / "pyproject.toml"
        if is_file(path):
            try:
                data = load_toml(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise ConfigError(f"{path}: cannot read its settings: {error}") from None
            tool = data.get("tool", {})
            table = tool.get("flake8-no-apex") if isinstance(tool, dict) else None
            if table is not None and not isinstance(table, dict):
                raise ConfigError(f"{path}: [tool.flake8-no-apex] must be a table, not {type(table).__name__}")
            if table is not None:
                return path, table
    return None


def load(start: Path) -> Settings:
    """flake8's config file first, then `[tool.flake8-no-apex]`, which wins on conflicts."""
    settings = Settings()
    for found in (_flake8_file(start), _pyproject(start)):
        if found:
            path, values = found
            settings.update(values, str(path))
    return settings
