"""DeepSpeed's `"amp"` config section, apex AMP inside DeepSpeed (DS-01), in the Python dicts that
configure it: DeepSpeed 0.19.8 rejects the section."""
from __future__ import annotations

from ..table import Fix, Grade, Keyword, Rule, Timeline

# what an apex "amp" section of a DeepSpeed config holds (its `enabled` switch and apex's options),
# so that a module's other "amp" keys (an amplitude, a metric) are not taken for one
_AMP_SECTION = ("enabled", "opt_level", "loss_scale", "keep_batchnorm_fp32", "master_weights")

RULES = [
    Rule(
        code="APX601",
        title="DeepSpeed \"amp\" section",
        match=tuple(Keyword("amp", library=library, dict_forms=True, section_keys=_AMP_SECTION)
                    for library in ("deepspeed", "transformers", "lightning")),
        timeline=Timeline("deepspeed", None, removed_in="0.19.8", source="DS-01"),
        subject="DeepSpeed config \"amp\"",
        advice="use \"torch_autocast\": {{\"enabled\": True}} (DeepSpeed >= 0.17.2, closest to apex O1) or "
               "\"fp16\": {{\"enabled\": True}}",
        fix=Fix(Grade.DISPLAY, "DeepSpeed's fp16 keeps fp16 weights with fp32 master copies (apex O2-like) and its "
                "torch_autocast is native autocast (O1-like): which one matches the run, and its loss scaling "
                "options, is a person's choice"),
        doc=("A DeepSpeed config's `\"amp\"` section ran apex AMP inside DeepSpeed (`amp.initialize` with its "
             "options). DeepSpeed 0.19.8 removed the integration without a deprecation before: any top-level "
             "`\"amp\"` key raises `DeepSpeedConfigError` (\"NVIDIA Apex AMP integration has been removed. Use "
             "DeepSpeed 'fp16', 'bf16', or 'torch_autocast' instead.\"). Found in the dict literals (and "
             "`dict(...)` calls) of modules importing DeepSpeed, transformers or Lightning, which hand them to "
             "`deepspeed.initialize(config=...)`, `TrainingArguments(deepspeed=...)` or "
             "`DeepSpeedStrategy(config=...)`, where the value holds an `\"enabled\"` switch or apex's options "
             "and in DeepSpeed JSON configs (`ds_config*.json`, or any JSON whose top level has DeepSpeed's "
             "keys), at the key."),
        before=("import deepspeed\n\n"
                "config = {\"train_batch_size\": 8, \"amp\": {\"enabled\": True, \"opt_level\": \"O1\"}}\n"
                "engine, optimizer, _, _ = deepspeed.initialize(model=model, config=config)\n"),
        after="config = {\"train_batch_size\": 8, \"torch_autocast\": {\"enabled\": True}}\n",
        invalid=("from transformers import TrainingArguments\n\n"
                 "args = TrainingArguments(\"out\", deepspeed={\"amp\": {\"enabled\": \"auto\"}})\n",
                 "from lightning.pytorch.strategies import DeepSpeedStrategy\n\n"
                 "strategy = DeepSpeedStrategy(config=dict(amp=dict(enabled=True)))\n"),
        valid=("import deepspeed\n\nconfig = {\"fp16\": {\"enabled\": True}, \"bf16\": {\"enabled\": False}}\n",
               "import deepspeed\n\nsignal = {\"amp\": 0.5, \"phase\": 0.1}\n",
               "import numpy\n\nconfig = {\"amp\": {\"enabled\": True}}\n"),
    ),
]
