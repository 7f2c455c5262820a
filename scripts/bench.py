"""Speed, as ratios of paired runs in one invocation (never absolute seconds in tests).

    python scripts/bench.py [--runs N] [--wide TREE] [TREE]

TREE defaults to the regression corpus (pytorch-lightning 1.8.6 from PyPI, fetched by
tests/corpus.py: the worst case, it implements the deprecated APIs itself); `--wide` to
transformers 5.25's sources from PyPI (2,951 files, few of them with AMP words: the large tree).
Each line is the median, over N pairs run A B A B ..., of A's CPU time (user + system, from the
kernel's account of the finished process, or of a running server's every thread) over B's, and
the same for wall time. The rows of issue 25's table come first:

- the language server opening a 9,000-line module with 3,000 findings, to its diagnostics, vs
  `check --no-cache` of that file; and a keystroke (an incremental didChange) on a real
  3,124-line module (Lightning's trainer.py and accelerator_connector.py, 43 findings), to its
  diagnostics, vs `ruff server` on the same edits (needs pygls and ruff);
- cold `check` (no cache) and warm `check` (nothing changed) vs `ruff check --select NPY201
  --no-cache` (one ruff rule: the yardstick of a fast linter), when ruff is installed;
- `fix --diff` vs cold `check`, on TREE and on the wide tree, and `check -j 2` vs `-j 1` on the
  wide tree;

then:

- `check` of one module without a rule's word (the pre-commit hook's usual run: the largest
  such module of TREE, named, so parsed for its syntax) vs ruff's check of it;
- `fix --diff` vs cold `check` on a copy of TREE that Python has compiled (`compileall`);
- flake8 -j1 with the plugin vs without it, on TREE and on a corpus without AMP code (the
  top-level modules of this Python's standard library), and the plugin's own CPU time in such a
  run (its import and its calls, timed inside the process: the pairs are noisier than the share);
- peak memory of a cold `check`, and its CPU time and memory on 4 copies of TREE vs 1;
- fixing a module with 4,000 fixes vs one with 500 (in this process; linear is 8x).

The tool runs as `pip install '.[server]'` installs it: the bench builds it from CHECKOUT (by
default this one) into a virtual environment of its own, with its dependencies from the package
index, and runs its console script, so the interpreter's start is the product's, not this
interpreter's site (an editable install's finder, a sandbox's `.pth` files: 40 ms on this
project's machine, most of ruff's whole run). `--editable` runs `python -m flake8_no_apex` in
this interpreter instead, as the bench did before. The children get a bytecode cache of their
own. A line also shows the pure-Python floor of a cold check: starting Python, reading every
module and `ast.parse` of those that pass the pre-filter, nothing else. Run it on an idle
machine if you can; pairing keeps the ratios meaningful on a busy one.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
from lsp_client import LanguageClient  # noqa: E402

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
# the product under test: an interpreter that has it, and its command (main() sets them)
PYTHON = sys.executable
TOOL = [PYTHON, "-m", "flake8_no_apex"]
# the floor of a cold check: start Python, read every module, parse those the pre-filter passes
FLOOR = """
import ast, sys
parsed = set(open(sys.argv[2], encoding="utf-8").read().splitlines())
for path in open(sys.argv[1], encoding="utf-8").read().splitlines():
    text = open(path, "rb").read()
    if path in parsed:
        ast.parse(text)
"""
# the modules of a tree that pass the product's pre-filter, one per line
PASSING = """
import sys
from pathlib import Path
from flake8_no_apex.engine import default_prefilter
from flake8_no_apex.files import read
passes = default_prefilter().may_match
print("\\n".join(str(f) for f in sorted(Path(sys.argv[1]).rglob("*.py")) if passes(read(f).text)))
"""
# the children's environment: bytecode written and read in a cache of the run's own (main() sets it)
ENV = dict(os.environ)


def measure(command: Sequence[str], cwd: Path) -> Tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak MiB) of one run, from the kernel's account of the child."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty command cannot block on it
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors, env=ENV)
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


def installed(checkout: Path, work: Path) -> Path:
    """A virtual environment holding the tool as `pip install '.[server]'` installs it from
    `checkout` (pip compiles its bytecode); returns its interpreter."""
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           f"{checkout}[server]"], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"installing {checkout} failed:\n{done.stdout}{done.stderr}")
    return python


def floor_command(tree: Path, work: Path) -> Tuple[List[str], int]:
    """The floor's command line for `tree`, and how many modules it parses."""
    passing = subprocess.run([PYTHON, "-c", PASSING, str(tree)], capture_output=True, text=True, check=True,
                             env=ENV).stdout
    (work / "parsed.txt").write_text(passing, encoding="utf-8")
    (work / "modules.txt").write_text("".join(f"{f}\n" for f in sorted(tree.rglob("*.py"))), encoding="utf-8")
    return [PYTHON, "-c", FLOOR, str(work / "modules.txt"), str(work / "parsed.txt")], len(passing.splitlines())


def copies(tree: Path, count: int, into: Path) -> Path:
    root = into / f"x{count}"
    for index in range(count):
        shutil.copytree(tree, root / f"copy{index}", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--wide", type=Path, help="the large tree (default: transformers 5.25 from PyPI)")
    parser.add_argument("--runs", type=int, default=5, help="pairs per comparison (default: 5)")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the source tree of the product to install and measure (default: this one)")
    parser.add_argument("--editable", action="store_true",
                        help="measure `python -m flake8_no_apex` in this interpreter, installing nothing")
    args = parser.parse_args()
    if args.editable and importlib.util.find_spec("flake8_no_apex") is None:
        sys.exit("flake8-no-apex is not installed in this Python: pip install -e . first")
    tree = (args.tree or corpus.ensure() or sys.exit("no tree given and the corpus could not be downloaded"))
    wide = (args.wide or corpus.ensure("transformers", "5.25.0") or sys.exit("the wide tree could not be downloaded"))
    tree, wide = tree.resolve(), wide.resolve()
    for name, where in (("tree", tree), ("wide tree", wide)):
        files = sorted(where.rglob("*.py"))
        lines = sum(path.read_bytes().count(b"\n") for path in files)
        print(f"{name}: {where} ({len(files)} files, {lines} lines)")
    print(f"{args.runs} pairs per line, medians; Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    global PYTHON, TOOL
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(work / "bytecode")
        if args.editable:
            print("the product: python -m flake8_no_apex, in this interpreter")
        else:
            PYTHON = str(installed(args.checkout.resolve(), work))
            TOOL = [str(Path(PYTHON).with_name("flake8-no-apex"))]
            print(f"the product: flake8-no-apex, installed from {args.checkout.resolve()} "
                  "into a new virtual environment")
        yardstick = ruff()
        has_server = subprocess.run([PYTHON, "-c", "import pygls"], capture_output=True).returncode == 0
        if not has_server:
            print("pygls is not installed: no server rows (pip install -e '.[server]')")
        else:
            server_rows(work, tree, yardstick, args.runs)
        cache = work / "cache"
        cold = [*TOOL, "check", "--exit-zero", "--no-cache", str(tree)]
        warm = [*TOOL, "check", "--exit-zero", "--cache-dir", str(cache), str(tree)]
        subprocess.run(warm, cwd=work, capture_output=True, env=ENV)  # fills the cache
        if yardstick:
            one_rule = [*yardstick, "check", "--select", "NPY201", "--no-cache", "--exit-zero", "--quiet", str(tree)]
            for name, command in (("cold check", cold), ("warm check", warm)):
                cpu, wall, peak = paired(command, one_rule, args.runs, work)
                print(f"{name} / ruff --select NPY201: CPU {cpu:.2f}x, wall {wall:.2f}x (peak {peak:.0f} MiB)")
            floor, parsed = floor_command(tree, work)
            floor_cpu, floor_wall, _ = paired(floor, one_rule, args.runs, work)
            cpu, wall, _ = paired(cold, floor, args.runs, work)
            print(f"the floor (start Python, read every module, ast.parse the {parsed} that pass the pre-filter) "
                  f"/ ruff: CPU {floor_cpu:.2f}x, wall {floor_wall:.2f}x; cold check / the floor: CPU {cpu:.2f}x, "
                  f"wall {wall:.2f}x")
            clean = max(set(tree.rglob("*.py")) - set(map(Path, (work / "parsed.txt").read_text().splitlines())),
                        key=lambda path: (path.stat().st_size, str(path)))
            alone = [*TOOL, "check", "--exit-zero", "--no-cache", str(clean)]
            cpu, wall, _ = paired(alone, [*yardstick, "check", "--select", "NPY201", "--no-cache", "--exit-zero",
                                          "--quiet", str(clean)], args.runs, work)
            spent = statistics.median(measure(alone, work)[0] for _ in range(args.runs))
            print(f"check of one module without a rule's word ({clean.stat().st_size // 1024} KiB) / ruff's: "
                  f"CPU {cpu:.2f}x ({spent * 1000:.0f} ms), wall {wall:.2f}x")
        else:
            print("ruff is not installed: no yardstick (pip install ruff)")
        for name, where in (("", tree), (", the wide tree", wide)):
            cpu, wall, _ = paired([*TOOL, "fix", "--diff", str(where)],
                                  [*TOOL, "check", "--exit-zero", "--no-cache", str(where)], args.runs, work)
            print(f"fix --diff / cold check{name}: CPU {cpu:.2f}x, wall {wall:.2f}x")
        cpu, wall, _ = paired([*TOOL, "check", "-j", "2", "--exit-zero", "--no-cache", str(wide)],
                              [*TOOL, "check", "-j", "1", "--exit-zero", "--no-cache", str(wide)], args.runs, work)
        print(f"check -j 2 / -j 1, the wide tree: CPU {cpu:.2f}x, wall {wall:.2f}x")

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
            cpu, wall, _ = paired([PYTHON, "-m", "flake8", *options],
                                  [PYTHON, "-c", WITHOUT_PLUGIN, *options], runs, work)
            shares = [float(subprocess.run([PYTHON, "-c", PLUGIN_SHARE, *options], cwd=work, check=True,
                                           capture_output=True, text=True, env=ENV).stdout.split()[-1])
                      for _ in range(runs)]
            print(f"flake8 -j1 with the plugin / without it, on {name}: CPU {cpu:.3f}x, wall {wall:.3f}x; "
                  f"the plugin's own share of a run: {1 + statistics.median(shares):.3f}x")

        four = copies(tree, 4, work)
        one = copies(tree, 1, work)
        scale_cpu, _, peak_four = paired([*TOOL, "check", "--exit-zero", "--no-cache", str(four)],
                                         [*TOOL, "check", "--exit-zero", "--no-cache", str(one)], args.runs, work)
        _, _, peak_one = paired([*TOOL, "check", "--exit-zero", "--no-cache", str(one)], cold, 1, work)
        print(f"cold check of 4 copies / of 1: CPU {scale_cpu:.2f}x (linear: 4x), "
              f"peak memory {peak_four:.0f} / {peak_one:.0f} MiB")
        fixes = subprocess.run([PYTHON, "-c", FIX_SECONDS], capture_output=True, text=True, check=True, env=ENV)
        print(f"fix of 4,000 fixes / of 500 fixes: {float(fixes.stdout):.1f}x (linear: 8x)")


def server_rows(work: Path, tree: Path, yardstick: List[str], runs: int) -> None:
    """The language server: opening a module with thousands of findings, vs a check of it; a
    keystroke in a large real module, vs ruff's server on the same keystroke."""
    # (not imported here: a child's peak memory starts from this process's, pygls included)
    asked = "import flake8_no_apex.server as s; print(getattr(s, 'DEBOUNCE', 0))"  # (0: a checkout before it)
    debounce = float(subprocess.run([PYTHON, "-c", asked], capture_output=True, text=True, check=True).stdout)
    big = work / "editor" / "big.py"
    big.parent.mkdir()
    scalers = (f"def scaler{i}():\n    return torch.cuda.amp.GradScaler()\n\n" for i in range(3000))
    big.write_text("import torch\n" + "".join(scalers))
    opened, checked = [], []
    for _ in range(runs + 1):  # the first pair warms up
        client = LanguageClient([*TOOL, "server"], big.parent, ENV)
        start_cpu, start = client.cpu(), time.perf_counter()
        found = client.open(big.as_uri(), big.read_text())
        opened.append((client.cpu() - start_cpu, time.perf_counter() - start))
        client.close()
        checked.append(measure([*TOOL, "check", "--exit-zero", "--no-cache", str(big)], work)[:2])
    lines = big.read_text().count("\n")
    cpu, wall = _median_ratio(opened[1:], checked[1:], 0), _median_ratio(opened[1:], checked[1:], 1)
    print(f"server: open {lines} lines, {len(found)} findings / check --no-cache of the file: "
          f"CPU {cpu:.2f}x, wall {wall:.2f}x")
    if not yardstick:
        return
    parts = [tree / "pytorch_lightning" / "trainer" / "trainer.py",
             tree / "pytorch_lightning" / "trainer" / "connectors" / "accelerator_connector.py"]
    if not all(part.is_file() for part in parts):
        print("server: no keystroke row (TREE is not pytorch-lightning 1.8)")
        return
    module = work / "editor" / "module.py"
    module.write_text("".join(part.read_text() for part in parts))
    text = module.read_text()
    line = text.count("\n") // 2
    column = len(text.splitlines()[line])
    edits = 20
    ours, theirs = [], []
    for _ in range(runs + 1):
        for command, into in (([*TOOL, "server"], ours), ([*yardstick, "server"], theirs)):
            client = LanguageClient(command, module.parent, ENV)
            client.open(module.as_uri(), text)
            start_cpu, start = client.cpu(), time.perf_counter()
            for version in range(2, edits + 2):  # a space typed at the end of a line, awaiting each publish
                client.insert(module.as_uri(), version, line, column + version - 2, " ")
            into.append(((client.cpu() - start_cpu) / edits, (time.perf_counter() - start) / edits))
            client.close()
    print(f"server: a keystroke in {text.count(chr(10))} lines, to its diagnostics / ruff server's: "
          f"CPU {_median_ratio(ours[1:], theirs[1:], 0):.2f}x ({statistics.median(c for c, _ in ours[1:]) * 1000:.0f} "
          f"vs {statistics.median(c for c, _ in theirs[1:]) * 1000:.0f} ms), "
          f"wall {_median_ratio(ours[1:], theirs[1:], 1):.2f}x (ours waits {debounce * 1000:.0f} ms for the next key)")


def _median_ratio(a: List[Tuple[float, float]], b: List[Tuple[float, float]], field: int) -> float:
    return statistics.median(x[field] / max(y[field], 1e-9) for x, y in zip(a, b))


# CPU time to fix a module with N independent fixes (the best of 3), 4,000 over 500, with the
# collector as `fix` sets it (at Python's default pace, the collector's passes over the live
# trees alone made 4,000 fixes cost 10.5x 500)
FIX_SECONDS = """
import time
from contextlib import nullcontext
from flake8_no_apex.fixer import fix_text
try:
    from flake8_no_apex.collector import collect_less, paused
    collect_less()
except ImportError:  # a checkout before the collector's settings: Python's own
    paused = nullcontext
def seconds(fixes):
    source = "import torch\\n" + "".join(f"s{i} = torch.cuda.amp.GradScaler()\\n" for i in range(fixes))
    times = []
    for _ in range(3):
        with paused():
            start = time.process_time()
            fix_text(source)
            times.append(time.process_time() - start)
    return min(times)
print(seconds(4000) / seconds(500))
"""


if __name__ == "__main__":
    main()
