"""Per-code finding totals on the regression corpus (pytorch-lightning 1.8.6), for recall and
false-positive comparisons between two versions of the rule table:

    python scripts/corpus_counts.py
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import corpus  # noqa: E402
from flake8_no_apex.checker import check_tree  # noqa: E402


def main() -> None:
    root = corpus.ensure()
    if root is None:
        sys.exit("the corpus could not be downloaded")
    counts: Counter = Counter()
    files = 0
    for path in sorted(Path(root).rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except SyntaxError:
            continue
        files += 1
        counts.update(f.code for f in check_tree(tree))
    print(f"{files} files, {sum(counts.values())} findings: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
