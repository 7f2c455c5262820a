"""What `flake8-no-apex fix` writes runs on the real libraries, without the rule's error or
warning, and keeps the observable state: autocast device/dtype/enabled, GradScaler state,
custom_fwd results and gradients, the Trainer's precision plugin, TrainingArguments fields."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_no_apex.fixer import fix_text
from flake8_no_apex.rules import PYTHON_RULES
from runtime import run
from scenarios import EXTRA_PROGRAMS, SCENARIOS
from test_examples import deprecation_warnings


def _fixes_rule(rule, unsafe: bool) -> bool:
    """Whether the fix (at this grade, and not already at the safe one) removes the rule's findings."""
    result = fix_text(rule.before, unsafe=unsafe)
    if unsafe and result.text == fix_text(rule.before).text:
        return False
    return result.text != rule.before and not any(f.rule is rule for f in result.remaining)


# (rule, grade) wherever the rule's own fix applies: safe fixes, then what --unsafe-fixes adds
FIXED = [(rule, unsafe) for rule in PYTHON_RULES for unsafe in (False, True) if _fixes_rule(rule, unsafe)]


def test_every_rule_with_a_fixer_is_exercised():
    fixable = {(rule.code, rule.title) for rule in PYTHON_RULES if rule.fixer is not None}
    assert fixable == {(rule.code, rule.title) for rule, _ in FIXED}


@pytest.mark.parametrize("rule, unsafe", FIXED,
                         ids=[f"{r.code}-{r.title}-{'unsafe' if u else 'safe'}" for r, u in FIXED])
def test_fixed_example_runs_and_keeps_what_it_did(rule, unsafe):
    scenario = SCENARIOS[(rule.code, rule.title)]
    fixed = run(fix_text(rule.before, unsafe=unsafe).text, scenario.prelude, scenario.epilogue, name="fixed")
    assert fixed.error is None, fixed.describe()
    assert not deprecation_warnings(fixed), fixed.describe()
    if scenario.observe is None:
        return
    before = run(rule.before, scenario.prelude, scenario.epilogue)
    # a removed usage cannot run: the fix must then do what the documented replacement does
    reference = before if before.error is None else run(rule.after, scenario.prelude, scenario.epilogue)
    assert reference.error is None, reference.describe()
    assert scenario.observe(fixed) == scenario.observe(reference)


@pytest.mark.parametrize("name", sorted(EXTRA_PROGRAMS))
def test_fixed_programs_do_exactly_what_they_did(name):
    program, observe = EXTRA_PROGRAMS[name]
    fixed_text = fix_text(program).text
    assert fixed_text != program
    before, fixed = run(program), run(fixed_text, name="fixed")
    assert before.error is None and fixed.error is None, (before.describe(), fixed.describe())
    assert deprecation_warnings(before) and not deprecation_warnings(fixed), fixed.describe()
    assert observe(fixed) == observe(before)


def test_the_console_script_writes_what_the_tests_run(tmp_path: Path):
    """The cases above call the fixer in-process; the command users run writes the same text."""
    for unsafe in (False, True):
        folder = tmp_path / ("unsafe" if unsafe else "safe")
        folder.mkdir()
        for number, rule in enumerate(PYTHON_RULES):
            (folder / f"example_{number}.py").write_text(rule.before, encoding="utf-8")
        command = [sys.executable, "-m", "flake8_no_apex", "fix", "--select", "APX", str(folder),
                   *(["--unsafe-fixes"] if unsafe else [])]
        subprocess.run(command, capture_output=True, check=False, cwd=tmp_path)
        for number, rule in enumerate(PYTHON_RULES):
            written = (folder / f"example_{number}.py").read_text(encoding="utf-8")
            assert written == fix_text(rule.before, unsafe=unsafe).text, rule.title


def test_old_classes_subclass_the_new_ones_so_isinstance_tells_them_apart():
    """Why a module that checks isinstance against an old class gets only unsafe call fixes."""
    import torch

    old_classes = ((torch.cuda.amp.GradScaler, "cuda"), (torch.cpu.amp.GradScaler, "cpu"))  # noqa: APX203
    for old, device in old_classes:
        assert issubclass(old, torch.amp.GradScaler)
        assert not isinstance(torch.amp.GradScaler(device, enabled=False), old)
    assert not isinstance(torch.amp.autocast("cpu"), torch.cpu.amp.autocast)  # noqa: APX202
    program = "import torch\nscaler = torch.cuda.amp.GradScaler()\nok = isinstance(scaler, torch.cuda.amp.GradScaler)\n"
    assert fix_text(program).text == program
    assert run(program).namespace["ok"] is True
    assert run(fix_text(program, unsafe=True).text).namespace["ok"] is False  # hence unsafe


def test_the_stub_torch_of_the_property_tests_has_torchs_signatures():
    """tests/stub_torch stands in for torch in the fast suite: it must take what torch takes."""
    import importlib.util
    import inspect
    from pathlib import Path

    import torch

    stub_root = Path(__file__).parents[1] / "tests" / "stub_torch" / "torch"
    pairs = {
        "amp/autocast_mode.py": ("autocast", "custom_fwd", "custom_bwd"),
        "amp/grad_scaler.py": ("GradScaler",),
        "cuda/amp/autocast_mode.py": ("autocast", "custom_fwd", "custom_bwd"),
        "cuda/amp/grad_scaler.py": ("GradScaler",),
        "cpu/amp/autocast_mode.py": ("autocast",),
        "cpu/amp/grad_scaler.py": ("GradScaler",),
    }
    for path, names in pairs.items():
        module_name = "torch." + path[:-3].replace("/", ".")
        real = importlib.import_module(module_name)
        tree = ast.parse((stub_root / path).read_text())
        for name in names:
            stub = next(n for n in tree.body if getattr(n, "name", None) == name)
            function = next(n for n in stub.body if getattr(n, "name", "") == "__init__") if isinstance(
                stub, ast.ClassDef) else stub
            real_object = getattr(real, name)
            real_signature = inspect.signature(real_object.__init__ if inspect.isclass(real_object) else real_object)
            stub_arguments = function.args
            stub_names = [a.arg for a in [*stub_arguments.args, *stub_arguments.kwonlyargs]]
            assert stub_names == list(real_signature.parameters), (module_name, name)
            stub_defaults = [ast.unparse(d) for d in [*stub_arguments.defaults, *stub_arguments.kw_defaults] if d]
            real_defaults = [p.default for p in real_signature.parameters.values() if p.default is not p.empty]
            assert len(stub_defaults) == len(real_defaults), (module_name, name)
            for text, value in zip(stub_defaults, real_defaults):
                expected = eval(text, {"torch": torch})
                assert expected == value, (module_name, name, text, value)
