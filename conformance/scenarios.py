"""How each rule's examples behave on the real libraries: one `Scenario` per rule row.

`before` is what the rule's `before` example does in the newest release (it must agree with the
rule's message: "was removed" fails, "is deprecated" warns, a legacy spelling is silent);
`invalid` says the same of each `invalid` snippet, or `NOT_RUNNABLE` where a snippet is no
program on its own (an argument vector, a dict of settings, a name only imported). The prelude
binds the free names the examples use; `observe` is the state a fix must keep.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Optional, Tuple, Union

from runtime import SILENT, Observe, Outcome, Raises, Warns, default_observation

NOT_RUNNABLE = "not runnable"
Expectation = Union[Raises, Warns, None, str]

# What the library emits when a usage is deprecated (the rule says "is deprecated since").
TORCH_DEPRECATION = "FutureWarning"
LIGHTNING_DEPRECATION = "LightningDeprecationWarning"  # a DeprecationWarning, from rank_zero_deprecation
TRANSFORMERS_DEPRECATION = "FutureWarning"
DISCOURAGED = Warns("UserWarning", "is supported for historical reasons but its usage is discouraged")

TORCH = """\
import torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 4)
x = torch.randn(2, 4)
use_amp = True
params = list(model.parameters())
optimizer = torch.optim.SGD(params, lr=0.1)
loss = model(x).sum()
local_rank = 0
scaler = torch.amp.GradScaler("cuda")
loader = [(x, torch.randn(2, 4)), (x, torch.randn(2, 4))]
criterion = torch.nn.functional.mse_loss
torch_version_at_least = lambda version: True  # noqa: E731  (a project's own version helper)
"""
# A GAN's two models and optimizers (APX101's example), and a trainer driven for a few steps
# (APX102's example defines the class: the epilogue runs it with gradient accumulation).
GAN = TORCH + """\
netG, netD = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
optG, optD = torch.optim.SGD(netG.parameters(), lr=0.1), torch.optim.SGD(netD.parameters(), lr=0.1)
ones, zeros = torch.ones(2, 1), torch.zeros(2, 1)
criterion = torch.nn.functional.binary_cross_entropy_with_logits
"""
TRAINER_STEPS = """
trainer = Trainer(model, optimizer, fp16=True, accumulation=2)
for step, (x, y) in enumerate(loader * 2):
    trainer.train_step(step, x, y)
"""
# One process of a gloo group, for DistributedDataParallel on the CPU.
PROCESS_GROUP = TORCH + """\
import tempfile, torch.distributed
if not torch.distributed.is_initialized():
    torch.distributed.init_process_group(
        "gloo", init_method="file://" + tempfile.mktemp(prefix="apx-conformance-"), rank=0, world_size=1)
"""
TRAINER = "from pytorch_lightning import Trainer\n"
LIGHTNING_SELF = """\
import types
import pytorch_lightning
self = types.SimpleNamespace(trainer=pytorch_lightning.Trainer(precision="bf16-mixed"))
trainer = self.trainer
backend = "native"
"""
# Lightning calls the hook an example defines only during fit: train one step.
FIT_ONE_STEP = """\
import torch as _torch

class _Probe(M):
    def __init__(self):
        super().__init__()
        self.layer = _torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return _torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return _torch.utils.data.DataLoader(_torch.randn(4, 2), batch_size=2)

pl.Trainer(max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False,
           enable_model_summary=False).fit(_Probe())
"""
# A Function whose forward and backward use the decorators, run forward and backward.
CUSTOM_FUNCTION_RUN = """\
_input = torch.ones(3, requires_grad=True)
_output = F.apply(_input)
_output.sum().backward()
"""
APEX_ABSENT = Raises(ModuleNotFoundError, "No module named 'apex'")
# accelerate keeps one AcceleratorState per process, and an Accelerator of another precision than the
# state's raises: each example starts from a fresh one (accelerate's own tests reset it so).
ACCELERATE_FRESH = """\
from accelerate.state import AcceleratorState as _AcceleratorState
_AcceleratorState._reset_state(reset_partial_state=True)
"""
ACCELERATE = TORCH + ACCELERATE_FRESH + """\
import types
args = types.SimpleNamespace(fp16=True)
"""
# `accelerate launch` of this environment (on PATH), in a directory with a train.py that does nothing:
# the launcher's argparse rejects --fp16 with exit status 2, and runs the script with --mixed_precision.
LAUNCH = """\
import os, sys, tempfile
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
os.chdir(tempfile.mkdtemp(prefix="apx-launch-"))
open("train.py", "w").write("pass\\n")
"""
# A transformers Trainer subclass an example defines (MyTrainer), built on the CPU and stepped once.
TRAINER_STEP = ACCELERATE_FRESH + """
import tempfile as _tempfile
import torch as _torch
from transformers import TrainingArguments as _TrainingArguments

class _Regression(_torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = _torch.nn.Linear(2, 1)

    def forward(self, x, labels=None):
        return {"loss": ((self.layer(x).squeeze(-1) - labels) ** 2).mean()}

_torch.manual_seed(0)
_trainer = MyTrainer(model=_Regression(), args=_TrainingArguments(_tempfile.mkdtemp(), report_to=[], use_cpu=True))
_inputs = {"x": _torch.ones(2, 2), "labels": _torch.zeros(2)}
"""
TRAINER_LOSS = TRAINER_STEP + "_output = _trainer.compute_loss(_trainer.model, _inputs)\n"
TRAINER_STEP += "_output = _trainer.training_step(_trainer.model, _inputs)\n"
# timm 1.0's package imports torchvision (timm.layers), which does not run beside this torch build, and
# installed it would break accelerate's CLI (which imports timm when it is there): its loss scalers
# (timm/utils/cuda.py, with the clipping it imports) run from timm 1.0.31's wheel, unpacked into the
# wheel cache, without the package's __init__ files, of which only timm/utils/__init__.py's
# `from .cuda import ApexScaler, NativeScaler` is redone here.
TIMM = TORCH + """\
import sys, types
from wheels import unpacked
_root = str(unpacked("timm", "1.0.31") / "timm")
for _name, _path in (("timm", _root), ("timm.utils", _root + "/utils")):
    sys.modules.setdefault(_name, types.ModuleType(_name)).__path__ = [_path]
sys.modules["timm"].utils = sys.modules["timm.utils"]
import timm.utils.cuda
timm.utils.ApexScaler, timm.utils.NativeScaler = timm.utils.cuda.ApexScaler, timm.utils.cuda.NativeScaler
"""


def _plugin(obj) -> tuple:
    """A precision plugin as Lightning uses it: the classes it is (shims aside), its precision,
    device and scaler."""
    classes = tuple(c.__name__ for c in type(obj).__mro__ if "_graveyard" not in c.__module__)
    scaler = getattr(obj, "scaler", None)
    return classes, obj.precision, getattr(obj, "device", None), type(scaler).__name__


def observe_autocast_state(outcome: Outcome) -> object:
    """What the state functions read and leave: the dtype read, and the thread's autocast state."""
    import torch

    state = {device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
             for device in ("cpu", "cuda", "xla", "ipu")}
    return default_observation(outcome), str(outcome.namespace.get("dtype")), state


def observe_plugin(outcome: Outcome) -> object:
    return _plugin(outcome.namespace["plugin"])


def observe_trainer(outcome: Outcome) -> object:
    plugin = outcome.namespace["trainer"].precision_plugin
    return _plugin(plugin)


def observe_fabric(outcome: Outcome) -> object:
    return _plugin(outcome.namespace["fabric"]._precision)


def observe_training_arguments(outcome: Outcome) -> object:
    fields = outcome.namespace["args"].to_dict()
    fields.pop("logging_dir", None)  # a time stamp
    return fields


def observe_custom_function(outcome: Outcome) -> object:
    namespace = outcome.namespace
    return default_observation(outcome), namespace["_output"].tolist(), namespace["_input"].grad.tolist()


def observe_optimizer(outcome: Outcome) -> object:
    optimizer = outcome.namespace["optimizer"]
    return type(optimizer).__name__, sorted((k, repr(v)) for k, v in optimizer.defaults.items())


def observe_module(name: str) -> Observe:
    def observe(outcome: Outcome) -> object:
        module = outcome.namespace[name]
        return type(module).__name__, repr(module), [p.shape for p in module.parameters()]
    return observe


@dataclass(frozen=True)
class Scenario:
    before: Expectation
    invalid: Tuple[Expectation, ...] = ()
    prelude: str = ""
    epilogue: str = ""
    observe: Optional[Observe] = None
    verdict: str = "running"  # how the timeline is verified: running, wheel source, cited source


SCENARIOS = {
    # --- NVIDIA apex: not on the registry, so its timeline rests on the cited sources ------------
    ("APX001", "import of deprecated NVIDIA apex"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,) * 5 + (NOT_RUNNABLE,) * 2,  # the last two catch the ImportError
        prelude=TORCH, verdict="cited source"),
    # removed after apex's last tag: their history is read from apex's git (test_apex_history.py)
    # mmcv 1.x is not installed beside this torch (nor 2.x, which has no mmcv.runner): its history is read
    # from git (conformance/test_mmcv.py), mmengine's replacements from its wheel
    # DeepSpeed is not installable here (its sdist builds against a CUDA torch): the 0.19.8 sdist's
    # config.py is the evidence (docs/timeline.md, DS-01)
    ("APX601", 'DeepSpeed "amp" section'): Scenario(
        Raises(ModuleNotFoundError, "No module named 'deepspeed'"), invalid=(NOT_RUNNABLE, NOT_RUNNABLE),
        prelude=TORCH, verdict="cited source"),
    ("APX501", "mmcv 1.x fp16 utilities"): Scenario(
        Raises(ModuleNotFoundError, "No module named 'mmcv'"),
        invalid=(Raises(ModuleNotFoundError, "No module named 'mmcv'"),) * 3, prelude=TORCH, verdict="cited source"),
    ("APX001", "apex.optimizers.FP16_Optimizer (moved 2019-10-04)"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,), prelude=TORCH, verdict="cited source"),
    ("APX001", "import of apex.transformer (removed 2026-01-14)"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,) * 2, prelude=TORCH, verdict="cited source"),
    ("APX001", "import of apex.contrib.fmha, multihead_attn (removed 2026-07-08)"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,) * 2, prelude=TORCH, verdict="cited source"),
    ("APX001", "import of apex.contrib.gpu_direct_storage (removed 2026-07-08)"): Scenario(
        APEX_ABSENT, prelude=TORCH, verdict="cited source"),
    ("APX001", "import of apex.reparameterization"): Scenario(APEX_ABSENT, prelude=TORCH, verdict="cited source"),
    ("APX101", "apex amp.initialize"): Scenario(APEX_ABSENT, (APEX_ABSENT,), GAN, observe=default_observation,
                                                verdict="cited source"),
    ("APX102", "apex amp.scale_loss"): Scenario(APEX_ABSENT, (APEX_ABSENT,), TORCH, TRAINER_STEPS,
                                                observe=default_observation, verdict="cited source"),
    ("APX103", "other apex.amp APIs"): Scenario(APEX_ABSENT, (APEX_ABSENT,) * 2, TORCH, observe=default_observation,
                                                verdict="cited source"),
    ("APX104", "apex.parallel.DistributedDataParallel"): Scenario(
        APEX_ABSENT, prelude=PROCESS_GROUP, observe=observe_module("model"), verdict="cited source"),
    ("APX105", "apex SyncBatchNorm"): Scenario(
        APEX_ABSENT, prelude=TORCH, observe=observe_module("model"), verdict="cited source"),
    ("APX106", "apex.fp16_utils"): Scenario(APEX_ABSENT, (APEX_ABSENT,), TORCH, observe=default_observation,
                                            verdict="cited source"),
    ("APX107", "apex.optimizers.FusedAdam"): Scenario(
        APEX_ABSENT, prelude=TORCH, observe=observe_optimizer, verdict="wheel source"),
    ("APX107", "apex.optimizers.FusedSGD"): Scenario(
        APEX_ABSENT, prelude=TORCH, observe=observe_optimizer, verdict="wheel source"),
    ("APX107", "apex fused optimizers without a native twin"): Scenario(
        APEX_ABSENT, prelude=TORCH, verdict="cited source"),
    ("APX108", "apex.normalization.FusedLayerNorm"): Scenario(
        APEX_ABSENT, prelude=TORCH, observe=observe_module("norm"), verdict="wheel source"),
    ("APX108", "apex.normalization.FusedRMSNorm"): Scenario(
        APEX_ABSENT, prelude=TORCH, observe=observe_module("norm"), verdict="wheel source"),
    ("APX109", "NVIDIA apex dependency"): Scenario(NOT_RUNNABLE, verdict="cited source"),
    ("APX108", "apex.normalization autograd Functions"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,) * 3, prelude=TORCH + "weight, bias = torch.ones(4), torch.zeros(4)\n",
        verdict="wheel source"),
    ("APX110", "other apex parts without a native equivalent"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,) * 3, prelude=TORCH, verdict="cited source"),
    ("APX110", "other apex parts with a native equivalent"): Scenario(
        APEX_ABSENT, invalid=(APEX_ABSENT,), prelude=TORCH, verdict="cited source"),
    # --- Lightning ------------------------------------------------------------------------------
    ("APX002", "Trainer(amp_backend=...)"): Scenario(
        Raises(TypeError, "unexpected keyword argument 'amp_backend'"),
        invalid=(
            NOT_RUNNABLE,  # a dict of settings
            Raises(AttributeError, "from_argparse_args"),  # the argparse helpers went in 2.0 too
            NOT_RUNNABLE, NOT_RUNNABLE,  # an argument vector, a parser definition
            Raises(TypeError, "unexpected keyword argument 'amp_backend'"),
            NOT_RUNNABLE,  # a partial, called later
            NOT_RUNNABLE,  # lightning-flash is not installed: its Trainer subclasses Lightning's (cited)
        ),
        observe=observe_trainer),
    ("APX003", "amp_level="): Scenario(
        Raises(TypeError, "unexpected keyword argument 'amp_level'"),
        invalid=(Raises(TypeError, "positional argument"), NOT_RUNNABLE, NOT_RUNNABLE),  # argv; a dict being built
        observe=observe_trainer),
    ("APX004", "ApexMixedPrecisionPlugin"): Scenario(
        Raises(ImportError, "ApexMixedPrecisionPlugin"),
        invalid=(Raises(AttributeError, "ApexMixedPrecisionPlugin"), NOT_RUNNABLE),  # isinstance of an unbound p
        prelude=TRAINER),
    ("APX005", "DeepSpeedPrecisionPlugin(amp_type=...)"): Scenario(
        Raises(TypeError, "unexpected keyword argument 'amp_type'"),
        invalid=(Raises(ModuleNotFoundError, "lightning_lite"),),  # the Lite package ended with 1.8
        observe=observe_plugin),
    ("APX006", "AMPType"): Scenario(
        Raises(ImportError, "AMPType"), invalid=(Raises(AttributeError, "AMPType"),), prelude=LIGHTNING_SELF),
    ("APX006", "AMPType re-exports"): Scenario(
        Raises(ImportError, "AMPType"), invalid=(Raises(ModuleNotFoundError, "lightning_lite"),),
        prelude=LIGHTNING_SELF),
    ("APX006", "Trainer.amp_backend read"): Scenario(
        Raises(AttributeError, "amp_backend"), prelude=LIGHTNING_SELF),
    ("APX006", "_APEX_AVAILABLE"): Scenario(
        Raises(ImportError, "_APEX_AVAILABLE"), invalid=(Raises(ImportError, "_APEX_AVAILABLE"),)),
    ("APX006", "_APEX_AVAILABLE of the apex plugin"): Scenario(Raises(ModuleNotFoundError, "apex_amp")),
    ("APX007", "`Native*` precision plugins"): Scenario(
        Raises(ImportError, "NativeMixedPrecisionPlugin"), invalid=(Raises(ModuleNotFoundError, "lightning_lite"),),
        observe=observe_plugin),
    ("APX007", "FullyShardedNativeNativeMixedPrecisionPlugin"): Scenario(
        Raises(ModuleNotFoundError, "fsdp_native_native_amp"), observe=observe_plugin),
    ("APX007", "FSDPMixedPrecisionPlugin"): Scenario(
        Warns(LIGHTNING_DEPRECATION, "FSDPMixedPrecisionPlugin` is deprecated"),
        invalid=(Warns(LIGHTNING_DEPRECATION, "FSDPMixedPrecisionPlugin` is deprecated"),),
        observe=observe_plugin),
    ("APX007", "`*Plugin` precision classes"): Scenario(
        Warns(LIGHTNING_DEPRECATION, "MixedPrecisionPlugin` is deprecated"),
        invalid=(Warns(LIGHTNING_DEPRECATION, "DeepSpeedPrecisionPlugin` is deprecated"),),
        observe=observe_plugin),
    ("APX007", "1.x base class precision.mixed.MixedPrecisionPlugin"): Scenario(
        Raises(ModuleNotFoundError, "precision.mixed"), prelude=LIGHTNING_SELF, verdict="wheel source"),
    ("APX008", 'precision=16 and "bf16"'): Scenario(
        DISCOURAGED, invalid=(DISCOURAGED, DISCOURAGED, DISCOURAGED), observe=observe_trainer,
        prelude="import types\nargs = types.SimpleNamespace(fp16=True)\n"),
    ("APX010", "precision=32 and 64"): Scenario(SILENT, invalid=(SILENT, SILENT), observe=observe_trainer),
    ("APX009", "using_native_amp"): Scenario(
        Raises(TypeError, "missing .* required positional argument"), epilogue=FIT_ONE_STEP),
    # --- torch ----------------------------------------------------------------------------------
    ("APX201", "torch.cuda.amp.autocast"): Scenario(
        Warns(TORCH_DEPRECATION, r"torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated"),
        invalid=(
            SILENT,  # only imports the name
            *[Warns(TORCH_DEPRECATION, r"torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated")] * 4,
        ),
        prelude=TORCH, observe=default_observation),
    ("APX202", "torch.cpu.amp.autocast"): Scenario(
        Warns(TORCH_DEPRECATION, r"torch\.cpu\.amp\.autocast\(args\.\.\.\)` is deprecated"),
        invalid=(Warns(TORCH_DEPRECATION, r"torch\.cpu\.amp\.autocast\(args\.\.\.\)` is deprecated"),),
        prelude=TORCH, observe=default_observation),
    ("APX203", "torch.cuda.amp.GradScaler"): Scenario(
        Warns(TORCH_DEPRECATION, r"torch\.cuda\.amp\.GradScaler\(args\.\.\.\)` is deprecated"),
        invalid=(SILENT, SILENT, SILENT),  # imports and a subclass definition: the warning comes with a call
        prelude=TORCH, observe=default_observation),
    ("APX204", "torch.cuda.amp.custom_fwd / custom_bwd"): Scenario(
        Warns(TORCH_DEPRECATION, r"torch\.cuda\.amp\.custom_fwd\(args\.\.\.\)` is deprecated"),
        invalid=(Warns(TORCH_DEPRECATION, r"torch\.cuda\.amp\.custom_bwd\(args\.\.\.\)` is deprecated"),),
        prelude=TORCH, epilogue="_output = F.apply(x)\n",
        observe=lambda outcome: (default_observation(outcome), outcome.namespace["_output"].tolist())),
    ("APX205", "torch.cuda.amp.grad_scaler internals"): Scenario(
        Raises(ImportError, "_refresh_per_optimizer_state"),
        invalid=(Raises(ImportError, "_MultiDeviceReplicator"), Raises(AttributeError, "_MultiDeviceReplicator"),
                 Raises(ImportError, "amp_definitely_not_available")), prelude=TORCH),
    ("APX205", "torch.cuda.amp.grad_scaler.OptState"): Scenario(SILENT, prelude=TORCH),
    ("APX205", "torch.cuda.amp.autocast_mode._cast"): Scenario(
        Warns(TORCH_DEPRECATION, r"autocast_mode\._cast\(value, dtype\)` is deprecated"), prelude=TORCH),
    ("APX111", "timm's ApexScaler"): Scenario(
        # timm binds amp = None when `from apex import amp` fails: without apex, and with apex 25.07 or newer
        Raises(AttributeError, "'NoneType' object has no attribute 'scale_loss'"),
        invalid=(Raises(AttributeError, "'NoneType' object has no attribute 'scale_loss'"),
                 Raises(AttributeError, "'NoneType' object has no attribute '__dict__'")),
        prelude=TIMM, verdict="running"),
    ("APX207", "torch.set_default_tensor_type"): Scenario(
        Warns("UserWarning", r"set_default_tensor_type\(\) is deprecated as of PyTorch 2\.1"),
        invalid=(Warns("UserWarning", r"set_default_tensor_type\(\) is deprecated as of PyTorch 2\.1"), SILENT),
        prelude=TORCH, epilogue="_dtype = (torch.tensor([1.0]).dtype, torch.Tensor(2).dtype, torch.zeros(1).dtype)\n",
        observe=lambda outcome: outcome.namespace["_dtype"]),
    # raised from C++ as a DeprecationWarning (Python hides it outside __main__; the runs here record it)
    ("APX206", "torch autocast state functions of one device"): Scenario(
        Warns("DeprecationWarning", r"torch\.get_autocast_gpu_dtype\(\) is deprecated"),
        invalid=(SILENT, Warns("DeprecationWarning", r"torch\.set_autocast_xla_dtype\(dtype\) is deprecated"),
                 SILENT),  # an import, a reference: the warning comes with a call
        prelude=TORCH, observe=observe_autocast_state),
    # --- accelerate -------------------------------------------------------------------------------
    ("APX405", "accelerate launch --fp16"): Scenario(
        Raises(subprocess.CalledProcessError, "returned non-zero exit status 2"), invalid=(NOT_RUNNABLE,),
        prelude=LAUNCH),
    ("APX401", "Accelerator(fp16=...)"): Scenario(
        Raises(TypeError, "unexpected keyword argument 'fp16'"),
        invalid=(Raises(TypeError, "unexpected keyword argument 'fp16'"),),
        prelude=ACCELERATE, observe=lambda outcome: outcome.namespace["accelerator"].mixed_precision),
    ("APX402", "Accelerator.use_fp16"): Scenario(
        Raises(AttributeError, "no attribute 'use_fp16'"), invalid=(NOT_RUNNABLE,),  # a method nothing calls
        prelude=ACCELERATE, observe=lambda outcome: outcome.namespace["scaled"]),
    ("APX403", "accelerator.autocast(cache_enabled=...)"): Scenario(
        Raises(TypeError, "unexpected keyword argument 'cache_enabled'"), invalid=(NOT_RUNNABLE,),
        prelude=ACCELERATE),
    ("APX404", "accelerate.utils.is_apex_available"): Scenario(
        Raises(ImportError, "cannot import name 'is_apex_available'"),
        invalid=(Raises(AttributeError, "has no attribute 'is_apex_available'"),), prelude=ACCELERATE),
    # --- transformers -----------------------------------------------------------------------------
    ("APX306", "Trainer mixed-precision attributes removed in 5.0"): Scenario(
        Raises(AttributeError, "object has no attribute 'use_cpu_amp'"),
        invalid=(NOT_RUNNABLE, NOT_RUNNABLE),  # methods nothing calls: the read fails when a step runs them
        epilogue=TRAINER_LOSS, observe=lambda outcome: float(outcome.namespace["_output"])),
    ("APX306", "Trainer loss-scaling attributes removed in 4.35"): Scenario(
        Raises(AttributeError, "object has no attribute 'do_grad_scaling'"), invalid=(NOT_RUNNABLE,),
        epilogue=TRAINER_STEP, observe=lambda outcome: float(outcome.namespace["_output"])),
    ("APX301", "fp16_backend="): Scenario(
        Raises(TypeError, "unexpected keyword argument 'fp16_backend'"),
        invalid=(Raises(TypeError, "unexpected keyword argument 'fp16_backend'"), NOT_RUNNABLE, NOT_RUNNABLE),
        observe=observe_training_arguments),
    ("APX302", 'half_precision_backend="apex"'): Scenario(
        Raises(TypeError, "unexpected keyword argument 'half_precision_backend'"),
        invalid=(Raises(TypeError, "unexpected keyword argument 'fp16_backend'"),),
        observe=observe_training_arguments),
    ("APX305", "half_precision_backend="): Scenario(
        Raises(TypeError, "unexpected keyword argument 'half_precision_backend'"),
        invalid=(NOT_RUNNABLE, NOT_RUNNABLE),  # a dict of settings; a value bound elsewhere
        observe=observe_training_arguments),
    ("APX303", "fp16_opt_level="): Scenario(
        Raises(TypeError, "unexpected keyword argument 'fp16_opt_level'"), invalid=(NOT_RUNNABLE,),
        observe=observe_training_arguments),
    ("APX304", 'optim="adamw_apex_fused"'): Scenario(
        Raises(ValueError, "adamw_apex_fused is not a valid OptimizerNames"),
        invalid=(Raises(AttributeError, "ADAMW_APEX_FUSED"),),
        observe=observe_training_arguments),
}

# Programs beyond the rules' own examples whose fixed form must do exactly what they did.
EXTRA_PROGRAMS = {
    "custom_fwd and custom_bwd, forward and backward": (TORCH + """\
from torch.cuda.amp import custom_bwd, custom_fwd

class F(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    @custom_bwd
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a
""" + CUSTOM_FUNCTION_RUN, observe_custom_function),
    "autocast and GradScaler through aliases, positional arguments": (TORCH + """\
import torch.cuda.amp as tca
from torch.cuda.amp import GradScaler, autocast

scaler = GradScaler(2.0**10, 3.0, 0.25, 7, enabled=use_amp)
with autocast(False, torch.bfloat16, False):
    y = model(x)
with tca.autocast(dtype=torch.float16), torch.cpu.amp.autocast(True, torch.bfloat16):
    y = model(x)
cpu_scaler = torch.cpu.amp.GradScaler(init_scale=8.0)
""", default_observation),
    "Trainer and Fabric precision values": ("""\
import lightning as L
from lightning.pytorch import Trainer
trainer = Trainer(precision="bf16", accelerator="cpu", logger=False)
fabric = L.Fabric(precision=64, accelerator="cpu")
""", lambda outcome: (observe_trainer(outcome), observe_fabric(outcome))),
}
