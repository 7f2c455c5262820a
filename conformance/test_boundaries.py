"""Each rule's versions, read from the released wheels on both sides of every boundary: the
usage warns from `deprecated_in` on and not in the release before; it is gone from `removed_in`
on and present before; the replacement exists from `replacement_since` on and not before."""
from __future__ import annotations

import ast
from dataclasses import dataclass
import re
from typing import Dict, Optional, Tuple

import pytest
from packaging.version import Version

from flake8_no_apex.rules import RULES
from flake8_no_apex.spellings import SPELLINGS
from probes import (
    Probe, binds, has_file, library_holds, member, mentions, parameter, text_anywhere, warns, warns_for_value)
from wheels import Release

# The release just before each boundary (by release date, on the same line).
PREVIOUS = {
    "pytorch-lightning": {"1.8.0": "1.7.7", "1.9.0": "1.8.6", "2.0.0": "1.9.5", "2.1.0": "2.0.9",
                          "2.1.1": "2.1.0", "2.2.0": "2.1.4"},
    "transformers": {"4.13.0": "4.12.5", "4.27.0": "4.26.1", "4.35.0": "4.34.1", "5.0.0": "4.57.6",
                     "5.8.0": "5.7.0"},
    "accelerate": {"0.6.0": "0.5.1", "0.16.0": "0.15.0", "0.17.0": "0.16.0", "0.19.0": "0.18.0",
                   "0.22.0": "0.21.0",
                   "1.0.0": "0.34.2"},
    "torch": {"1.10.0": "1.9.0", "1.12.0": "1.11.0", "2.0.0": "1.13.1", "2.1.0": "2.0.1", "2.3.0": "2.2.2",
              "2.4.0": "2.3.1"},
}
DIST = {"accelerate": "accelerate", "lightning": "pytorch-lightning", "torch": "torch", "transformers": "transformers"}
ACCELERATOR = "accelerate/accelerator.py"
PL = "pytorch_lightning/"
PLUGINS = PL + "plugins/__init__.py"
CONNECTOR = PL + "trainer/connectors/accelerator_connector.py"
DEEPSPEED = PL + "plugins/precision/deepspeed.py"
ARGS = "transformers/training_args.py"


@dataclass(frozen=True)
class Check:
    kind: str  # "deprecated": the probe (a warning) starts; "removed": it (the usage) ends;
    #            "replacement": it (the new spelling) starts
    version: str
    probe: Probe
    announced: Optional[str] = None  # the removal a warning announced, where the library changed its plan


def _fp16_backend_of_the_example() -> object:
    rule = next(r for r in RULES if r.code == "APX301")
    return next(k.value.value for n in ast.walk(ast.parse(rule.before)) if isinstance(n, ast.Call)
                for k in n.keywords if k.arg == "fp16_backend")


CHECKS: Dict[Tuple[str, str], Tuple[Check, ...]] = {
    ("APX002", "Trainer(amp_backend=...)"): (
        Check("deprecated", "1.9.0", warns(CONNECTOR, mentioning="amp_backend")),
        Check("removed", "2.0.0", parameter(PL + "trainer/trainer.py", "Trainer", "amp_backend")),
    ),
    ("APX003", "amp_level="): (
        Check("deprecated", "1.8.0", warns(CONNECTOR, mentioning="amp_level"),
              announced="1.10.0"),  # 1.9 re-announced it for 2.0, which removed it
        Check("removed", "2.0.0", parameter(PL + "trainer/trainer.py", "Trainer", "amp_level")),
    ),
    ("APX004", "ApexMixedPrecisionPlugin"): (
        Check("deprecated", "1.9.0", warns(PL + "plugins/precision/apex_amp.py", "ApexMixedPrecisionPlugin")),
        Check("removed", "2.0.0", binds(PLUGINS, "ApexMixedPrecisionPlugin")),
        Check("replacement", "1.9.0", binds(PLUGINS, "MixedPrecisionPlugin")),
    ),
    ("APX005", "DeepSpeedPrecisionPlugin(amp_type=...)"): (
        Check("deprecated", "1.9.0", warns(DEEPSPEED, mentioning="amp_type")),
        Check("removed", "2.0.0", parameter(DEEPSPEED, "DeepSpeedPrecisionPlugin", "amp_type")),
    ),
    ("APX006", "AMPType"): (
        Check("deprecated", "1.9.0", warns(PL + "utilities/enums.py", "AMPType")),
        Check("removed", "2.0.0", binds(PL + "utilities/enums.py", "AMPType")),
    ),
    ("APX006", "AMPType re-exports"): (
        Check("removed", "1.9.0", binds(PL + "utilities/__init__.py", "AMPType")),
    ),
    ("APX006", "Trainer.amp_backend read"): (
        Check("deprecated", "1.9.0", warns(PL + "trainer/trainer.py", "Trainer", "amp_backend")),
        Check("removed", "2.0.0", member(PL + "trainer/trainer.py", "Trainer", "amp_backend")),
    ),
    ("APX006", "_APEX_AVAILABLE"): (
        Check("removed", "1.9.0", binds(PL + "utilities/__init__.py", "_APEX_AVAILABLE")),
    ),
    ("APX006", "_APEX_AVAILABLE of the apex plugin"): (
        Check("removed", "2.0.0", binds(PL + "plugins/precision/apex_amp.py", "_APEX_AVAILABLE")),
    ),
    ("APX007", "`Native*` precision plugins"): (
        Check("deprecated", "1.9.0", warns(PL + "plugins/precision/native_amp.py", "NativeMixedPrecisionPlugin")),
        Check("removed", "2.0.0", binds(PLUGINS, "NativeMixedPrecisionPlugin")),
        Check("replacement", "1.9.0", binds(PLUGINS, "MixedPrecisionPlugin")),
    ),
    ("APX007", "FullyShardedNativeNativeMixedPrecisionPlugin"): (
        Check("removed", "2.0.0", binds(PLUGINS, "FullyShardedNativeNativeMixedPrecisionPlugin")),
        Check("replacement", "2.0.0", binds(PLUGINS, "FSDPMixedPrecisionPlugin")),
    ),
    ("APX007", "FSDPMixedPrecisionPlugin"): (
        Check("deprecated", "2.1.0", warns(PL + "plugins/precision/fsdp.py", "FSDPMixedPrecisionPlugin")),
        Check("replacement", "2.1.0", binds(PLUGINS, "FSDPPrecisionPlugin")),
    ),
    ("APX007", "`*Plugin` precision classes"): (
        Check("deprecated", "2.2.0", warns(PL + "_graveyard/precision.py", "_create_class")),
        Check("replacement", "2.1.1", binds(PLUGINS, "MixedPrecision")),
    ),
    ("APX007", "1.x base class precision.mixed.MixedPrecisionPlugin"): (
        Check("removed", "1.8.0", has_file(PL + "plugins/precision/mixed.py")),
    ),
    ("APX008", 'precision=16 and "bf16"'): (
        Check("deprecated", "2.0.0", text_anywhere("is supported for historical reasons but its usage is discouraged")),
        Check("replacement", "2.0.0", text_anywhere('"16-mixed"')),
    ),
    ("APX010", "precision=32 and 64"): (  # a legacy spelling: only the new one arrives, nothing warns
        Check("replacement", "2.0.0", text_anywhere('"32-true"')),
    ),
    ("APX009", "using_native_amp"): (
        Check("deprecated", "1.9.0", warns(PL + "loops/optimization/optimizer_loop.py", mentioning="using_native_amp")),
        Check("removed", "2.0.0", text_anywhere("using_native_amp")),
    ),
    ("APX107", "apex.optimizers.FusedAdam"): (
        Check("replacement", "2.0.0", parameter("torch/optim/adamw.py", "AdamW", "fused")),
    ),
    ("APX107", "apex.optimizers.FusedSGD"): (
        Check("replacement", "2.3.0", parameter("torch/optim/sgd.py", "SGD", "fused")),
    ),
    ("APX108", "apex.normalization autograd Functions"): (
        Check("replacement", "2.4.0", binds("torch/nn/functional.py", "rms_norm")),
    ),
    ("APX108", "apex.normalization.FusedRMSNorm"): (
        Check("replacement", "2.4.0", binds("torch/nn/modules/normalization.py", "RMSNorm")),
    ),
    ("APX201", "torch.cuda.amp.autocast"): (
        Check("deprecated", "2.4.0", warns("torch/cuda/amp/autocast_mode.py", "autocast")),
        Check("replacement", "1.12.0", has_file("torch/amp/autocast_mode.py")),
    ),
    ("APX202", "torch.cpu.amp.autocast"): (
        Check("deprecated", "2.4.0", warns("torch/cpu/amp/autocast_mode.py", "autocast")),
        Check("replacement", "1.12.0", has_file("torch/amp/autocast_mode.py")),
    ),
    ("APX203", "torch.cuda.amp.GradScaler"): (
        Check("deprecated", "2.4.0", warns("torch/cuda/amp/grad_scaler.py", "GradScaler", "__init__")),
        Check("replacement", "2.3.0", binds("torch/amp/__init__.py", "GradScaler")),
    ),
    ("APX204", "torch.cuda.amp.custom_fwd / custom_bwd"): (
        Check("deprecated", "2.4.0", warns("torch/cuda/amp/autocast_mode.py", "custom_fwd")),
        Check("replacement", "2.4.0", binds("torch/amp/__init__.py", "custom_fwd")),
    ),
    ("APX205", "torch.cuda.amp.grad_scaler internals"): (
        Check("removed", "2.3.0", binds("torch/cuda/amp/grad_scaler.py", "_refresh_per_optimizer_state")),
        Check("replacement", "2.3.0", binds("torch/amp/grad_scaler.py", "_refresh_per_optimizer_state")),
        Check("removed", "2.3.0", binds("torch/cuda/amp/grad_scaler.py", "_MultiDeviceReplicator")),
        Check("replacement", "2.3.0", binds("torch/amp/grad_scaler.py", "_MultiDeviceReplicator")),
        Check("removed", "2.3.0", binds("torch/cuda/amp/grad_scaler.py", "amp_definitely_not_available")),
    ),
    ("APX205", "torch.cuda.amp.grad_scaler.OptState"): (  # a legacy spelling: only the new home arrives
        Check("replacement", "2.3.0", binds("torch/amp/grad_scaler.py", "OptState")),
    ),
    ("APX205", "torch.cuda.amp.autocast_mode._cast"): (
        Check("deprecated", "2.4.0", warns("torch/cuda/amp/autocast_mode.py", "_cast")),
        Check("replacement", "2.4.0", parameter("torch/amp/autocast_mode.py", "_cast", "device_type", function=None)),
    ),
    ("APX206", "torch autocast state functions of one device"): (
        Check("deprecated", "2.4.0", library_holds("torch/lib/libtorch_python.dylib",
                                                   "torch.get_autocast_gpu_dtype() is deprecated")),
        Check("replacement", "2.4.0",
              mentions("torch/_C/__init__.pyi", "def get_autocast_dtype(device_type: str)")),
    ),
    ("APX401", "Accelerator(fp16=...)"): (
        Check("deprecated", "0.6.0", warns(ACCELERATOR, "Accelerator", "__init__", mentioning="fp16")),
        Check("removed", "0.16.0", parameter(ACCELERATOR, "Accelerator", "fp16")),
        Check("replacement", "0.6.0", parameter(ACCELERATOR, "Accelerator", "mixed_precision")),
    ),
    ("APX402", "Accelerator.use_fp16"): (
        Check("deprecated", "0.17.0", warns(ACCELERATOR, "Accelerator", "use_fp16")),
        Check("removed", "1.0.0", member(ACCELERATOR, "Accelerator", "use_fp16")),
        Check("replacement", "0.6.0", member(ACCELERATOR, "Accelerator", "mixed_precision")),
    ),
    ("APX403", "accelerator.autocast(cache_enabled=...)"): (
        Check("deprecated", "0.22.0", warns(ACCELERATOR, "Accelerator", "autocast", mentioning="cache_enabled"),
              announced="0.23.0"),  # it lasted until 1.0
        Check("removed", "1.0.0", parameter(ACCELERATOR, "Accelerator", "cache_enabled", function="autocast")),
        Check("replacement", "0.22.0", binds("accelerate/utils/__init__.py", "AutocastKwargs")),
    ),
    ("APX405", "accelerate launch --fp16"): (
        Check("deprecated", "0.6.0", warns("accelerate/commands/launch.py", mentioning="fp16")),
        Check("removed", "0.16.0", text_anywhere('"--fp16"')),
        Check("replacement", "0.6.0", text_anywhere('"--mixed_precision"')),
    ),
    ("APX404", "accelerate.utils.is_apex_available"): (
        Check("removed", "0.19.0", binds("accelerate/utils/__init__.py", "is_apex_available")),
    ),
    ("APX207", "torch.set_default_tensor_type"): (
        Check("deprecated", "2.1.0", library_holds("torch/lib/libtorch_python.dylib",
                                                   "torch.set_default_tensor_type() is deprecated")),
        Check("replacement", "2.0.0", binds("torch/__init__.py", "set_default_device")),
    ),
    ("APX301", "fp16_backend="): (
        Check("deprecated", "4.13.0", warns_for_value(ARGS, "fp16_backend", _fp16_backend_of_the_example())),
        Check("removed", "5.0.0", member(ARGS, "TrainingArguments", "fp16_backend")),
        Check("replacement", "4.13.0", member(ARGS, "TrainingArguments", "half_precision_backend")),
    ),
    ("APX302", 'half_precision_backend="apex"'): (
        Check("removed", "5.0.0", member(ARGS, "TrainingArguments", "half_precision_backend")),
    ),
    ("APX305", "half_precision_backend="): (
        Check("removed", "5.0.0", member(ARGS, "TrainingArguments", "half_precision_backend")),
        # dropping it is the replacement: native AMP became the only backend when the field went
        Check("replacement", "5.0.0", lambda release: not member(ARGS, "TrainingArguments",
                                                                 "half_precision_backend")(release)),
    ),
    ("APX303", "fp16_opt_level="): (
        Check("removed", "5.0.0", member(ARGS, "TrainingArguments", "fp16_opt_level")),
    ),
    ("APX306", "Trainer mixed-precision attributes removed in 5.0"): (
        Check("removed", "5.0.0", mentions("transformers/trainer.py", "self.use_apex")),
    ),
    ("APX306", "Trainer loss-scaling attributes removed in 4.35"): (
        Check("removed", "4.35.0", mentions("transformers/trainer.py", "self.do_grad_scaling")),
    ),
    ("APX304", 'optim="adamw_apex_fused"'): (
        Check("removed", "5.8.0", member(ARGS, "OptimizerNames", "ADAMW_APEX_FUSED")),
        Check("replacement", "4.27.0", member(ARGS, "OptimizerNames", "ADAMW_TORCH_FUSED")),
    ),
}
# Timeline versions no wheel can check here, and why.
CITED_ONLY = {
    ("APX601", 'DeepSpeed "amp" section'): "DeepSpeed publishes sdists that build against a CUDA torch, no wheel to "
    "read; the 0.19.8 sdist's deepspeed/runtime/config.py (raising DeepSpeedConfigError for \"amp\") is cited in DS-01",
    ("APX501", "mmcv 1.x fp16 utilities"): "mmcv publishes sdists that build extensions, no wheel to read; "
    "conformance/test_mmcv.py reads the boundary off mmcv's git tags (v1.7.2 has mmcv.runner, v2.0.0rc1 and v2.0.0 "
    "do not)",
    ("APX108", "apex.normalization.FusedLayerNorm"): "torch.nn.LayerNorm came with torch 0.4.0, older than any "
    "wheel for a Python this runs on; test_layer_norm_predates_the_oldest_wheel checks the oldest one has it",
    ("APX110", "other apex parts with a native equivalent"): "torch.nn.Linear and the activations are as old as "
    "torch; the oldest wheel read (1.9) has them, and 0.4 is the oldest release the research covers",
}


def _release_version(version: str) -> str:
    return str(Version(version)) if len(version.split(".")) > 2 else f"{version}.0"


def _covered(rule) -> set:
    timeline = rule.timeline
    return {_release_version(v) for v in (timeline.deprecated_in, timeline.removed_in, timeline.replacement_since) if v}


CHECKED = [rule for rule in RULES if (rule.code, rule.title) in CHECKS]


def test_every_versioned_rule_is_checked_at_each_of_its_boundaries():
    for rule in RULES:
        key = (rule.code, rule.title)
        if rule.timeline.library == "apex" or key in CITED_ONLY or not _covered(rule):
            assert key not in CHECKS or not _covered(rule)
            continue
        assert {check.version for check in CHECKS.get(key, ())} == _covered(rule), key


CASES = [(rule, check) for rule in CHECKED for check in CHECKS[(rule.code, rule.title)]]


@pytest.mark.parametrize("rule, check", CASES, ids=[f"{r.code}-{r.title}-{c.kind}-{c.version}" for r, c in CASES])
def test_boundary(rule, check):
    dist = DIST[rule.timeline.library]
    at, before = Release(dist, check.version), Release(dist, PREVIOUS[dist][check.version])
    starts = check.kind in ("deprecated", "replacement")
    assert check.probe(at) is starts, f"{check.kind} at {at}"
    assert check.probe(before) is not starts, f"{check.kind}: {before} is the release before"
    if check.kind == "deprecated" and isinstance(check.probe, warns):
        assert_versions_named_agree(rule, check, check.probe.messages(at))


def assert_versions_named_agree(rule, check: Check, messages) -> None:
    """The versions a warning names ("deprecated in v1.9.0 and will be removed in v2.0.0", "in
    version 5") are the rule's."""
    timeline = rule.timeline
    for text in messages:
        for named in re.findall(r"(?:deprecated|renamed) in v(\d+\.\d+\.\d+)", text):
            assert named == _release_version(timeline.deprecated_in), text
        for named in re.findall(r"removed in v(\d+\.\d+\.\d+)", text):
            assert named == (check.announced or _release_version(timeline.removed_in)), text
        for named in re.findall(r"removed in version (\d+)", text):
            assert int(named) == Version(timeline.removed_in).major, text


def test_layer_norm_predates_the_oldest_wheel():
    assert binds("torch/nn/modules/normalization.py", "LayerNorm")(Release("torch", "1.11.0"))


def test_adamw_apex_fused_and_adamw_torch_fused_get_the_same_arguments():
    """APX304's fix is safe: in the last release with both (5.7.0), transformers builds apex's
    FusedAdam (AdamW unless adam_w_mode=False) and torch's fused AdamW from the same kwargs."""
    tree = ast.parse(Release("transformers", "5.7.0").source("transformers/trainer_optimizer.py"))
    returned = {}
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for node in ast.walk(function):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                returned[function.name] = ast.unparse(node.value.elts[1])
    assert returned["_get_adamw_apex_fused"] == returned["_get_adamw_torch"] == "ctx.optimizer_kwargs"


def _spelled_api(library: str, text: str) -> Optional[Probe]:
    """What must exist for an advice spelling: a torch function or class, a Lightning class, or a
    precision value; None for a value every release accepts (an int, a strategy name)."""
    if text.startswith('"'):
        return text_anywhere(text)
    head = _head(text)
    if library == "torch":
        *module, name = head.split(".")
        return binds("/".join(module) + "/__init__.py", name)
    if head[0].isupper():
        return binds(PLUGINS, head)
    return None


def _head(text: str) -> str:
    """The name a spelling calls or is: `torch.amp.GradScaler` of `torch.amp.GradScaler("cuda")`."""
    return re.match(r"[\w.]*", text).group()


STEPS = [(name, since, text, following, previous)
         for name, (library, steps) in SPELLINGS.items()
         for (since, text), following, previous in zip(steps, [*(s for s, _ in steps[1:]), None],
                                                       [None, *(t for _, t in steps[:-1])])]


@pytest.mark.parametrize("name, since, text, following, previous", STEPS,
                         ids=[f"{step[0]}-{step[1] or 'oldest'}" for step in STEPS])
def test_advice_spelled_for_a_release_exists_in_it(name, since, text, following, previous):
    """Advice for a project whose oldest release is `since` names what that release has (and,
    for an API that arrived then, the release before lacks); the oldest spelling is checked in
    the release before the next one."""
    library = SPELLINGS[name][0]
    dist = DIST[library]
    probe = _spelled_api(library, text)
    if probe is None:
        return
    at = Release(dist, _release_version(since) if since else PREVIOUS[dist][_release_version(following)])
    assert probe(at), f"{text} in {at}"
    renamed = previous is not None and _head(previous) != _head(text)  # not only new arguments
    if since and renamed and (library == "torch" or text[0].isupper()):
        before = Release(dist, PREVIOUS[dist][_release_version(since)])
        assert not probe(before), f"{text} already in {before}: the spelling could start earlier"
