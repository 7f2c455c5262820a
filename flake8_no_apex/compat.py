"""What differs between the supported Pythons, imported where it is first used (a run that
meets no TOML file never loads the parser)."""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Any, Dict


def load_toml(text: str) -> Dict[str, Any]:
    """`tomllib.loads` (tomli's before Python 3.11); its errors are ValueErrors."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    return tomllib.loads(text)
