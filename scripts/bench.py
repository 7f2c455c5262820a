"""Speed, as ratios of paired runs in one invocation (never absolute seconds in tests).

    python scripts/bench.py [--runs N] [TREE]

TREE defaults to the regression corpus (pytorch-lightning 1.8.6 from PyPI, fetched by
tests/corpus.py: the worst case, it implements the deprecated APIs itself). Each line is the
median, over N pairs run A B A B ..., of A's CPU time (user + system, from the kernel's account
of the finished process) over B's, and the same for wall time:

- cold `check` (no cache) and warm `check` (nothing changed) vs `ruff check --select NPY201
  --no-cache` (one ruff rule: the yardstick of a fast linter), when ruff is installed;
- `fix --diff` vs cold `check`, on the tree as downloaded and on a copy Python has compiled
  (`compileall`: a tree whose code has run, where `fix` need not parse the files it skips);
- flake8 -j1 with the plugin vs without it, on the tree and on a corpus without AMP code (the
  top-level modules of this Python's standard library), and the plugin's own CPU time in such a
  run (its import and its calls, timed inside the process: the pairs are noisier than the share);
- peak memory of a cold `check`, and its CPU time and memory on 4 copies of the tree vs 1;
- fixing a module with 4,000 fixes vs one with 500 (in this process; linear is 8x).

Run it on an idle machine if you can; pairing keeps the ratios meaningful on a busy one.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import List, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import corpus  # noqa: E402

# flake8 has no switch to turn one plugin off: drop ours from the plugins it finds.
WITHOUT_PLUGIN = """
import sys
import flake8.plugins.finder as finder
found = finder.find_plugins
finder.find_plugins = lambda *a, **k: [p for p in found(*a, **k) if p.package != "flake8-no-apex"]
from flake8.main.cli import main
sys.exit(main())
"""
# The plugin's own CPU time (its import and every call of its run) over the whole process's, in
# one flake8 run: the paired runs above swing by several percent on flake8's 15-30 s, far more
# than this share, which they can only bound.
PLUGIN_SHARE = """
import sys, time
start = time.process_time()
import flake8_no_apex.plugin as plugin
spent = time.process_time() - start
run = plugin.Plugin.run
def timed(self):
    global spent
    start = time.process_time()
    found = list(run(self))
    spent += time.process_time() - start
    return iter(found)
plugin.Plugin.run = timed
from flake8.main.cli import main
try:
    main()
except SystemExit:
    pass
print(spent / time.process_time())
"""
TOOL = [sys.executable, "-m", "flake8_no_apex"]


def measure(command: Sequence[str], cwd: Path) -> Tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak MiB) of one run, from the kernel's account of the child."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty command cannot block on it
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: `fix --diff` would change files
            errors.seek(0)
            sys.exit(f"{' '.join(command)} failed: {errors.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def paired(a: Sequence[str], b: Sequence[str], runs: int, cwd: Path) -> Tuple[float, float, float]:
    """Medians of A/B in CPU and in wall time over `runs` pairs (after one warm-up each), and
    A's median peak memory."""
    measure(a, cwd)
    measure(b, cwd)
    cpu, wall, peak = [], [], []
    for _ in range(runs):
        a_cpu, a_wall, a_peak = measure(a, cwd)
        b_cpu, b_wall, _ = measure(b, cwd)
        cpu.append(a_cpu / b_cpu)
        wall.append(a_wall / b_wall)
        peak.append(a_peak)
    return statistics.median(cpu), statistics.median(wall), statistics.median(peak)


def ruff() -> List[str]:
    found = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    return [found] if found else []


def copies(tree: Path, count: int, into: Path) -> Path:
    root = into / f"x{count}"
    for index in range(count):
        shutil.copytree(tree, root / f"copy{index}", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=5, help="pairs per comparison (default: 5)")
    args = parser.parse_args()
    if importlib.util.find_spec("flake8_no_apex") is None:
        sys.exit("flake8-no-apex is not installed in this Python: pip install -e . first")
    tree = (args.tree or corpus.ensure() or sys.exit("no tree given and the corpus could not be downloaded"))
    tree = tree.resolve()
    files = sorted(tree.rglob("*.py"))
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"tree: {tree} ({len(files)} files, {lines} lines), {args.runs} pairs per line, medians")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        cache = work / "cache"
        cold = [*TOOL, "check", "--exit-zero", "--no-cache", str(tree)]
        warm = [*TOOL, "check", "--exit-zero", "--cache-dir", str(cache), str(tree)]
        subprocess.run(warm, cwd=work, capture_output=True)  # fills the cache
        yardstick = ruff()
        if yardstick:
            one_rule = [*yardstick, "check", "--select", "NPY201", "--no-cache", "--exit-zero", "--quiet", str(tree)]
            for name, command in (("cold check", cold), ("warm check", warm)):
                cpu, wall, peak = paired(command, one_rule, args.runs, work)
                print(f"{name} / ruff --select NPY201: CPU {cpu:.2f}x, wall {wall:.2f}x (peak {peak:.0f} MiB)")
        else:
            print("ruff is not installed: no yardstick (pip install ruff)")
        diff = [*TOOL, "fix", "--diff", str(tree)]
        cpu, wall, _ = paired(diff, cold, args.runs, work)
        print(f"fix --diff / cold check: CPU {cpu:.2f}x, wall {wall:.2f}x")
        compiled = work / "compiled" / tree.name
        shutil.copytree(tree, compiled, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(compiled)], check=True, capture_output=True)
        cpu, wall, _ = paired([*TOOL, "fix", "--diff", str(compiled)],
                              [*TOOL, "check", "--exit-zero", "--no-cache", str(compiled)], args.runs, work)
        print(f"fix --diff / cold check, the tree compiled by Python: CPU {cpu:.2f}x, wall {wall:.2f}x")

        stdlib = work / "stdlib"
        stdlib.mkdir()
        for module in Path(sysconfig.get_paths()["stdlib"]).glob("*.py"):
            shutil.copy(module, stdlib / module.name)
        for name, where, runs in (("the tree", tree, max(3, args.runs // 2)), ("the standard library", stdlib, 3)):
            options = ["--isolated", "-j1", "--exit-zero", "--format=%(code)s", str(where)]
            cpu, wall, _ = paired([sys.executable, "-m", "flake8", *options],
                                  [sys.executable, "-c", WITHOUT_PLUGIN, *options], runs, work)
            shares = [float(subprocess.run([sys.executable, "-c", PLUGIN_SHARE, *options], cwd=work, check=True,
                                           capture_output=True, text=True).stdout.split()[-1]) for _ in range(runs)]
            print(f"flake8 -j1 with the plugin / without it, on {name}: CPU {cpu:.3f}x, wall {wall:.3f}x; "
                  f"the plugin's own share of a run: {1 + statistics.median(shares):.3f}x")

        four = copies(tree, 4, work)
        one = copies(tree, 1, work)
        scale_cpu, _, peak_four = paired([*TOOL, "check", "--exit-zero", "--no-cache", str(four)],
                                         [*TOOL, "check", "--exit-zero", "--no-cache", str(one)], args.runs, work)
        _, _, peak_one = paired([*TOOL, "check", "--exit-zero", "--no-cache", str(one)], cold, 1, work)
        print(f"cold check of 4 copies / of 1: CPU {scale_cpu:.2f}x (linear: 4x), "
              f"peak memory {peak_four:.0f} / {peak_one:.0f} MiB")
    print(f"fix of 4,000 fixes / of 500 fixes: {fix_seconds(4000) / fix_seconds(500):.1f}x (linear: 8x)")


def fix_seconds(fixes: int, repeat: int = 3) -> float:
    """CPU time to fix a module with `fixes` independent fixes (the best of `repeat`)."""
    from flake8_no_apex.fixer import fix_text

    source = "import torch\n" + "".join(f"s{i} = torch.cuda.amp.GradScaler()\n" for i in range(fixes))
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fix_text(source)
        times.append(time.process_time() - start)
    return min(times)


if __name__ == "__main__":
    main()
