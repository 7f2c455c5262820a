"""Replacement code that depends on the versions a project supports.

Advice and replacement texts in the rule table name these as `{grad_scaler}`, `{precision_16}`,
...; each is spelled for the oldest release of its library that the project supports, so a
project on torch 2.1 is pointed at `torch.cuda.amp.GradScaler()`, which it has, rather than at
`torch.amp.GradScaler("cuda")`, which arrived in torch 2.3.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Mapping, Optional, Tuple

from packaging.version import Version

# name -> (library, ((first release with this spelling, text), ...)), oldest first;
# None marks the spelling for anything older than the next entry.
SPELLINGS: Dict[str, Tuple[str, Tuple[Tuple[Optional[str], str], ...]]] = {
    "autocast": ("torch", (
        (None, "torch.cuda.amp.autocast()"),
        ("1.10", 'torch.autocast("cuda")'),
        ("1.12", 'torch.amp.autocast("cuda")'),
    )),
    "autocast_disabled": ("torch", (
        (None, "torch.cuda.amp.autocast(enabled=False)"),
        ("1.10", 'torch.autocast("cuda", enabled=False)'),
        ("1.12", 'torch.amp.autocast("cuda", enabled=False)'),
    )),
    "grad_scaler": ("torch", (
        (None, "torch.cuda.amp.GradScaler()"),
        ("2.3", 'torch.amp.GradScaler("cuda")'),
    )),
    "custom_fwd_fp32": ("torch", (
        (None, "torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)"),
        ("2.4", 'torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)'),
    )),
    "custom_fwd_fp16": ("torch", (
        (None, "torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)"),
        ("2.4", 'torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float16)'),
    )),
    "precision_16": ("lightning", (
        (None, "16"),
        ("2.0.0", '"16-mixed"'),
    )),
    "mixed_precision": ("lightning", (
        (None, "NativeMixedPrecisionPlugin"),
        ("1.9.0", "MixedPrecisionPlugin"),
        ("2.1.1", "MixedPrecision"),
    )),
    "mixed_precision_plugin": ("lightning", (
        (None, 'NativeMixedPrecisionPlugin(16, "cuda")'),
        ("1.9.0", 'MixedPrecisionPlugin(16, "cuda")'),
        ("2.0.0", 'MixedPrecisionPlugin("16-mixed", "cuda")'),
        ("2.1.1", 'MixedPrecision("16-mixed", "cuda")'),
    )),
    "deepspeed_precision": ("lightning", (
        (None, "DeepSpeedPrecisionPlugin(16)"),
        ("2.0.0", 'DeepSpeedPrecisionPlugin("16-mixed")'),
        ("2.1.1", 'DeepSpeedPrecision("16-mixed")'),
    )),
    # FullyShardedNativeNativeMixedPrecisionPlugin(precision, device) became FSDPMixedPrecisionPlugin in
    # 2.0 (same parameters), FSDPPrecisionPlugin(precision) in 2.1.0 and FSDPPrecision(precision) in 2.1.1
    "fsdp_precision": ("lightning", (
        (None, "FullyShardedNativeNativeMixedPrecisionPlugin"),
        ("2.0.0", "FSDPMixedPrecisionPlugin"),
        ("2.1.0", "FSDPPrecisionPlugin"),
        ("2.1.1", "FSDPPrecision"),
    )),
    "fsdp_strategy": ("lightning", (
        (None, "fsdp_native"),
        ("2.0.0", "fsdp"),
    )),
}


def pick(steps: Tuple[Tuple[Optional[str], str], ...], floor: Optional[Version]) -> str:
    """The text of the newest step that `floor` has reached (None: the newest step)."""
    return next(text for since, text in reversed(steps) if since is None or floor is None or floor >= Version(since))


def spell(floors: Mapping[str, Version]) -> Dict[str, str]:
    """Every spelling, for a project whose oldest supported releases are `floors`
    (a library missing from it: its newest release)."""
    return dict(_spelled(tuple(sorted((library, floors[library]) for library in _LIBRARIES if library in floors))))


_LIBRARIES = frozenset(library for library, _ in SPELLINGS.values())


@lru_cache(maxsize=64)
def _spelled(floors: Tuple[Tuple[str, Version], ...]) -> Dict[str, str]:
    """`spell` of the floors of the spelled libraries (a module's every finding asks: once per floors)."""
    given = dict(floors)
    return {name: pick(steps, given.get(library)) for name, (library, steps) in SPELLINGS.items()}
