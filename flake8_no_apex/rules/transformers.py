"""Hugging Face transformers' apex options of `TrainingArguments` and the mixed-precision internals of
its `Trainer` that subclasses read (TF-01..TF-08)."""
from __future__ import annotations

import ast
from typing import Optional

from packaging.version import Version

from ..edits import drop_option, rename_attribute, rename_option, replace_value
from ..table import AttributeRead, ByFloor, Fix, Grade, Keyword, Plan, Rule, Site, Symbols, Timeline, plan

TRAINING_ARGUMENTS = ("transformers:TrainingArguments", "transformers:Seq2SeqTrainingArguments")


def _option(name: str, values=None, other_values=()) -> Keyword:
    """A TrainingArguments field: keyword, dict key or `--name` in a transformers module."""
    return Keyword(name, callees=TRAINING_ARGUMENTS, values=values, other_values=other_values, library="transformers",
                   dict_forms=True, argv=True)


# Backend values that select native AMP on every 4.x release that accepts them ("amp" from 4.35 on;
# 4.20-4.34 routed it to apex) and that 5.x, with native AMP as the only backend, does anyway.
_NATIVE_BACKENDS = ("auto", "amp", "cuda_amp")


# The Trainer classes whose instances a subclass's `self` is (Seq2SeqTrainer derives from Trainer).
TRAINERS = ("transformers:Trainer", "transformers:Seq2SeqTrainer")
# What each mixed-precision attribute the Trainer dropped said, and what says it now.
_INTERNALS = {
    "use_apex": "delete the apex branch it guards: transformers 5 has no apex backend",
    "use_cpu_amp": "delete it: accelerate runs the Trainer's autocast (self.accelerator.mixed_precision names the "
                   "precision, \"bf16\" where this was True)",
    "amp_dtype": "use self.accelerator.mixed_precision (\"bf16\" or \"fp16\")",
    "scaler": "use self.accelerator.backward(loss), which scales the loss (accelerate's scaler is "
              "self.accelerator.scaler)",
    "do_grad_scaling": "use self.accelerator.backward(loss), which scales the loss when fp16 is on",
    "use_cuda_amp": "use self.accelerator.autocast(), or self.compute_loss_context_manager(), around the forward pass",
}


def _trainer_internal(names) -> tuple:
    return tuple(AttributeRead(name, library="transformers", receiver_hint="", receivers=TRAINERS) for name in names)


def internals_advice(site: Site, floors) -> str:
    return _INTERNALS[site.name]


def fix_fp16_backend(ctx, finding) -> Optional[Plan]:
    """Rename to half_precision_backend where it exists (4.13 to 4.x), else drop it."""
    site = finding.site
    floor = ctx.floors.get("transformers")
    if floor is not None and floor < Version("5.0"):
        edit = rename_option(ctx.source, site.node, "fp16_backend", "half_precision_backend")
        return plan([edit], Grade.SAFE) if edit else None
    return fix_drop_backend(ctx, finding)


def fix_drop_backend(ctx, finding) -> Optional[Plan]:
    """Drop a backend option that 5.0 removed: safe where it chose native AMP, which 5.x always
    uses; unsafe for "cpu_amp", "apex" (APX302's) or a value not written out."""
    site = finding.site
    edit = drop_option(ctx.source, site)
    return plan([edit], Grade.SAFE if site.value in _NATIVE_BACKENDS else Grade.UNSAFE) if edit else None


def fix_drop(ctx, finding) -> Optional[Plan]:
    """Drop an apex-only option: training moves from apex to native AMP."""
    edit = drop_option(ctx.source, finding.site)
    return plan([edit], Grade.UNSAFE) if edit else None


def fix_optimizer(ctx, finding) -> Optional[Plan]:
    site = finding.site
    if isinstance(site.node, ast.Attribute):
        return plan([rename_attribute(ctx.source, site.node, "ADAMW_TORCH_FUSED")], Grade.SAFE)
    edit = replace_value(ctx.source, site.node, site.value_node, "adamw_torch_fused")
    return plan([edit], Grade.SAFE) if edit else None


RULES = [
    Rule(
        code="APX301",
        title="fp16_backend=",
        match=(_option("fp16_backend"),),
        timeline=Timeline("transformers", "4.13.0", removed_in="5.0.0", replacement_since="4.13.0", source="TF-01"),
        subject="TrainingArguments(fp16_backend=...)",
        advice=ByFloor("transformers", (
            (None, "rename it to half_precision_backend (same values)"),
            ("5.0.0", "drop it and keep fp16=True or bf16=True (half_precision_backend, its 4.x name, is gone too)"),
        )),
        fix=Fix(Grade.SAFE, "where half_precision_backend exists (a target below transformers 5.0) it is a "
                "rename; otherwise the option is dropped, which is safe for \"auto\" and \"amp\" (native AMP, "
                "the only backend of 5.x) and unsafe for \"apex\""),
        doc=("`fp16_backend` was renamed `half_precision_backend` in transformers 4.13 (a FutureWarning for "
             "any value but the default \"auto\") and both were removed in 5.0, where the dataclass raises "
             "TypeError."),
        before=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True, fp16_backend="amp")\n'
        ),
        after=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True)\n'
        ),
        invalid=(
            'import transformers\nargs = transformers.Seq2SeqTrainingArguments("out", fp16_backend="amp")\n',
            'from transformers import HfArgumentParser\n'
            'parser.parse_args_into_dataclasses(["--fp16_backend", "auto"])\n',
            'import transformers\nconfig = {"fp16_backend": "auto"}\n',
        ),
        valid=('config = {"fp16_backend": "auto"}\n',),
        fixer=fix_fp16_backend,
    ),
    Rule(
        code="APX302",
        title='half_precision_backend="apex"',
        match=(_option("half_precision_backend", {"apex": ""}), _option("fp16_backend", {"apex": ""})),
        timeline=Timeline("transformers", None, removed_in="5.0.0", source="TF-02"),
        subject="TrainingArguments({name}={value})",
        advice="drop it and keep fp16=True (native AMP)",
        fix=Fix(Grade.UNSAFE, "moves training from apex to native AMP"),
        doc=("The apex backend of the Trainer needs the `apex.amp` that apex deleted in 25.07; "
             "transformers 5.0 removed `half_precision_backend` altogether."),
        before=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True, half_precision_backend="apex")\n'
        ),
        after=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True)\n'
        ),
        invalid=('from transformers import TrainingArguments\nTrainingArguments("o", fp16_backend="apex")\n',),
        valid=('from transformers import TrainingArguments\nTrainingArguments("o", half_precision_backend="auto")\n',),
        fixer=fix_drop,
    ),
    Rule(
        code="APX305",
        title="half_precision_backend=",
        match=(_option("half_precision_backend", other_values=("apex",)),),
        timeline=Timeline("transformers", None, removed_in="5.0.0", replacement_since="5.0.0", source="TF-02"),
        subject="TrainingArguments(half_precision_backend=...)",
        advice="drop it and keep fp16=True or bf16=True (native AMP is the only backend)",
        fix=Fix(Grade.SAFE, "5.x always uses native AMP, which \"auto\", \"amp\" and \"cuda_amp\" chose; dropping "
                "\"cpu_amp\" or a computed value is unsafe"),
        doc=("transformers 5.0 removed `half_precision_backend` (the 4.13 name of `fp16_backend`): the dataclass "
             "raises TypeError for any value. Reported only for projects whose oldest supported transformers is "
             "5.0 or newer: on 4.x it is the current spelling. `\"apex\"` is APX302."),
        before=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True, half_precision_backend="auto")\n'
        ),
        after=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True)\n'
        ),
        invalid=('import transformers\nconfig = {"half_precision_backend": "cuda_amp"}\n',
                 'from transformers import TrainingArguments\n'
                 'TrainingArguments("o", half_precision_backend=backend)\n'),
        valid=('from transformers import TrainingArguments\nTrainingArguments("o", half_precision_backend="apex")\n',),
        fixer=fix_drop_backend,
    ),
    Rule(
        code="APX303",
        title="fp16_opt_level=",
        match=(_option("fp16_opt_level"),),
        timeline=Timeline("transformers", None, removed_in="5.0.0", source="TF-05"),
        subject="TrainingArguments(fp16_opt_level=...)",
        advice="drop it (it only configured apex's opt level)",
        fix=Fix(Grade.UNSAFE, "an O2/O3 run changes numerics when it moves to native AMP"),
        doc="`fp16_opt_level` only ever applied to apex; transformers 5.0 removed it.",
        before=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True, fp16_opt_level="O2")\n'
        ),
        after=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", fp16=True)\n'
        ),
        invalid=('import transformers\nargv = ["--fp16_opt_level=O2"]\n',),
        fixer=fix_drop,
    ),
    Rule(
        code="APX304",
        title='optim="adamw_apex_fused"',
        match=(
            _option("optim", {"adamw_apex_fused": '"adamw_torch_fused"'}),
            Symbols("transformers", {"OptimizerNames.ADAMW_APEX_FUSED": '"adamw_torch_fused"'}),
        ),
        timeline=Timeline("transformers", None, removed_in="5.8.0", replacement_since="4.27.0", source="TF-06"),
        subject='optim="adamw_apex_fused"',
        advice="use optim={replacement}",
        fix=Fix(Grade.SAFE, "both are fused AdamW with the same hyper-parameters"),
        doc="`adamw_apex_fused` needs apex; `adamw_torch_fused` (transformers 4.27+) is torch's fused AdamW.",
        before=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", optim="adamw_apex_fused")\n'
        ),
        after=(
            'from transformers import TrainingArguments\n\n'
            'args = TrainingArguments("out", optim="adamw_torch_fused")\n'
        ),
        invalid=('from transformers.training_args import OptimizerNames\nname = OptimizerNames.ADAMW_APEX_FUSED\n',),
        valid=('import torch\nopt = make(optim="adamw_apex_fused")\n',),
        fixer=fix_optimizer,
    ),
    Rule(
        code="APX306",
        title="Trainer mixed-precision attributes removed in 5.0",
        match=_trainer_internal(("use_apex", "use_cpu_amp", "amp_dtype")),
        timeline=Timeline("transformers", None, removed_in="5.0.0", source="TF-07"),
        subject="Trainer.{name}",
        advice=internals_advice,
        fix=Fix(Grade.DISPLAY, "the code around the read decides what replaces it; APX102's migration deletes an "
                "`if self.use_apex:` branch that scales with apex"),
        doc=("A `Trainer` subclass that copied transformers 4.x code reads `self.use_apex`, `self.use_cpu_amp` or "
             "`self.amp_dtype`, which `Trainer.__init__` set up to 4.57; transformers 5.0 removed them (accelerate "
             "runs the autocast and the loss scaling), so the read is an AttributeError at the first training step. "
             "Found on `self` in the methods of classes that derive from `Trainer` or `Seq2SeqTrainer` (through "
             "local subclasses too), never on a project's own trainer of that name."),
        before=("from transformers import Trainer\n\n\n"
                "class MyTrainer(Trainer):\n"
                "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
                "        if self.use_cpu_amp:\n"
                "            print(\"bfloat16 on the CPU\")\n"
                "        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)\n"),
        after=("from transformers import Trainer\n\n\n"
               "class MyTrainer(Trainer):\n"
               "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
               "        if self.accelerator.mixed_precision == \"bf16\":\n"
               "            print(\"bfloat16 on the CPU\")\n"
               "        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)\n"),
        invalid=("import transformers\n\n\nclass T(transformers.Seq2SeqTrainer):\n    def dtype(self):\n"
                 "        return self.amp_dtype\n",
                 "from transformers import Trainer\n\n\nclass Base(Trainer):\n    pass\n\n\nclass T(Base):\n"
                 "    def step(trainer):\n        return trainer.use_apex\n"),
        valid=("from transformers import Trainer\n\n\nclass T(Trainer):\n    @staticmethod\n"
               "    def f(self):\n        return self.use_apex\n",
               "import transformers\n\n\nclass Trainer:  # a project's own\n    def __init__(self):\n"
               "        self.use_apex = False\n\n    def step(self):\n        return self.use_apex\n",
               "from transformers import Trainer\n\n\nclass T(Trainer):\n    def f(self, other):\n"
               "        return other.use_apex\n"),
    ),
    Rule(
        code="APX306",
        title="Trainer loss-scaling attributes removed in 4.35",
        match=_trainer_internal(("scaler", "do_grad_scaling", "use_cuda_amp")),
        timeline=Timeline("transformers", None, removed_in="4.35.0", source="TF-08"),
        subject="Trainer.{name}",
        advice=internals_advice,
        fix=Fix(Grade.DISPLAY, "what replaces the scaler's calls depends on the step they are in"),
        doc=("Up to transformers 4.34 `Trainer` kept its own `torch.cuda.amp.GradScaler` in `self.scaler`, with "
             "`self.do_grad_scaling` and `self.use_cuda_amp`; 4.35 moved the loss scaling into accelerate "
             "(`self.accelerator.backward(loss)`), and a subclass that still steps `self.scaler` fails with "
             "AttributeError."),
        before=("from transformers import Trainer\n\n\n"
                "class MyTrainer(Trainer):\n"
                "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
                "        loss = self.compute_loss(model, inputs)\n"
                "        if self.do_grad_scaling:\n"
                "            self.scaler.scale(loss).backward()\n"
                "        else:\n"
                "            loss.backward()\n"
                "        return loss.detach()\n"),
        after=("from transformers import Trainer\n\n\n"
               "class MyTrainer(Trainer):\n"
               "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
               "        loss = self.compute_loss(model, inputs)\n"
               "        self.accelerator.backward(loss)\n"
               "        return loss.detach()\n"),
        invalid=("from transformers import Seq2SeqTrainer\n\n\nclass T(Seq2SeqTrainer):\n    def f(self):\n"
                 "        return self.use_cuda_amp\n",),
        valid=("import torch\n\n\nclass T:\n    def f(self):\n        return self.scaler\n",),
    ),
]
