"""NVIDIA apex: the parts deprecated in 2022 and deleted in 2025 (AX-01..AX-13), and the
maintained fused kernels that have native equivalents (AX-14..AX-18, off by default).

apex has no usable version numbers (its tags are dates, setup.py always says 0.1), so
versions here are its tags: deprecated in 23.05, gone from 25.07 on.
"""
from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

from typing import List

from ..edits import remove_element, replace
from ..table import Dependency, Fix, Grade, Modules, Plan, Rule, Site, Symbols, TextEdit, Timeline
from ._torch import TORCH, torch_name, torch_plan
from .apex_amp import migrate_amp

_NATIVE_AMP = "{autocast} and {grad_scaler}"  # spelled for the project's torch (spellings.py)


def _removed(source: str) -> Timeline:
    """Deprecated in 23.05 (commit 48bf0df5) and deleted from 25.07 on (commit cb65b8ed)."""
    return Timeline("apex", "23.05", removed_in="25.07", source=source)


# How a training step moves from apex.amp to native AMP, spelled for the project's torch.
AMP_RECIPE = """\
Replace apex.amp with native AMP:
    # was: model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    scaler = {grad_scaler}
    for inputs, targets in loader:
        optimizer.zero_grad()
        with {autocast}:  # was: the patched model under O1
            loss = criterion(model(inputs), targets)
        scaler.scale(loss).backward()  # was: with amp.scale_loss(loss, optimizer) as scaled: scaled.backward()
        scaler.unscale_(optimizer)  # before clipping model.parameters(); was: amp.master_params(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
    checkpoint["scaler"] = scaler.state_dict()  # was: amp.state_dict()
O2/O3 (fp16 weights) have no exact native equivalent: keep fp32 weights under autocast."""
# what fix writes for FP16_Optimizer's loop, after the scaler
_NATIVE_STEP = ("for x, y in loader:\n"
                "    optimizer.zero_grad()\n"
                "    with torch.amp.autocast(\"cuda\"):\n"
                "        loss = criterion(model(x), y)\n"
                "    scaler.scale(loss).backward()\n"
                "    scaler.step(optimizer)\n"
                "    scaler.update()\n")
MIGRATION_DOC = (
    "`fix --unsafe-fixes` migrates a module's apex AMP as a whole: `amp.initialize` becomes one GradScaler for every "
    "model, optimizer and loss it was given (`num_losses=` and `loss_id=` go), enabled by its `enabled=`, a "
    "non-literal `opt_level` or the `if` guarding it (created before that `if` when it does more; `bool(...)` around "
    "a condition the module does not show to be a bool, as autocast takes only a bool); O0 drops AMP; a "
    "fixed `loss_scale` becomes a scaler that starts there and never grows, one read at run time "
    "(`loss_scale=args.loss_scale`) chooses either schedule as apex did, `max_loss_scale=` and `min_loss_scale=` are "
    "noted (GradScaler has no ceiling or floor). The statements each scaled loss depends on, from the first one that "
    "calls a model (in the block of the backward or around it), run under autocast, once for a forward pass that "
    "gives several losses, and a loss computed from its outputs in a block nearer the backward under an autocast of "
    "its own; `scale_loss` becomes `scaler.scale(loss).backward()` (`delay_unscale=` goes: the scaler "
    "unscales the accumulated gradients once, at the step), each `optimizer.step()` `scaler.step(optimizer)`, and "
    "one `scaler.update()` follows the last step of each block; torch's clipping after every micro-batch stays "
    "there, clipping the scaled gradients at its threshold times `scaler.get_scale()`, and a norm of them read "
    "there (a function of the module or one it imports whose body returns a value that scales as the gradients "
    "do, Swin's `get_grad_norm`) is divided by it. In a class the scaler is "
    "`self.scaler`; a module-level function that runs the loop gets it as a parameter when only the initializing "
    "function calls it, and the functions of other modules of the run that scale or save apex's state take it as a "
    "parameter (all planned together). "
    "A class that scales for the amp.initialize of another module of the run that does not scale (a library's "
    "optimizer helper and its Trainer) creates its scaler in `__init__`, enabled by the attribute its apex branches "
    "test; that amp.initialize goes. A module with a native back end beside apex's, chosen by one option (`--amp "
    "apex|pytorch`), loses apex's branches and apex's value takes the native ones. `to_python_float(t)` becomes "
    "`t.item()`. Where the shape differs (gradients read on every micro-batch away from the step for something "
    "else than clipping or a norm, `cast_model_outputs=`, apex's decorators or internal state, tensors made "
    "float16 for a forward pass it cannot "
    "put under autocast, a helper reached through `import *` or as a value), nothing is changed and `fix` names the "
    "blocker, file:line, in its migration report (also `--output-format json`) and shows the recipe. apex O1 patched "
    "every forward pass of the process (evaluation too); after the migration, code outside the training step runs in "
    "fp32 unless you wrap it (a note names its lines).")
_MAINTAINED_DOC = (
    "These apex parts are still maintained, so this is not a deprecation: the code is off by "
    "default (flake8's extended default ignore) and meant for teams removing apex entirely. "
    "Enable it with `--extend-select {code}` or `--select APX`."
)


class NativeCall:
    """How a call to an apex class becomes a call to its torch counterpart (an unsafe fix)."""

    def __init__(self, target: str, positional: int, dropped: Tuple[str, ...] = (),
                 refused: Tuple[str, ...] = (), added: Optional[Dict[str, str]] = None):
        self.target = target  # below the torch module, e.g. "nn.parallel.DistributedDataParallel"
        self.positional = positional  # positional arguments that mean the same in both
        self.dropped = dropped  # apex-only keywords without effect on the result
        self.refused = refused  # apex-only keywords whose effect torch cannot reproduce
        self.added = added or {}  # keyword -> value, when torch's default differs from apex's

    def edits(self, ctx, call: ast.Call, callee: ast.AST, torch: str) -> Optional[List[TextEdit]]:
        if len(call.args) > self.positional or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(k.arg is None or k.arg in self.refused for k in call.keywords):
            return None
        edits = [replace(ctx.source, callee, f"{torch}.{self.target}")]
        for keyword in call.keywords:
            if keyword.arg in self.dropped:
                edits.append(remove_element(ctx.source, keyword, call))
        missing = [f"{k}={v}" for k, v in self.added.items() if all(kw.arg != k for kw in call.keywords)]
        if missing:
            last = max((ctx.source.span(a)[1] for a in [*call.args, *call.keywords]), default=None)
            if last is None:
                return None
            edits.append(TextEdit(last, last, "".join(", " + m for m in missing)))
        return None if None in edits else edits


_DDP_ONLY = ("message_size", "delay_allreduce", "shared_param", "allreduce_trigger_params",
             "retain_allreduce_buffers", "allreduce_always_fp32", "num_allreduce_streams",
             "allreduce_communicators", "gradient_average", "gradient_predivide_factor",
             "gradient_average_split_factor", "prof")
NATIVE_CALLS = {
    "DistributedDataParallel": NativeCall("nn.parallel.DistributedDataParallel", 1, dropped=_DDP_ONLY),
    "convert_syncbn_model": NativeCall("nn.SyncBatchNorm.convert_sync_batchnorm", 2, refused=("channel_last",)),
    "SyncBatchNorm": NativeCall("nn.SyncBatchNorm", 6, refused=("channel_last", "fuse_relu")),
    # FusedAdam is AdamW unless adam_w_mode=False, and its weight decay defaults to 0 (AdamW: 0.01)
    "FusedAdam": NativeCall("optim.AdamW", 2, dropped=("set_grad_none", "adam_w_mode"),
                            refused=("bias_correction", "master_weights"),
                            added={"weight_decay": "0.0", "fused": "True"}),
    "FusedSGD": NativeCall("optim.SGD", 6, dropped=("set_grad_none", "materialize_master_grads"),
                           refused=("wd_after_momentum",), added={"fused": "True"}),
    "FusedLayerNorm": NativeCall("nn.LayerNorm", 3, refused=("memory_efficient",)),
    "MixedFusedLayerNorm": NativeCall("nn.LayerNorm", 3, refused=("memory_efficient",)),
    # torch's RMSNorm defaults eps to the dtype's epsilon, apex's to 1e-5
    "FusedRMSNorm": NativeCall("nn.RMSNorm", 3, refused=("memory_efficient",), added={"eps": "1e-5"}),
    "MixedFusedRMSNorm": NativeCall("nn.RMSNorm", 3, refused=("memory_efficient",), added={"eps": "1e-5"}),
}


def fix_native_call(ctx, finding) -> Optional[Plan]:
    """`DDP(model, delay_allreduce=True)` -> `torch.nn.parallel.DistributedDataParallel(model)`."""
    site = finding.site
    call = site.call if site.call is not None and site.call.func is site.node else None
    name = site.name.rsplit(".", 1)[-1]
    if call is None or torch_name(site) is None or name not in NATIVE_CALLS:
        return None
    native = NATIVE_CALLS[name]
    if name == "FusedAdam":  # AdamW unless adam_w_mode=False, which must then be a literal
        mode = next((k.value for k in call.keywords if k.arg == "adam_w_mode"), None)
        if mode is not None and not (isinstance(mode, ast.Constant) and isinstance(mode.value, bool)):
            return None
        if mode is not None and mode.value is False:
            native = NativeCall("optim.Adam", 2, native.dropped, native.refused, {"fused": "True"})
    edits = native.edits(ctx, call, site.node, torch_name(site) or "torch")
    return torch_plan(site, edits, Grade.UNSAFE) if edits else None


def dependency_advice(site: Site, floors) -> str:
    if site.value == "pypi":
        return ("drop it: the PyPI package `apex` is an unrelated web toolkit, and NVIDIA apex's AMP is "
                "torch.amp now")
    return "drop it once the code no longer imports apex (APX001): torch has native AMP (torch.amp)"


RULES = [
    Rule(
        code="APX001",
        title="import of deprecated NVIDIA apex",
        match=(
            Modules(
                {
                    "apex.amp": _NATIVE_AMP,
                    "apex.parallel": "torch.nn.parallel.DistributedDataParallel and torch.nn.SyncBatchNorm",
                    "apex.fp16_utils": _NATIVE_AMP,
                    "apex.RNN": "torch.nn.LSTM, torch.nn.GRU or torch.nn.RNN",
                },
                root="apex",
                root_subject="legacy apex (amp, parallel, fp16_utils)",
                root_replacement="native PyTorch AMP (" + _NATIVE_AMP + ")",
            ),
        ),
        timeline=_removed("AX-01, AX-06, AX-10, AX-12"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "the import goes once its uses are migrated; each use has its own code"),
        doc=("apex deprecated `apex.amp`, `apex.parallel`, `apex.fp16_utils` and `apex.RNN` in "
             "October 2022 (first tag 23.05) and deleted them in May 2025 (first tag without them: "
             "25.07): the import fails on any current apex build. A bare `import apex` is reported "
             "unless the module only uses the maintained parts (`apex.optimizers`, "
             "`apex.normalization`, `apex.contrib`, ...), or uses no part at all inside `try/except "
             "ImportError` (an availability probe: `HAVE_APEX = True`). Imports of the removed parts stay "
             "reported inside `try/except ImportError`: they are what a migration removes."),
        before="from apex import amp\n",
        after="import torch\n\nscaler = torch.amp.GradScaler(\"cuda\")\n",
        invalid=(
            "import apex.amp as amp\n",
            "from apex.parallel import DistributedDataParallel as DDP\n",
            "from apex.fp16_utils import *\n",
            "import apex\nmodel, opt = apex.amp.initialize(model, opt)\n",
            "import apex\n",
            "try:\n    from apex import amp\nexcept ImportError:\n    amp = None\n",
            "try:\n    import apex\nexcept ImportError:\n    apex = None\n"
            "model, opt = apex.amp.initialize(model, opt)\n",
        ),
        valid=(
            "import apex\nopt = apex.optimizers.FusedAdam(params)\n",
            # an availability probe (megatron-core 0.16, 8 modules) uses no part of apex
            "try:\n    import apex  # noqa: F401\n    HAVE_APEX = True\nexcept ImportError:\n    HAVE_APEX = False\n",
            "from apex.optimizers import FusedAdam\n",
            "from . import amp\n",
            "from amp import Amp\n",
        ),
    ),
    Rule(
        code="APX001",
        title="import of apex.reparameterization",
        match=(Modules({"apex.reparameterization": "torch.nn.utils.parametrizations.weight_norm"}),),
        timeline=Timeline("apex", None, removed_in="23.05", source="AX-13"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "weight norm must be re-applied through torch's parametrizations"),
        doc=("`apex.reparameterization` warned from April 2022 and was deleted in July 2022: no tag "
             "from 23.05 on has it."),
        before="from apex.reparameterization import apply_weight_norm\n",
        after="from torch.nn.utils.parametrizations import weight_norm\n",
    ),
    Rule(
        code="APX001",
        title="apex.optimizers.FP16_Optimizer (moved 2019-10-04)",
        match=(Symbols("apex.optimizers", {"FP16_Optimizer": ""}),
               Symbols("apex.optimizers.fp16_optimizer", {"FP16_Optimizer": ""})),
        timeline=Timeline("apex", None, removed_on="2019-10-04", source="AX-25"),
        subject="{name}",
        advice="use torch.amp.autocast(\"cuda\") and torch.amp.GradScaler(\"cuda\") with a torch.optim optimizer "
               "(apex.contrib.optimizers.FP16_Optimizer is the same class, in apex built with "
               "--deprecated_fused_adam)",
        fix=Fix(Grade.DISPLAY, "it held fp16 master weights of its own: the training step moves to native AMP "
                "as a whole"),
        doc=("`from apex.optimizers import FP16_Optimizer` is the 2018-2019 API BERT-era scripts import next to "
             "`FusedAdam` (`FP16_Optimizer(FusedAdam(params), dynamic_loss_scale=True)`, then "
             "`optimizer.backward(loss)`). Commit 1904e48d (2019-10-04, #517) moved it to "
             "`apex.contrib.optimizers`, built only with `--deprecated_fused_adam`: no apex tag has it in "
             "`apex.optimizers`, so the import is an ImportError on every apex a project can install today. "
             "(`apex.fp16_utils.FP16_Optimizer`, another class, is APX106.)"),
        before=("from apex.optimizers import FP16_Optimizer, FusedAdam\n\n"
                "optimizer = FP16_Optimizer(FusedAdam(params), dynamic_loss_scale=True)\n"),
        after=("import torch\n\noptimizer = torch.optim.AdamW(params, fused=True)\n"
               "scaler = torch.amp.GradScaler(\"cuda\")\n"),
        invalid=("import apex\n\noptimizer = apex.optimizers.FP16_Optimizer(base, static_loss_scale=128.0)\n",),
        valid=("from apex.contrib.optimizers import FP16_Optimizer\n",
               "from apex.optimizers import FusedLAMB\n"),
    ),
    Rule(
        code="APX001",
        title="import of apex.transformer (removed 2026-01-14)",
        match=(Modules({"apex.transformer": "Megatron Core (megatron-core on PyPI: megatron.core.tensor_parallel, "
                                            "megatron.core.parallel_state), or torch.distributed.tensor.parallel"}),),
        timeline=Timeline("apex", "25.07", removed_on="2026-01-14", source="AX-22"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "tensor-parallel code moves to another library as a whole"),
        doc=("`apex.transformer` warns \"deprecated and will be removed in September 2025 ... We encourage you "
             "to migrate to Megatron Core\" since commit 8ad740d3 (2025-05-14, first tag 25.07), and was deleted "
             "by commit 4fcca776 (2026-01-14): an apex built from its main branch has no `apex.transformer`."),
        before="from apex.transformer import parallel_state\n",
        after="from torch.distributed.tensor.parallel import parallelize_module\n",
        invalid=("import apex.transformer.tensor_parallel as tp\n",
                 "from apex.transformer.pipeline_parallel.utils import get_num_microbatches\n"),
        valid=("from megatron.core import parallel_state\n",),
    ),
    Rule(
        code="APX001",
        title="import of apex.contrib.fmha, multihead_attn (removed 2026-07-08)",
        match=(Modules({
            "apex.contrib.fmha": "torch.nn.functional.scaled_dot_product_attention (or torch.nn.MultiheadAttention)",
            "apex.contrib.multihead_attn": "torch.nn.MultiheadAttention (or "
                                           "torch.nn.functional.scaled_dot_product_attention)",
        }),),
        timeline=Timeline("apex", None, deprecated_on="2026-03-04", removed_on="2026-07-08", source="AX-23"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "the fused attention modules keep their own parameter layout: a person moves the "
                "weights"),
        doc=("`apex.contrib.fmha` and `apex.contrib.multihead_attn` warn \"deprecated and will be removed in July "
             "2026. We encourage you to migrate to PyTorch native MultiheadAttention\" since commit 212061ed "
             "(2026-03-04; no tag has the warning) and were deleted by commit 526871a2 (2026-07-08)."),
        before="from apex.contrib.multihead_attn import SelfMultiheadAttn\n",
        after="import torch\n\nattention = torch.nn.MultiheadAttention(1024, 16)\n",
        invalid=("from apex.contrib.fmha import FMHAFun\n", "from apex.contrib import multihead_attn\n"),
    ),
    Rule(
        code="APX001",
        title="import of apex.contrib.gpu_direct_storage (removed 2026-07-08)",
        match=(Modules({"apex.contrib.gpu_direct_storage": "torch.cuda.gds (GdsFile)"}),),
        timeline=Timeline("apex", "25.07", removed_on="2026-07-08", source="AX-24"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "torch.cuda.gds.GdsFile reads and writes through another interface"),
        doc=("`apex.contrib.gpu_direct_storage.GDSFile` warns \"deprecated and will be removed in September 2025. "
             "We encourage you to use `torch.cuda.gds` module of PyTorch as a replacement\" since commit 8ad740d3 "
             "(2025-05-14, first tag 25.07), and was deleted by commit 6424da3b (2026-07-08)."),
        before="from apex.contrib.gpu_direct_storage import GDSFile\n",
        after="import torch.cuda.gds\n\nGdsFile = torch.cuda.gds.GdsFile  # GdsFile(path, os.O_RDONLY)\n",
    ),
    Rule(
        code="APX109",
        title="NVIDIA apex dependency",
        match=(Dependency("apex", url_markers=("nvidia/apex", "/apex.git", "/apex-"),
                          conda_names=("nvidia-apex", "apex")),),
        timeline=Timeline("apex", "23.05", source="AX-01, the PyPI note"),
        subject="requirement {name}",
        advice=dependency_advice,
        fix=Fix(Grade.UNSAFE, "`fix --unsafe-fixes` drops the line that pins apex; an environment without it fails "
                "where code still imports apex, so migrate the code first"),
        doc=("NVIDIA apex is built from source (`git+https://github.com/NVIDIA/apex`, local wheels); its AMP, "
             "DDP and fp16 parts are gone since 25.07. A plain `apex` requirement installs an unrelated "
             "PyPI project that still satisfies `find_spec(\"apex\")`. Found by `flake8-no-apex check` in "
             "requirements and constraints files, pyproject.toml, setup.cfg, the `install_requires`/"
             "`extras_require` strings of setup.py (also through a list assigned first), conda "
             "environment files (`nvidia-apex` or `apex` in `dependencies`, and apex in its `pip:` list), "
             "and the install commands of shell scripts, Dockerfiles, CI workflows and notebooks' `!`/`%pip` "
             "lines (`pip install apex`, `git clone https://github.com/NVIDIA/apex`, conda's `nvidia-apex`; "
             "reported, not rewritten)."),
        before="torch>=2.4\napex @ git+https://github.com/NVIDIA/apex.git\n",
        after="torch>=2.4\n",
        invalid=("git+https://github.com/NVIDIA/apex@master#egg=apex\n", "apex==0.9.10dev\n",
                 "./wheels/apex-0.1-cp311-cp311-linux_x86_64.whl\n"),
        valid=("apexpy>=2.0\n", "lightning-apex-tools\n"),
        language="requirements",
    ),
    Rule(
        code="APX101",
        title="apex amp.initialize",
        match=(Symbols("apex.amp", {"initialize": ""}),),
        timeline=_removed("AX-01"),
        subject="{name}",
        advice="wrap the forward pass in {autocast} and scale the loss with {grad_scaler} "
               "(O1 is autocast; O2/O3 have no exact native equivalent)",
        fix=Fix(Grade.UNSAFE, "native AMP computes in other precisions than apex's opt levels (O2/O3 kept fp16 "
                "master weights): the training step is migrated as a whole, where its shape is the canonical one"),
        doc=("`amp.initialize(model, optimizer, opt_level=...)` patched the model and optimizer for "
             "apex AMP. Native AMP needs no initialization: run the forward pass under "
             "`torch.amp.autocast(\"cuda\")` and scale the loss with `torch.amp.GradScaler(\"cuda\")`. "
             + MIGRATION_DOC),
        before=("from apex import amp\n\n"
                "[netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], opt_level=\"O1\", "
                "num_losses=2)\n"
                "for real, noise in loader:\n"
                "    fake = netG(noise)\n"
                "    errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)\n"
                "    with amp.scale_loss(errD, optD, loss_id=0) as scaled_loss:\n"
                "        scaled_loss.backward()\n"
                "    optD.step()\n"
                "    errG = criterion(netD(fake), ones)\n"
                "    with amp.scale_loss(errG, optG, loss_id=1) as scaled_loss:\n"
                "        scaled_loss.backward()\n"
                "    optG.step()\n"),
        after=("import torch\n\n"
               "scaler = torch.amp.GradScaler(\"cuda\")\n"
               "for real, noise in loader:\n"
               "    with torch.amp.autocast(\"cuda\"):\n"
               "        fake = netG(noise)\n"
               "        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)\n"
               "    scaler.scale(errD).backward()\n"
               "    scaler.step(optD)\n"
               "    with torch.amp.autocast(\"cuda\"):\n"
               "        errG = criterion(netD(fake), ones)\n"
               "    scaler.scale(errG).backward()\n"
               "    scaler.step(optG)\n"
               "    scaler.update()\n"),
        invalid=("import apex.amp as A\nA.initialize(model, opt)\n",),
        valid=("def setup(amp):\n    return amp.initialize(model)\n", "amp = np.abs(x)\namp.initialize()\n"),
        recipe=AMP_RECIPE,
        fixer=migrate_amp,
        fix_modules=TORCH,
        fixes_probes=True,
    ),
    Rule(
        code="APX102",
        title="apex amp.scale_loss",
        match=(Symbols("apex.amp", {"scale_loss": ""}),),
        timeline=_removed("AX-02"),
        subject="{name}",
        advice="use scaler.scale(loss).backward(), scaler.step(optimizer) and scaler.update() "
               "with scaler = {grad_scaler}",
        fix=Fix(Grade.UNSAFE, "the optimizer step moves into the scaler and the forward pass under autocast: "
                "migrated with amp.initialize, as a whole (APX101)"),
        doc=("`with amp.scale_loss(loss, optimizer) as scaled: scaled.backward()` emits no warning of "
             "its own, so static analysis is the only signal before apex 25.07 breaks it. The common "
             "`if args.fp16: <scale_loss> else: loss.backward()` becomes one scaled backward, the scaler "
             "enabled by the condition that guarded `amp.initialize`. " + MIGRATION_DOC),
        before=("from apex import amp\n\n\n"
                "class Trainer:\n"
                "    def __init__(self, model, optimizer, fp16: bool, accumulation):\n"
                "        self.model, self.optimizer = amp.initialize(model, optimizer, enabled=fp16)\n"
                "        self.accumulation = accumulation\n\n"
                "    def train_step(self, step, x, y):\n"
                "        loss = criterion(self.model(x), y) / self.accumulation\n"
                "        boundary = (step + 1) % self.accumulation == 0\n"
                "        with amp.scale_loss(loss, self.optimizer, delay_unscale=not boundary) as scaled_loss:\n"
                "            scaled_loss.backward()\n"
                "        if boundary:\n"
                "            self.optimizer.step()\n"
                "            self.optimizer.zero_grad()\n"),
        after=("import torch\n\n\n"
               "class Trainer:\n"
               "    def __init__(self, model, optimizer, fp16: bool, accumulation):\n"
               "        self.scaler = torch.amp.GradScaler(\"cuda\", enabled=fp16)\n"
               "        self.model, self.optimizer = model, optimizer\n"
               "        self.accumulation = accumulation\n\n"
               "    def train_step(self, step, x, y):\n"
               "        with torch.amp.autocast(\"cuda\", enabled=self.scaler.is_enabled()):\n"
               "            loss = criterion(self.model(x), y) / self.accumulation\n"
               "        boundary = (step + 1) % self.accumulation == 0\n"
               "        self.scaler.scale(loss).backward()\n"
               "        if boundary:\n"
               "            self.scaler.step(self.optimizer)\n"
               "            self.scaler.update()\n"
               "            self.optimizer.zero_grad()\n"),
        invalid=("from apex.amp import scale_loss\nwith scale_loss(loss, opt) as scaled:\n    scaled.backward()\n",),
        recipe=AMP_RECIPE,
        fixer=migrate_amp,
        fix_modules=TORCH,
        fixes_probes=True,
    ),
    Rule(
        code="APX103",
        title="other apex.amp APIs",
        match=(
            Symbols(
                "apex.amp",
                {
                    "master_params": "iterate optimizer.param_groups (native AMP keeps fp32 parameters) "
                                     "and call scaler.unscale_(optimizer) before clipping",
                    "state_dict": "use scaler.state_dict() with scaler = {grad_scaler}",
                    "load_state_dict": "use scaler.load_state_dict(...) with scaler = {grad_scaler}",
                    "init": "use {autocast}",
                    "half_function": "use @{custom_fwd_fp16}",
                    "float_function": "use @{custom_fwd_fp32}",
                    "promote_function": "use {autocast} and cast inputs explicitly",
                    "register_half_function": "use {autocast} and cast explicitly",
                    "register_float_function": "use {autocast} and cast explicitly",
                    "register_promote_function": "use {autocast} and cast explicitly",
                    "disable_casts": "use {autocast_disabled}",
                },
            ),
        ),
        timeline=_removed("AX-03, AX-04, AX-05"),
        subject="{name}",
        advice="{replacement}",
        fix=Fix(Grade.UNSAFE, "master_params, state_dict, load_state_dict and the registry calls migrate with "
                "the training step (APX101), and apex checkpoints hold another state than the scaler's; the rest "
                "is shown, not applied"),
        doc=("The rest of `apex.amp`: `master_params`, `state_dict`/`load_state_dict`, the old "
             "\"Amp\" API (`init`, `half_function`, `float_function`, `promote_function`, "
             "`register_*_function`) and `disable_casts`. Most of them never warned at run time. "
             "With the training step, `amp.master_params(optimizer)` becomes the optimizer's parameters "
             "and `scaler.unscale_(optimizer)` goes before the gradients are read (clipping), as apex had "
             "unscaled them; `amp.state_dict()`/`load_state_dict()` become the scaler's. "
             "`amp.register_half_function(torch, \"einsum\")` and edits of apex's op lists go, with a note: "
             "autocast has op lists of its own. The decorators are refused: under O1 apex cast a decorated "
             "function's inputs and kept casting the operations inside, which no torch decorator does alone "
             "(`custom_fwd` also turns autocast off inside)."),
        before=("import torch\nfrom apex import amp\n\n"
                "amp.register_half_function(torch, \"einsum\")\n"
                "model, optimizer = amp.initialize(model, optimizer)\n"
                "for x, y in loader:\n"
                "    loss = criterion(model(x), y)\n"
                "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
                "        scaled_loss.backward()\n"
                "    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)\n"
                "    optimizer.step()\n"
                "checkpoint = {\"model\": model.state_dict(), \"amp\": amp.state_dict()}\n"),
        after=("import torch\n\n"
               "scaler = torch.amp.GradScaler(\"cuda\")\n"
               "for x, y in loader:\n"
               "    with torch.amp.autocast(\"cuda\"):\n"
               "        loss = criterion(model(x), y)\n"
               "    scaler.scale(loss).backward()\n"
               "    scaler.unscale_(optimizer)\n"
               "    torch.nn.utils.clip_grad_norm_("
               "(p for group in optimizer.param_groups for p in group[\"params\"]), 1.0)\n"
               "    scaler.step(optimizer)\n"
               "    scaler.update()\n"
               "checkpoint = {\"model\": model.state_dict(), \"amp\": scaler.state_dict()}\n"),
        invalid=("import apex\ncheckpoint = {\"amp\": apex.amp.state_dict()}\n",
                 "from apex import amp\n\n@amp.float_function\ndef f(x):\n    return x\n"),
        recipe=AMP_RECIPE,
        fixer=migrate_amp,
        fix_modules=TORCH,
        fixes_probes=True,
    ),
    Rule(
        code="APX104",
        title="apex.parallel.DistributedDataParallel",
        match=(Symbols("apex.parallel", {"DistributedDataParallel": ""}),),
        timeline=_removed("AX-06"),
        subject="{name}",
        advice="use torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank]) for a model on one "
               "GPU, without device_ids on the CPU (apex-only arguments such as delay_allreduce have no equivalent)",
        fix=Fix(Grade.UNSAFE, "the arguments do not map one to one (delay_allreduce, message_size, ...)"),
        doc="apex's DDP predates `torch.nn.parallel.DistributedDataParallel`, which replaces it.",
        before="from apex.parallel import DistributedDataParallel as DDP\n\nmodel = DDP(model, delay_allreduce=True)\n",
        after="import torch\n\nmodel = torch.nn.parallel.DistributedDataParallel(model)\n",
        valid=("import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model)\n",),
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX105",
        title="apex SyncBatchNorm",
        match=(
            Symbols(
                "apex.parallel",
                {
                    "convert_syncbn_model": "use torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
                    "SyncBatchNorm": "use torch.nn.SyncBatchNorm",
                },
            ),
        ),
        timeline=_removed("AX-07, AX-08"),
        subject="{name}",
        advice="{replacement}",
        fix=Fix(Grade.UNSAFE, "torch's SyncBatchNorm needs a process group set up the torch way"),
        doc="`convert_syncbn_model` and apex's `SyncBatchNorm` have had torch counterparts since torch 1.6.",
        before="import apex\n\nmodel = apex.parallel.convert_syncbn_model(model)\n",
        after="import torch\n\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
        valid=("import torch\nbn = torch.nn.SyncBatchNorm(64)\n",),
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX106",
        title="apex.fp16_utils",
        match=(
            Symbols(
                "apex.fp16_utils",
                {
                    name: replacement
                    for names, replacement in (
                        (("FP16_Optimizer", "FP16Model", "prep_param_lists", "model_grads_to_master_grads",
                          "master_params_to_model_params", "to_python_float", "clip_grad_norm"), _NATIVE_AMP),
                        (("LossScaler", "DynamicLossScaler"), "{grad_scaler}"),
                        (("network_to_half", "tofp16", "BN_convert_float", "convert_module", "convert_network"),
                         "{autocast} (or model.half(), which is not BatchNorm-safe)"),
                    )
                    for name in names
                },
            ),
        ),
        timeline=_removed("AX-10, AX-11"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.UNSAFE, "master weights and loss scaling move into GradScaler and the model stays fp32 under "
                "autocast: FP16_Optimizer with network_to_half is migrated as a whole; the other helpers are shown"),
        doc=("The manual mixed-precision helpers of `apex.fp16_utils` (FP16_Optimizer, master "
             "parameter copies, loss scalers) are what native AMP does for you. `fix --unsafe-fixes` migrates "
             "`optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)` (or `static_loss_scale=`) with "
             "`optimizer.backward(loss)`, `optimizer.clip_master_grads(max_norm)` and `optimizer.step()` as it "
             "migrates apex.amp (APX101), deleting `model = network_to_half(model)`; code that makes tensors "
             "half precision itself or reads FP16_Optimizer's own state is left to a person."),
        before=("import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n"
                "for x, y in loader:\n"
                "    optimizer.zero_grad()\n"
                "    loss = criterion(model(x), y)\n"
                "    optimizer.backward(loss)\n"
                "    optimizer.step()\n"),
        after=("import torch\n\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
               "scaler = torch.amp.GradScaler(\"cuda\")\n" + _NATIVE_STEP),
        invalid=("import apex.fp16_utils as fu\nmodel = fu.network_to_half(model)\n",),
        recipe=AMP_RECIPE,
        fixer=migrate_amp,
        fix_modules=TORCH,
        fixes_probes=True,
    ),
    Rule(
        code="APX107",
        title="apex.optimizers.FusedAdam",
        match=(Symbols("apex.optimizers", {"FusedAdam": ""}),),
        timeline=Timeline("torch", None, replacement_since="2.0", source="AX-14"),
        subject="{name}",
        advice="use torch.optim.AdamW(params, ..., fused=True) (FusedAdam defaults to adam_w_mode=True; "
               "with adam_w_mode=False use torch.optim.Adam(..., fused=True))",
        fix=Fix(Grade.UNSAFE, "FusedAdam's default is AdamW, not Adam; the fix must pick the class from adam_w_mode"),
        doc=("`apex.optimizers.FusedAdam` is maintained, but torch has fused Adam since 1.13 and fused "
             "AdamW since 2.0. " + _MAINTAINED_DOC.format(code="APX107")),
        before="from apex.optimizers import FusedAdam\n\noptimizer = FusedAdam(model.parameters(), lr=1e-3)\n",
        after=("import torch\n\n"
               "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0, fused=True)\n"),
        valid=("class FusedAdam:\n    pass\n\nopt = FusedAdam()\n",),
        default_off=True,
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX107",
        title="apex.optimizers.FusedSGD",
        match=(Symbols("apex.optimizers", {"FusedSGD": ""}),),
        timeline=Timeline("torch", None, replacement_since="2.3", source="AX-15"),
        subject="{name}",
        advice="use torch.optim.SGD(params, ..., fused=True)",
        fix=Fix(Grade.UNSAFE, "the fused kernels differ; results may differ in the last bits"),
        doc="torch's SGD takes `fused=True` since 2.3. " + _MAINTAINED_DOC.format(code="APX107"),
        before="import apex\n\noptimizer = apex.optimizers.FusedSGD(params, lr=0.1)\n",
        after="import torch\n\noptimizer = torch.optim.SGD(params, lr=0.1, fused=True)\n",
        default_off=True,
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX107",
        title="apex fused optimizers without a native twin",
        match=(Symbols("apex.optimizers", dict.fromkeys(
            ("FusedLAMB", "FusedNovoGrad", "FusedAdagrad", "FusedMixedPrecisionLamb"), "")),),
        timeline=Timeline("torch", None, source="AX-16"),
        subject="{name}",
        advice="keep apex for it, or move to a native optimizer such as torch.optim.AdamW(params, fused=True)",
        fix=Fix(Grade.DISPLAY, "torch has no LAMB or NovoGrad: changing the optimizer changes training"),
        doc="torch ships no LAMB or NovoGrad. " + _MAINTAINED_DOC.format(code="APX107"),
        before="from apex.optimizers import FusedLAMB\n",
        after="import torch\n\noptimizer = torch.optim.AdamW(params, fused=True)\n",
        default_off=True,
    ),
    Rule(
        code="APX108",
        title="apex.normalization.FusedLayerNorm",
        match=(Symbols("apex.normalization", dict.fromkeys(("FusedLayerNorm", "MixedFusedLayerNorm"), "")),),
        # (the autograd Functions below them are a row of their own: torch has functional forms)
        timeline=Timeline("torch", None, replacement_since="0.4", source="AX-17"),
        subject="{name}",
        advice="use torch.nn.LayerNorm(normalized_shape, eps=1e-5) (memory_efficient= has no equivalent)",
        fix=Fix(Grade.UNSAFE, "apex's memory_efficient mode has no torch counterpart"),
        doc="`torch.nn.LayerNorm` is fused on CUDA. " + _MAINTAINED_DOC.format(code="APX108"),
        before="from apex.normalization import FusedLayerNorm\n\nnorm = FusedLayerNorm(768)\n",
        after="import torch\n\nnorm = torch.nn.LayerNorm(768)\n",
        valid=("class FusedLayerNorm:\n    pass\n\nnorm = FusedLayerNorm(768)\n",),
        default_off=True,
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX108",
        title="apex.normalization autograd Functions",
        match=(Symbols("apex.normalization", dict.fromkeys((
            "FusedLayerNormAffineFunction", "FusedLayerNormFunction", "FusedLayerNormAffineMixedDtypesFunction",
            "FusedRMSNormAffineFunction", "FusedRMSNormFunction", "FusedRMSNormAffineMixedDtypesFunction",
            "fused_layer_norm_affine", "fused_layer_norm", "mixed_dtype_fused_layer_norm_affine",
            "fused_rms_norm_affine", "fused_rms_norm", "mixed_dtype_fused_rms_norm_affine"), "")),),
        timeline=Timeline("torch", None, replacement_since="2.4", source="AX-17, AX-18"),
        subject="{name}",
        advice="use torch.nn.functional.layer_norm(x, shape, weight, bias, eps) or "
               "torch.nn.functional.rms_norm(x, shape, weight, eps)",
        fix=Fix(Grade.DISPLAY, "the Functions and helpers take their arguments in another order than the "
                "functional forms (`fused_layer_norm_affine(x, weight, bias, shape, eps)`), and default eps to 1e-6"),
        doc=("The autograd Functions behind apex's fused norms (`apex/normalization/fused_layer_norm.py`: the "
             "`*MixedDtypesFunction` ones since 2021-10-02 and 2022-02-03) and its functional helpers "
             "(`fused_layer_norm_affine`, `fused_rms_norm_affine`, `mixed_dtype_fused_*`, which timm imports); "
             "`torch.nn.functional.rms_norm` exists since torch 2.4 (`layer_norm` for much longer). "
             + _MAINTAINED_DOC.format(code="APX108")),
        before="from apex.normalization.fused_layer_norm import FusedLayerNormAffineFunction\n",
        after="import torch\n\ny = torch.nn.functional.layer_norm(x, (4,), weight, bias, 1e-5)\n",
        invalid=("from apex.normalization.fused_layer_norm import fused_layer_norm_affine, fused_rms_norm_affine\n",
                 "from apex.normalization.fused_layer_norm import FusedRMSNormAffineMixedDtypesFunction\n",
                 "import apex.normalization.fused_layer_norm as f\ny = f.mixed_dtype_fused_rms_norm_affine(x, w, s)\n"),
        valid=("from apex.normalization.fused_layer_norm import MixedFusedLayerNormAffineFunction\n",),  # never existed
        default_off=True,
    ),
    Rule(
        code="APX108",
        title="apex.normalization.FusedRMSNorm",
        match=(Symbols("apex.normalization", dict.fromkeys(("FusedRMSNorm", "MixedFusedRMSNorm"), "")),),
        timeline=Timeline("torch", None, replacement_since="2.4", source="AX-18"),
        subject="{name}",
        advice="use torch.nn.RMSNorm(normalized_shape, eps=1e-5) (pass eps: torch defaults to the dtype's epsilon)",
        fix=Fix(Grade.UNSAFE, "the default eps differs (apex 1e-5, torch finfo(dtype).eps)"),
        doc="`torch.nn.RMSNorm` exists since torch 2.4. " + _MAINTAINED_DOC.format(code="APX108"),
        before="import apex.normalization\n\nnorm = apex.normalization.FusedRMSNorm(4096)\n",
        after="import torch\n\nnorm = torch.nn.RMSNorm(4096, eps=1e-5)\n",
        default_off=True,
        fixer=fix_native_call,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX110",
        title="other apex parts without a native equivalent",
        match=(Modules({
            "apex.multi_tensor_apply": "torch's foreach and fused optimizers batch their kernels themselves",
            "apex.contrib": "a few parts have torch counterparts: apex.contrib.layer_norm is torch.nn.LayerNorm, the "
                            "fused optimizers are torch.optim's fused=True",
        }),),
        timeline=Timeline("apex", None, source="AX-19, AX-20"),
        subject="{name}",
        advice="keep apex, built from source, for it ({replacement})",
        fix=Fix(Grade.DISPLAY, "there is nothing native to rewrite to"),
        doc=("The rest of apex, for teams removing it entirely: `apex.multi_tensor_apply` "
             "(`multi_tensor_applier`) and the other `apex.contrib` modules are maintained (present on apex's main "
             "branch, 2026-07-08) but need apex built from source, and torch has no drop-in equivalent. "
             "`apex.transformer`, `apex.contrib.fmha`, `apex.contrib.multihead_attn` and "
             "`apex.contrib.gpu_direct_storage` are removed, and reported by default as APX001. Each use of a "
             "name imported from them is reported too (`isinstance(opt, DistributedFusedAdam)`, "
             "`FastLayerNormFN.apply(...)`): every one is a place to change. "
             + _MAINTAINED_DOC.format(code="APX110")),
        before="from apex.multi_tensor_apply import multi_tensor_applier\n",
        after="import torch\n\noptimizer = torch.optim.AdamW(params, fused=True)\n",
        invalid=("from apex.contrib.optimizers.distributed_fused_adam import DistributedFusedAdam\n",
                 "from apex.contrib import layer_norm\n",
                 "import apex\nlayer = apex.contrib.layer_norm.FastLayerNorm(1024)\n"),
        valid=("from apex.optimizers import FusedAdam\n", "from mylib.contrib import layer_norm\n",
               "from apex.contrib.fmha import FMHAFun\n"),  # removed: APX001's
        default_off=True,
    ),
    Rule(
        code="APX110",
        title="other apex parts with a native equivalent",
        match=(Modules({
            "apex.mlp": "torch.nn.Sequential of torch.nn.Linear and activation layers (apex.mlp.MLP fuses them)",
            "apex.fused_dense": "torch.nn.Linear (cuBLASLt fuses the bias on CUDA)",
        }),),
        timeline=Timeline("torch", None, replacement_since="0.4", source="AX-21"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "the fused modules keep their own parameters: a person moves the weights"),
        doc=("`apex.mlp` and `apex.fused_dense` fuse layers that torch has unfused. "
             + _MAINTAINED_DOC.format(code="APX110")),
        before="from apex.mlp import MLP\n",
        after="import torch\n\nmlp = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU())\n",
        invalid=("from apex.fused_dense import FusedDense\n",),
        default_off=True,
    ),
    Rule(
        code="APX111",
        title="timm's ApexScaler",
        match=(Symbols("timm.utils", {"ApexScaler": "timm.utils.NativeScaler()"}),
               Symbols("timm.utils.cuda", {"ApexScaler": "timm.utils.NativeScaler()"})),
        timeline=Timeline("apex", "23.05", removed_in="25.07", source="AX-01, TM-03"),
        subject="apex.amp inside {name}",
        advice="use {replacement} with the forward pass under torch.amp.autocast(\"cuda\") and no amp.initialize "
               "(give it parameters= where it clips)",
        fix=Fix(Grade.DISPLAY, "NativeScaler scales for native autocast, which the forward pass must enter, and "
                "amp.initialize must go with it; it clips only the parameters= it is given (ApexScaler clipped apex's "
                "master parameters) and saves its state under another checkpoint key (\"amp_scaler\", not \"amp\")"),
        doc=("timm's `ApexScaler` (timm.utils, since timm 0.3.0, still in 1.0.31) runs `amp.scale_loss` and "
             "`amp.master_params` of `from apex import amp`, which timm imports in a `try` that leaves `amp = None` "
             "when apex has no `amp`: from apex 25.07 on, the first call is an AttributeError deep in the training "
             "loop. `NativeScaler`, which came with it in timm 0.3.0, takes the same call (`loss_scaler(loss, "
             "optimizer, clip_grad=..., parameters=...)`) and drives a `torch.amp.GradScaler`: the model runs under "
             "`torch.amp.autocast(\"cuda\")` instead of `amp.initialize`, and where it clips it needs `parameters=`. "
             "timm's CheckpointSaver stores the scaler under its `state_dict_key`, \"amp\" for ApexScaler and "
             "\"amp_scaler\" for NativeScaler, so resuming an apex checkpoint leaves the native scaler fresh. "
             "Training scripts that choose between the two (`if use_amp == \"apex\": ... loss_scaler = "
             "ApexScaler()`) lose the apex branch in APX101's migration."),
        before=("from timm.utils import ApexScaler\n\n"
                "loss_scaler = ApexScaler()\n"
                "for x, y in loader:\n"
                "    loss = criterion(model(x), y)\n"
                "    optimizer.zero_grad()\n"
                "    loss_scaler(loss, optimizer, clip_grad=1.0)\n"),
        after=("import torch\nfrom timm.utils import NativeScaler\n\n"
               "loss_scaler = NativeScaler()\n"
               "for x, y in loader:\n"
               "    with torch.amp.autocast(\"cuda\"):\n"
               "        loss = criterion(model(x), y)\n"
               "    optimizer.zero_grad()\n"
               "    loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())\n"),
        invalid=("import timm.utils\nscaler = timm.utils.ApexScaler()\nscaler(loss, optimizer)\n",
                 "from timm.utils.cuda import ApexScaler as Scaler\n\ncheckpoint = {\"amp\": Scaler().state_dict()}\n"),
        valid=("from timm.utils import NativeScaler\nloss_scaler = NativeScaler()\n",
               "class ApexScaler:\n    pass\n\nscaler = ApexScaler()\n",
               "from mylib.utils import ApexScaler\nscaler = ApexScaler()\n"),
    ),
]
