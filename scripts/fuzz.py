"""Fuzz the fixer for a bounded time: it never crashes, and what it writes compiles and is stable;
the tree it makes of what it wrote by parsing the edited statements again is `ast.parse`'s.

Two sources of input: programs generated from Python's grammar (hypothesmith), and legacy files
(the shipped example, the test fixtures, the legacy apex scripts, every rule example) mutated at random: lines deleted,
duplicated, swapped and re-indented, rule snippets spliced in. A fix may refuse (FixError: the
file is left as it was); anything else raised is a failure, printed with the input that caused
it. Run by CI after the tests:

    python scripts/fuzz.py --seconds 120 [--seed 1]
"""
from __future__ import annotations

import argparse
import ast
import random
import sys
import time
import traceback
import warnings
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flake8_no_apex import fixer  # noqa: E402
from flake8_no_apex.fixer import FixError, fix_text  # noqa: E402
from flake8_no_apex.reparse import reparsed  # noqa: E402
from flake8_no_apex.rules import PYTHON_RULES  # noqa: E402

LEGACY = [ROOT / "examples" / "legacy_train.py", *sorted((ROOT / "tests" / "fixtures").glob("*.py")),
          *sorted((ROOT / "tests" / "apex_migration").glob("*.py"))]
SNIPPETS = [s for rule in PYTHON_RULES for s in (rule.before, rule.after, *rule.invalid, *rule.valid)]


class Failure(Exception):
    pass


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def reparsed_as_parsed(tree, before, edits, after):
    """The fixer's `reparsed`, checked against a parse of the whole text."""
    made = reparsed(tree, before, edits, after)
    if made is not None and _dump(made) != _dump(ast.parse(after.text)):
        raise Failure(f"the statements parsed again after the edits {edits} give another tree than ast.parse")
    return made


fixer.reparsed = reparsed_as_parsed


def check(source: str) -> bool:
    """Fix a program both ways; False if it is no valid Python (nothing to check)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<input>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for unsafe in (False, True):
        try:
            result = fix_text(source, unsafe=unsafe)
        except FixError:
            continue  # a refusal: the file is left as it was
        except Exception as error:
            raise Failure(f"fix raised {type(error).__name__}: {error}") from error
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(result.text, "<fixed>", "exec", dont_inherit=True)
        if fix_text(result.text, unsafe=unsafe).text != result.text:
            raise Failure("a second fix changed the fixed text")
    return True


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True) or ["\n"]
    for _ in range(rng.randint(1, 4)):
        operation = rng.choice(["delete", "duplicate", "swap", "indent", "dedent", "splice"])
        at = rng.randrange(len(lines))
        if operation == "delete" and len(lines) > 1:
            del lines[at]
        elif operation == "duplicate":
            lines.insert(at, lines[at])
        elif operation == "swap":
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif operation == "indent":
            lines[at] = "    " + lines[at]
        elif operation == "dedent":
            lines[at] = lines[at][4:] if lines[at].startswith("    ") else lines[at]
        else:
            indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
            lines[at:at] = [indent + line + "\n" for line in rng.choice(SNIPPETS).splitlines()]
    return "".join(lines)


def fuzz_mutations(deadline: float, rng: random.Random) -> int:
    sources = [path.read_text(encoding="utf-8") for path in LEGACY] + SNIPPETS
    valid = 0
    while time.monotonic() < deadline:
        source = mutate(rng.choice(sources), rng)
        try:
            valid += check(source)
        except Failure:
            print(f"--- input:\n{source}", file=sys.stderr)
            raise
    return valid


def fuzz_grammar(deadline: float) -> int:
    count = 0

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def batch(source):
        nonlocal count
        count += check(source)

    while time.monotonic() < deadline:
        batch()
    return count


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="time budget, split between the two sources")
    parser.add_argument("--seed", type=int, default=None, help="seed of the mutations (default: random)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    start = time.monotonic()
    try:
        mutated = fuzz_mutations(start + args.seconds / 2, random.Random(seed))
        generated = fuzz_grammar(start + args.seconds)
    except Failure as failure:
        traceback.print_exc()
        print(f"fuzz: FAILED ({failure}); mutation seed {seed}", file=sys.stderr)
        return 1
    print(f"fuzz: {mutated} mutated legacy programs and {generated} generated programs fixed without a "
          f"failure in {time.monotonic() - start:.0f} s (mutation seed {seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
