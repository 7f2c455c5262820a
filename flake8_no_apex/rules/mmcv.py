"""OpenMMLab's mmcv 1.x fp16 utilities (MM-01): gone with `mmcv.runner` in mmcv 2.0, whose
training loop moved to mmengine; nothing warned before."""
from __future__ import annotations

from ..table import Fix, Grade, Rule, Symbols, Timeline

# What each name becomes in mmengine (or torch), the library mmcv 2.0 hands training to.
_REPLACEMENTS = {
    "auto_fp16": "mmengine.runner.amp.autocast() around the forward pass (torch.amp.autocast(\"cuda\") without "
                 "mmengine)",
    "force_fp32": "a torch.amp.autocast(\"cuda\", enabled=False) block with the inputs cast by .float()",
    "wrap_fp16_model": "",  # see advice()
    "Fp16OptimizerHook": "optim_wrapper=dict(type=\"AmpOptimWrapper\", loss_scale=...) "
                         "(mmengine.optim.AmpOptimWrapper)",
    "GradientCumulativeFp16OptimizerHook": "optim_wrapper=dict(type=\"AmpOptimWrapper\", accumulative_counts=...) "
                                           "(mmengine.optim.AmpOptimWrapper)",
}
_MODULES = {
    "mmcv.runner": tuple(_REPLACEMENTS),
    "mmcv.runner.fp16_utils": ("auto_fp16", "force_fp32", "wrap_fp16_model"),
    "mmcv.runner.hooks": ("Fp16OptimizerHook", "GradientCumulativeFp16OptimizerHook"),
    "mmcv.runner.hooks.optimizer": ("Fp16OptimizerHook", "GradientCumulativeFp16OptimizerHook"),
}


def advice(site, floors) -> str:
    """What replaces the name (wrap_fp16_model has no counterpart: it goes)."""
    if site.name.endswith("wrap_fp16_model"):
        return "delete it: mmengine's AmpOptimWrapper keeps the model in fp32 under autocast"
    return f"use {site.replacement}"


RULES = [
    Rule(
        code="APX501",
        title="mmcv 1.x fp16 utilities",
        match=tuple(Symbols(module, {name: _REPLACEMENTS[name] for name in names})
                    for module, names in _MODULES.items()),
        timeline=Timeline("mmcv", None, removed_in="2.0.0", source="MM-01"),
        subject="{name}",
        advice=advice,
        fix=Fix(Grade.DISPLAY, "mmcv 2.0 moved the training loop to mmengine: the runner, its hooks and the "
                "config that names them change together"),
        doc=("mmcv 1.x shipped its own mixed precision in `mmcv.runner`: the `@auto_fp16` and `@force_fp32` "
             "decorators, `wrap_fp16_model`, and the `Fp16OptimizerHook` / `GradientCumulativeFp16OptimizerHook` "
             "that run loss scaling in the runner. mmcv 2.0 (from 2.0.0rc1) deleted `mmcv.runner` without a "
             "deprecation before: the loop, its AMP and the optimizer hooks are mmengine's, "
             "`mmengine.optim.AmpOptimWrapper` (`optim_wrapper=dict(type=\"AmpOptimWrapper\")` in a config) and "
             "`mmengine.runner.amp.autocast`."),
        before=("from mmcv.runner import auto_fp16\n\n\n"
                "class Head(BaseModule):\n"
                "    @auto_fp16(apply_to=(\"x\",))\n"
                "    def forward(self, x):\n"
                "        return self.conv(x)\n"),
        after=("import torch\n\n\n"
               "class Head(torch.nn.Module):\n"
               "    def forward(self, x):\n"
               "        with torch.amp.autocast(\"cuda\"):\n"
               "            return self.conv(x)\n"),
        invalid=("from mmcv.runner.fp16_utils import force_fp32, wrap_fp16_model\n",
                 "import mmcv.runner\n\nhook = mmcv.runner.Fp16OptimizerHook(loss_scale=512.0)\n",
                 "from mmcv.runner.hooks import GradientCumulativeFp16OptimizerHook\n"),
        valid=("from mmengine.optim import AmpOptimWrapper\n",
               "from mmcv.cnn import ConvModule\n",
               "from mydet.runner import auto_fp16\n"),
    ),
]
