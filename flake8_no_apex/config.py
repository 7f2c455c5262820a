"""Settings of the standalone command: flake8's config files, `[tool.flake8-no-apex]` in
pyproject.toml, then the command line, with flake8's meaning for each key."""
from __future__ import annotations

import configparser
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from .compat import tomllib
from .rules import CODES, DEFAULT_OFF
from .targets import is_file


# flake8's default exclusions, and the trees a tool that writes must never touch
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg",
                   ".venv", "venv", "site-packages", "node_modules", "build", "dist")
_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")  # what flake8 accepts in select and ignore
KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude", "apex-target-versions")


class ConfigError(ValueError):
    """A setting that cannot be used."""


def _split(value) -> List[str]:
    items = value if isinstance(value, list) else str(value).replace("\n", ",").split(",")
    return [str(item).strip() for item in items if str(item).strip()]


@dataclass
class Settings:
    select: Optional[List[str]] = None  # None: flake8's default selection
    extend_select: List[str] = field(default_factory=list)
    ignore: Optional[List[str]] = None  # None: the default ignore list (APX107, APX108)
    extend_ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = field(default_factory=list)
    targets: str = "auto"
    sources: List[str] = field(default_factory=list)  # the config files read

    def update(self, values: Dict[str, object], source: str) -> None:
        for key, value in values.items():
            key = key.replace("_", "-")
            if key not in KEYS:
                continue
            if key == "apex-target-versions":
                self.targets = str(value).strip()
            else:
                setattr(self, key.replace("-", "_"), _split(value))
        self.sources.append(source)

    def selector(self) -> Callable[[str], bool]:
        """flake8's decision: the longest matching prefix of select and ignore wins, and the
        default ignore list holds the opt-in codes (APX107, APX108, APX110)."""
        selected = [*(self.select if self.select is not None else ["APX"]), *self.extend_select]
        ignored = [*(self.ignore if self.ignore is not None else DEFAULT_OFF), *self.extend_ignore]
        explicit_select = self.select is not None or self.extend_select
        for prefix in selected + ignored:
            if not _CODE.match(prefix):
                raise ConfigError(f"{prefix!r} is no error code: codes look like APX or APX201 (flake8's "
                                  f"pattern {_CODE.pattern})")
            if prefix.startswith("APX") and not any(code.startswith(prefix) for code in CODES):
                raise ConfigError(f"no code starts with {prefix!r}")

        def longest(code: str, prefixes: List[str]) -> int:
            return max((len(p) for p in prefixes if code.startswith(p)), default=-1)

        def decide(code: str) -> bool:
            chosen, dropped = longest(code, selected), longest(code, ignored)
            if chosen < 0:
                return False
            if self.ignore is None and dropped >= 0 and code in DEFAULT_OFF and explicit_select:
                dropped = -1  # an explicit selection overrides the default ignore list, as in flake8
            return chosen > dropped

        return decide


def _flake8_file(start: Path) -> Optional[Tuple[Path, Dict[str, str]]]:
    """The first of setup.cfg, tox.ini, .flake8 with a [flake8] section, from `start` up."""
    for directory in (start, *start.parents):
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            path = directory / name
            if is_file(path):
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
                data = tomllib.loads(path.read_text(encoding="utf-8"))
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
