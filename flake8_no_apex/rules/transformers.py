"""Hugging Face transformers' apex options of `TrainingArguments` (TF-01..TF-06)."""
from __future__ import annotations

import ast
from typing import Optional

from packaging.version import Version

from ..edits import drop_option, rename_attribute, rename_option, replace_value
from ..table import ByFloor, Fix, Grade, Keyword, Plan, Rule, Symbols, Timeline, plan

TRAINING_ARGUMENTS = ("transformers:TrainingArguments", "transformers:Seq2SeqTrainingArguments")


def _option(name: str, values=None, other_values=()) -> Keyword:
    """A TrainingArguments field: keyword, dict key or `--name` in a transformers module."""
    return Keyword(name, callees=TRAINING_ARGUMENTS, values=values, other_values=other_values, library="transformers",
                   dict_forms=True, argv=True)


# Backend values that select native AMP on every 4.x release that accepts them ("amp" from 4.35 on;
# 4.20-4.34 routed it to apex) and that 5.x, with native AMP as the only backend, does anyway.
_NATIVE_BACKENDS = ("auto", "amp", "cuda_amp")


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
    edit = drop_option(ctx.source, site.node, site.value_node, site.call)
    return plan([edit], Grade.SAFE if site.value in _NATIVE_BACKENDS else Grade.UNSAFE) if edit else None


def fix_drop(ctx, finding) -> Optional[Plan]:
    """Drop an apex-only option: training moves from apex to native AMP."""
    edit = drop_option(ctx.source, finding.site.node, finding.site.value_node, finding.site.call)
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
]
