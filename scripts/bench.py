"""Speed, as ratios measured in one run on real code (never absolute seconds in tests).

    python scripts/bench.py [TREE]

TREE defaults to the regression corpus (pytorch-lightning 1.8.6, fetched by
tests/corpus.py). Prints:
- flake8 -j1 with the plugin / flake8 -j1 without it (the plugin's cost to a flake8 user);
- the plugin's own time (pre-filter + walk) / ast.parse of the same files;
- the share of files the pre-filter rules out before any walk;
- `flake8-no-apex check` / `flake8 --select APX` (the standalone command against its peer);
- fixing a file with 4,000 fixes / one with 500 (CPU time; linear is 8x).
Each timing is the best of --repeat runs, to damp the noise of a shared machine.
"""
from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import corpus  # noqa: E402
from flake8_no_apex.checker import check_tree  # noqa: E402
from flake8_no_apex.fixer import fix_text  # noqa: E402
from flake8_no_apex.prefilter import default as default_prefilter  # noqa: E402

# flake8 has no switch to turn one plugin off: drop ours from the plugins it finds.
WITHOUT_PLUGIN = """
import sys
import flake8.plugins.finder as finder
found = finder.find_plugins
finder.find_plugins = lambda *a, **k: [p for p in found(*a, **k) if p.package != "flake8-no-apex"]
from flake8.main.cli import main
sys.exit(main())
"""


def best_of(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def flake8_time(tree: Path, repeat: int, with_plugin: bool, *options: str) -> float:
    command = [sys.executable, "-m", "flake8"] if with_plugin else [sys.executable, "-c", WITHOUT_PLUGIN]
    command += ["--isolated", "-j1", "--exit-zero", "--format=%(code)s", *options, str(tree)]
    return best_of(repeat, lambda: subprocess.run(command, capture_output=True, check=True))


def check_time(tree: Path, repeat: int) -> float:
    command = [sys.executable, "-m", "flake8_no_apex", "check", "--exit-zero", "-j", "1", str(tree)]
    return best_of(repeat, lambda: subprocess.run(command, capture_output=True, check=True))


def fix_seconds(fixes: int, repeat: int) -> float:
    """CPU time to fix a module with `fixes` independent fixes."""
    source = "import torch\n" + "".join(f"s{i} = torch.cuda.amp.GradScaler()\n" for i in range(fixes))
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fix_text(source)
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tree = args.tree or corpus.ensure()
    if tree is None:
        sys.exit("no tree given and the corpus could not be downloaded")

    sources = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(tree.rglob("*.py"))]
    trees = [ast.parse(s) for s in sources]
    lines = sum(s.count("\n") for s in sources)
    prefilter = default_prefilter()

    def plugin_work() -> None:
        for source, module in zip(sources, trees):
            if prefilter.may_match(source):
                check_tree(module)

    parse = best_of(args.repeat, lambda: [ast.parse(s) for s in sources])
    plugin = best_of(args.repeat, plugin_work)
    walked = sum(map(prefilter.may_match, sources))
    bare = flake8_time(tree, args.repeat, with_plugin=False)
    full = flake8_time(tree, args.repeat, with_plugin=True)
    selected = flake8_time(tree, args.repeat, True, "--select", "APX")
    standalone = check_time(tree, args.repeat)

    print(f"tree: {tree} ({len(sources)} files, {lines} lines)")
    print(f"pre-filter: walks {walked}/{len(sources)} files ({1 - walked / len(sources):.0%} ruled out)")
    print(f"plugin work / ast.parse of every file: {plugin / parse:.2f}x")
    print(f"flake8 -j1 with the plugin / without it: {full / bare:.3f}x")
    print(f"flake8-no-apex check / flake8 -j1 --select APX: {standalone / selected:.2f}x")
    print(f"fix of 4,000 fixes / of 500 fixes: {fix_seconds(4000, args.repeat) / fix_seconds(500, args.repeat):.1f}x "
          "(linear: 8x)")


if __name__ == "__main__":
    main()
