"""Legacy apex training scripts, migrated by `fix --unsafe-fixes`, train with real torch.

apex cannot be installed here, so the scripts cannot run before the fix; after it they must: a
few steps on the CPU (where the CUDA scaler and autocast disable themselves, as the scripts'
device choice expects), every loss finite, every forward pass under autocast, the scalers made
for CUDA, and the optimizer and scaler state surviving a `state_dict` round trip.
"""
from __future__ import annotations

import copy
import inspect
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from flake8_no_apex.fixer import fix_text
from runtime import run
from test_examples import deprecation_warnings

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "apex_migration"
# they train in fp32 without --fp16; shared_forward with a fixed loss scale given as apex's examples took it
ARGUMENTS = {"accumulation": ["--fp16"], "trainer": ["--fp16"], "fp16_optimizer": ["--fp16"],
             "micro_batch_clipping": ["--fp16", "--accumulation", "2"], "submodules": ["--amp"],
             "distillation": ["--fp16"], "setup_function": ["--fp16"],
             "training_step": ["--fp16"], "rescaling_trainer": ["--opt-level", "O1"],
             "shared_forward": ["--fp16", "--loss-scale", "128"], "two_back_ends": ["--fp16"],
             "loss_to_a_method": ["--fp16"], "norm_after_micro_batches": ["--opt-level", "O1"]}


def _migrated(script: Path) -> str:
    return fix_text(script.read_text(), unsafe=True).text


@pytest.fixture(scope="module", params=sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.stem)
def trained(request):
    script = request.param
    outcome = run(_migrated(script), epilogue=f"_result = main({ARGUMENTS.get(script.stem, [])!r})",
                  name=script.stem)
    return script, outcome


def test_migrated_script_trains(trained):
    script, outcome = trained
    assert outcome.error is None, outcome.describe()
    assert not deprecation_warnings(outcome), outcome.describe()
    result = outcome.namespace["_result"]
    assert len(result["losses"]) == result["steps"]
    assert all(math.isfinite(loss) for loss in result["losses"])


def test_every_forward_pass_runs_under_autocast_and_the_scaler_is_for_cuda(trained):
    script, outcome = trained
    result = outcome.namespace["_result"]
    assert len(outcome.entered_autocasts) == result.get("forward_passes", result["steps"])
    assert {device for device, *_ in outcome.entered_autocasts} == {"cuda"}
    assert outcome.grad_scalers and {scaler._device for scaler, _ in outcome.grad_scalers} == {"cuda"}


def test_optimizer_and_scaler_state_round_trip(trained):
    script, outcome = trained
    result = outcome.namespace["_result"]
    optimizer = result["optimizer"]
    state = copy.deepcopy(optimizer.state_dict())
    accepted = inspect.signature(type(optimizer)).parameters
    defaults = {k: v for k, v in optimizer.defaults.items() if k in accepted}
    twin = type(optimizer)(result["model"].parameters(), **defaults)
    twin.load_state_dict(state)
    assert repr(twin.state_dict()) == repr(optimizer.state_dict())
    for scaler, _ in outcome.grad_scalers:
        other = torch.amp.GradScaler("cuda")
        other.load_state_dict(scaler.state_dict())
        assert other.state_dict() == scaler.state_dict()


def test_each_optimizer_steps_and_unscales_at_most_once_per_update(trained):
    """The scaler is driven as torch documents it, several optimizers included: between two
    update() calls each optimizer steps once at most, and its gradients are unscaled once at
    most (GradScaler raises on a second unscale_, and a second step would use stale inf checks)."""
    script, outcome = trained
    check_scaler_driven_as_documented(outcome)


def check_scaler_driven_as_documented(outcome) -> None:
    assert any(call == "update" for call, _ in outcome.scaler_calls), outcome.scaler_calls
    since_update: list = []
    for call, optimizer in outcome.scaler_calls:
        if call == "update":
            since_update = []
            continue
        assert (call, optimizer) not in since_update, outcome.scaler_calls
        since_update.append((call, optimizer))
    assert not since_update, "steps after the last update()"


def test_with_the_scaler_scaling_training_reaches_the_same_weights(trained):
    """The scaler is used as torch documents it (gradients unscaled before they are read, the
    step through the scaler): with scaling on (a CPU scaler; the scale is a power of two, so
    exact), training ends where it ends without scaling."""
    script, outcome = trained
    scaled_text = _migrated(script).replace('GradScaler("cuda"', 'GradScaler("cpu"')
    scaled = run(scaled_text, epilogue=f"_result = main({ARGUMENTS.get(script.stem, [])!r})", name=script.stem)
    assert scaled.error is None, scaled.describe()
    assert all(s.is_enabled() and s.get_scale() > 1 for s, _ in scaled.grad_scalers)
    result, scaled_result = outcome.namespace["_result"], scaled.namespace["_result"]
    for model, scaled_model in zip(result.get("models", [result["model"]]),
                                   scaled_result.get("models", [scaled_result["model"]])):
        unscaled = model.state_dict()
        for name, value in scaled_model.state_dict().items():
            torch.testing.assert_close(value, unscaled[name], rtol=1e-5, atol=1e-6, msg=name)
    # gradient norms read between micro-batches, where the gradients are still scaled, are divided by the scale
    assert scaled_result.get("norms", []) == pytest.approx(result.get("norms", []), rel=1e-5)


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.stem)
def test_migrated_script_runs_as_a_program(script, tmp_path):
    path = tmp_path / script.name
    path.write_text(_migrated(script))
    completed = subprocess.run([sys.executable, "-W", "error::FutureWarning", str(path),
                                *ARGUMENTS.get(script.stem, [])],
                               capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr


PROJECT = SCRIPTS / "project"


def _trained_project(tmp_path, scaler_device: str, project: Path = PROJECT, argv=("--fp16",)):
    """The project migrated by the real `fix` (all its modules in one run), trained from its
    main module (train.py) with the other modules importable."""
    directory = tmp_path / f"{project.name}_{scaler_device}"
    shutil.copytree(project, directory)
    fixed = subprocess.run([sys.executable, "-m", "flake8_no_apex", "fix", "--unsafe-fixes", "."], cwd=directory,
                           capture_output=True, text=True, check=False)
    modules = sorted(path.stem for path in project.glob("*.py") if "from apex import" in path.read_text())
    assert f"{len(modules)} files migrated" in fixed.stderr + fixed.stdout, fixed.stderr
    for path in directory.glob("*.py"):
        path.write_text(path.read_text().replace('GradScaler("cuda"', f'GradScaler("{scaler_device}"'))
    sys.path.insert(0, str(directory))
    try:
        for name in modules:
            sys.modules.pop(name, None)
        return run((directory / "train.py").read_text(), epilogue=f"_result = main({list(argv)!r})", name="project")
    finally:
        sys.path.remove(str(directory))
        for name in modules:
            sys.modules.pop(name, None)


def test_a_project_migrated_across_its_modules_trains_and_scales_as_torch_documents(tmp_path):
    """The scaler main creates reaches the loop and the checkpoint helpers of the other
    modules: every loss finite, every forward pass under autocast, one update() per step,
    the scaler's state saved and restored, and with a scaling (CPU) scaler the weights of
    unscaled training."""
    outcome = _trained_project(tmp_path, "cuda")
    assert outcome.error is None, outcome.describe()
    result = outcome.namespace["_result"]
    assert len(result["losses"]) == result["steps"] and all(math.isfinite(x) for x in result["losses"])
    assert len(outcome.entered_autocasts) == result["forward_passes"]
    check_scaler_driven_as_documented(outcome)
    scaled = _trained_project(tmp_path, "cpu")
    assert scaled.error is None, scaled.describe()
    assert any(s.is_enabled() and s.get_scale() > 1 for s, _ in scaled.grad_scalers)
    unscaled = result["model"].state_dict()
    for name, value in scaled.namespace["_result"]["model"].state_dict().items():
        torch.testing.assert_close(value, unscaled[name], rtol=1e-5, atol=1e-6, msg=name)


def test_a_trainer_class_scaling_for_another_module_s_initialize_trains_as_torch_documents(tmp_path):
    """FARM's shape: the optimizer helper's amp.initialize goes, the Trainer creates its own
    scaler, enabled by its `use_amp` (an opt level string, which autocast takes only as a
    bool), and drives it through accumulation and clipping: every loss finite, each forward
    pass under autocast, one step and update() per accumulated step, and with a scaling (CPU)
    scaler the weights of unscaled training."""
    trainer_project = SCRIPTS / "trainer_project"
    outcome = _trained_project(tmp_path, "cuda", trainer_project, ["--amp", "O1"])
    assert outcome.error is None, outcome.describe()
    result = outcome.namespace["_result"]
    assert len(result["losses"]) == result["steps"] and all(math.isfinite(x) for x in result["losses"])
    assert len(outcome.entered_autocasts) == result["forward_passes"]
    check_scaler_driven_as_documented(outcome)
    assert [call for call, _ in outcome.scaler_calls].count("update") == result["optimizer_steps"] == 4
    scaled = _trained_project(tmp_path, "cpu", trainer_project, ["--amp", "O1"])
    assert scaled.error is None, scaled.describe()
    assert all(s.is_enabled() and s.get_scale() > 1 for s, _ in scaled.grad_scalers)
    unscaled = result["model"].state_dict()
    for name, value in scaled.namespace["_result"]["model"].state_dict().items():
        torch.testing.assert_close(value, unscaled[name], rtol=1e-5, atol=1e-6, msg=name)


def test_a_transformers_trainer_subclass_that_failed_on_5_x_trains_once_migrated(tmp_path):
    """The subclass copied training_step with its apex branch: transformers 5.25 has no
    Trainer.use_apex (AttributeError); migrated, the native branch trains."""
    script = SCRIPTS / "transformers" / "trainer_subclass.py"
    epilogue = f"_result = main({str(tmp_path)!r})"
    before = run(script.read_text(), epilogue=epilogue, name="trainer_subclass")
    assert isinstance(before.error, AttributeError) and "use_apex" in str(before.error), before.describe()
    after = run(_migrated(script), epilogue=epilogue, name="trainer_subclass")
    assert after.error is None, after.describe()
    result = after.namespace["_result"]
    assert result["steps"] == 3 and math.isfinite(result["loss"])


EVALUATES_ON_FLOAT16 = """\
import torch
from apex import amp


def evaluate(model, batches, fp16):
    outputs = []
    with torch.no_grad():
        for x in batches:
            if fp16:
                x = x.half()
            outputs.append(model(x))
    return outputs


def main(fp16):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", enabled=fp16)
    batches = [torch.randn(3, 4) for _ in range(2)]
    for x in batches:
        loss = model(x).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model, evaluate(model, batches, fp16)
"""


def test_an_evaluation_on_float16_inputs_runs_under_autocast_once_migrated():
    """apex ran the model on the float16 inputs an evaluation loop makes; the migrated float32
    model raises on them outside autocast (real torch), and takes them under the autocast the
    migration puts around that loop's forward passes (a CPU autocast and scaler here)."""
    migrated = fix_text(EVALUATES_ON_FLOAT16, unsafe=True)
    assert any("take tensors made float16 (line 10)" in note for _, note in migrated.notes), migrated.notes
    on_cpu = migrated.text.replace('autocast("cuda"', 'autocast("cpu"').replace('GradScaler("cuda"', 'GradScaler("cpu"')
    outcome = run(on_cpu, epilogue="_result = main(True)", name="evaluates_on_float16")
    assert outcome.error is None, outcome.describe()
    model, outputs = outcome.namespace["_result"]
    assert all(o.dtype in (torch.float16, torch.bfloat16) for o in outputs)
    with pytest.raises(RuntimeError):
        model(torch.randn(3, 4).half())
    plain = run(migrated.text, epilogue="_result = main(False)", name="evaluates_on_float16")
    assert plain.error is None and all(o.dtype == torch.float32 for o in plain.namespace["_result"][1])
