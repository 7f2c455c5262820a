"""Names are resolved, not grepped: aliases, scopes, shims and look-alikes per family."""
from __future__ import annotations

import inspect
import sys

import pytest
from packaging.version import Version

from helpers import CONDITIONAL_AUTOCAST, check_no_findings, codes, messages, report

from flake8_no_apex.fixer import fix_text


# --- torch ---------------------------------------------------------------------------------
def test_torch_import_lines_bind_and_report_each_name():
    assert report("from torch.cuda.amp import autocast, GradScaler\n") == [(1, 28, "APX201"), (1, 38, "APX203")]


def test_torch_aliases_every_spelling():
    assert report(
        """
        import torch as th
        import torch.cuda.amp as tca
        from torch.cuda import amp
        th.cuda.amp.GradScaler()
        tca.autocast()
        amp.autocast()
        with amp.autocast(enabled=False):
            pass
        """
    ) == [(5, 1, "APX203"), (6, 1, "APX201"), (7, 1, "APX201"), (8, 6, "APX201")]


def test_torch_reference_without_call_decorators_and_subclasses():
    assert codes(
        """
        import torch
        ctx = torch.cuda.amp.autocast
        @torch.cuda.amp.custom_fwd
        def f(x):
            return x
        class S(torch.cuda.amp.GradScaler):
            pass
        """
    ) == ["APX201", "APX204", "APX203"]


def test_positional_trap_in_the_advice():
    (message,) = messages("import torch\nwith torch.cuda.amp.autocast(use_amp):\n    pass\n")
    assert message == (
        "APX201 torch.cuda.amp.autocast(...) is deprecated since torch 2.4; "
        'use torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16, cache_enabled=True)'
    )
    (message,) = messages("import torch\ntorch.cuda.amp.autocast(True, torch.bfloat16, cache_enabled=False)\n")
    assert message.endswith(
        'use torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16, cache_enabled=False)'
    )
    (message,) = messages("import torch\ntorch.cuda.amp.autocast(*args)\n")
    assert message.endswith('use torch.amp.autocast("cuda", ...)')


def test_custom_fwd_bare_decorator_needs_device_type():
    (message,) = messages("import torch\n@torch.cuda.amp.custom_bwd\ndef b(ctx, g):\n    return g\n")
    assert message.endswith('use @torch.amp.custom_bwd(device_type="cuda")')


def test_cpu_grad_scaler_gets_cpu_device():
    (message,) = messages("import torch\ns = torch.cpu.amp.GradScaler()\n")
    assert message.startswith("APX203 torch.cpu.amp.GradScaler(...)")
    assert message.endswith('use torch.amp.GradScaler("cpu")')


def test_torch_parameter_and_local_shadow_the_module():
    check_no_findings(
        """
        import torch
        def f(torch):
            return torch.cuda.amp.autocast()
        def g():
            torch = load()
            return torch.cuda.amp.GradScaler()
        def h():
            amp = make()
            return amp.autocast()
        lam = lambda torch: torch.cuda.amp.autocast()
        values = [torch.cuda.amp.autocast() for torch in modules]
        """
    )


def test_function_sees_module_imports_made_after_it():
    assert codes("def f():\n    return tca.autocast()\nimport torch.cuda.amp as tca\n") == ["APX201"]


def test_class_attribute_is_not_visible_in_methods():
    check_no_findings(
        """
        import torch
        class C:
            torch = None
            def m(self, torch):
                return torch.cuda.amp.autocast()
        """
    )


def test_star_import_binds_deprecated_names():
    assert report("from torch.cuda.amp import *\nwith autocast():\n    pass\n") == [(2, 6, "APX201")]


def test_migrated_torch_code_is_clean():
    check_no_findings(
        """
        import torch
        from torch.amp import autocast, GradScaler
        with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True), torch.autocast(device_type="cuda"):
            scaler = torch.amp.GradScaler("cuda")
        torch.cuda.amp.common.amp_definitely_not_available()
        """
    )


def test_other_libraries_autocast_and_grad_scaler_are_not_ours():
    check_no_findings(
        """
        from torch_xla.amp import autocast, GradScaler
        import paddle
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        with autocast(device):
            scaler = GradScaler()
        s = paddle.amp.GradScaler()
        """
    )


def test_compatibility_shim_is_not_reported_and_binds_the_new_name():
    check_no_findings(
        """
        try:
            from torch.amp import autocast, GradScaler
        except ImportError:
            from torch.cuda.amp import autocast, GradScaler
        with autocast("cuda"):
            pass
        """
    )
    check_no_findings(
        """
        import torch
        try:
            scaler = torch.amp.GradScaler(device="cuda")
        except (AttributeError, TypeError):
            scaler = torch.cuda.amp.GradScaler()
        """
    )


def test_the_new_spelling_is_seen_inside_calls_and_subscripts_of_a_chain():
    """A block is the new half of a shim when any attribute chain in it reaches the new
    spelling, also one inside a call or a subscript that another chain starts from."""
    for new in ('functools.partial(torch.amp.autocast, "cuda").func', 'spellings[torch.amp.GradScaler].cls'):
        check_no_findings(
            f"""
            import functools
            import torch
            try:
                thing = {new}
            except AttributeError:
                thing = torch.cuda.amp.autocast
            """
        )


def test_try_without_new_spelling_is_no_shim():
    assert codes("try:\n    import foo\nexcept ImportError:\n    from torch.cuda.amp import autocast\n") == ["APX201"]


def test_strings_comments_and_docstrings_are_ignored():
    check_no_findings(
        '''
        """Uses torch.cuda.amp.autocast and from apex import amp."""
        # amp.initialize(model, optimizer)
        text = "torch.cuda.amp.GradScaler()"
        parser.add_argument("--amp", help="use apex amp.initialize; amp_backend=apex")
        '''
    )


# --- apex ----------------------------------------------------------------------------------
def test_apex_aliases_reach_use_sites():
    assert report(
        """
        from apex import amp as A
        import apex
        model, opt = A.initialize(model, opt, opt_level="O1")
        with apex.amp.scale_loss(loss, opt) as s:
            s.backward()
        """
    ) == [(2, 18, "APX001"), (3, 8, "APX001"), (4, 14, "APX101"), (5, 6, "APX102")]


def test_apex_import_forms():
    assert report("import apex.amp as amp\n") == [(1, 8, "APX001")]
    assert report("from apex.parallel import DistributedDataParallel as DDP, convert_syncbn_model\n") == [
        (1, 1, "APX001")
    ]
    assert report("from apex import amp, optimizers\n") == [(1, 18, "APX001")]
    assert report("import apex.RNN\n") == [(1, 8, "APX001")]


def test_apex_message_names_submodule_and_replacement():
    (message,) = messages("from apex.parallel import SyncBatchNorm\n")
    assert message == (
        "APX001 apex.parallel was removed in NVIDIA apex 25.07; "
        "use torch.nn.parallel.DistributedDataParallel and torch.nn.SyncBatchNorm"
    )


def test_bare_apex_import_with_only_maintained_parts_is_fine():
    maintained_only = "import apex\nopt = apex.optimizers.FusedAdam(p)\nnorm = apex.normalization.FusedLayerNorm(8)\n"
    assert codes(maintained_only) == ["APX107", "APX108"]  # off by default in flake8
    assert codes("import apex\nopt = apex.optimizers.FusedAdam(p)\napex.parallel.convert_syncbn_model(m)\n") == [
        "APX001", "APX107", "APX105"
    ]


def test_apex_use_sites_through_from_imports():
    assert codes(
        """
        from apex.parallel import DistributedDataParallel as DDP, SyncBatchNorm
        from apex.fp16_utils import FP16_Optimizer
        model = DDP(model, delay_allreduce=True)
        bn = SyncBatchNorm(64)
        opt = FP16_Optimizer(opt)
        """
    ) == ["APX001", "APX001", "APX104", "APX105", "APX106"]


def test_amp_that_is_not_apex():
    check_no_findings(
        """
        import numpy as np
        from amp import Amp
        amp = np.abs(stft)
        amp.initialize()
        apex = {"amp": 1}
        apex["amp"].initialize()
        class FusedLayerNorm:
            pass
        FusedLayerNorm(8)
        """
    )


def test_apex_import_in_try_is_still_reported():
    assert codes("try:\n    from apex import amp\nexcept ImportError:\n    amp = None\namp.initialize(m)\n") == [
        "APX001", "APX101"
    ]


# --- Lightning -----------------------------------------------------------------------------
def test_trainer_keywords_on_every_lightning_spelling():
    assert codes(
        """
        import pytorch_lightning as pl
        import lightning as L
        from lightning.pytorch import Trainer
        pl.Trainer(amp_backend="apex", amp_level="O2")
        L.Trainer(amp_backend="native")
        Trainer(precision=16)
        L.pytorch.Trainer(precision="bf16")
        """
    ) == ["APX002", "APX003", "APX002", "APX008", "APX008"]


def test_amp_backend_in_wrappers_dicts_and_argv():
    assert report(
        """
        import pytorch_lightning as pl
        kwargs = dict(amp_backend="apex")
        config = {"trainer": {"amp_level": "O2"}}
        trainer = make_trainer(amp_backend="native")
        args = parser.parse_args(["--amp_backend=apex", "--amp_level", "O2"])
        """
    ) == [(3, 15, "APX002"), (4, 23, "APX003"), (5, 24, "APX002"), (6, 27, "APX002"), (6, 49, "APX003")]


def test_amp_keywords_outside_lightning_modules_are_not_ours():
    check_no_findings(
        """
        from nemo import Trainer
        cfg = dict(amp_level="O1")
        Trainer(amp_backend="apex")
        argv = ["--amp_backend", "apex"]
        """
    )


def test_precision_only_on_resolved_lightning_calls():
    assert codes(
        """
        import numpy as np
        import torch
        import pytorch_lightning as pl
        np.set_printoptions(precision=16)
        torch.set_printoptions(precision=16)
        trainer = pl.Trainer(precision=16)
        fabric_cls = pl.Trainer
        fabric_cls(precision=64)
        pl.Trainer(precision="16-mixed")
        """
    ) == ["APX008", "APX010"]


def test_precision_messages_say_what_lightning_does():
    """16 and "bf16" get Lightning's UserWarning, quoted; 32 and 64 no warning at all (not deprecated)."""
    (message,) = messages('from lightning import Fabric\nFabric(precision="bf16")\n')
    assert message == ('APX008 precision="bf16" is "supported for historical reasons but its usage is discouraged" '
                       'since Lightning 2.0; use precision="bf16-mixed"')
    (message,) = messages('from lightning import Trainer\nTrainer(precision=64)\n')
    assert message == ('APX010 precision=64 is a legacy spelling (accepted without a warning) since Lightning 2.0; '
                       'use precision="64-true"')
    assert "deprecated" not in message


def test_amp_backend_message_matches_the_documented_one():
    (message,) = messages('from pytorch_lightning import Trainer\nTrainer(amp_backend="apex")\n')
    assert message == (
        "APX002 Trainer(amp_backend=...) was removed in Lightning 2.0; "
        'drop it (native AMP is the only backend) and set precision="16-mixed"'
    )


def test_lightning_classes_at_import_call_subclass_isinstance():
    assert report(
        """
        from pytorch_lightning.plugins import ApexMixedPrecisionPlugin as Apex
        import lightning.pytorch as pl
        p = Apex(amp_level="O2")
        class Mine(pl.plugins.precision.ApexMixedPrecisionPlugin):
            pass
        isinstance(p, Apex)
        """
    ) == [(2, 39, "APX004"), (4, 5, "APX004"), (4, 10, "APX003"), (5, 12, "APX004"), (7, 15, "APX004")]


def test_renamed_plugins_name_their_current_class():
    assert messages("from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n") == [
        "APX007 pytorch_lightning.plugins.NativeMixedPrecisionPlugin was removed in Lightning 2.0; use MixedPrecision"
    ]
    assert messages("from lightning.pytorch.plugins.precision import FSDPMixedPrecisionPlugin\n") == [
        "APX007 lightning.pytorch.plugins.precision.FSDPMixedPrecisionPlugin is deprecated since Lightning 2.1; "
        "use FSDPPrecision without the device argument"
    ]


def test_plugin_suffix_classes_warn_from_2_2_and_are_renamed_from_2_1_1():
    """2.1.1 has the new names with the old ones as silent aliases; 2.2.0 starts warning."""
    source = "from lightning.pytorch.plugins import MixedPrecisionPlugin\n"
    assert messages(source) == ["APX007 lightning.pytorch.plugins.MixedPrecisionPlugin is deprecated since "
                                "Lightning 2.2; use MixedPrecision"]
    assert codes(source, floors={"lightning": Version("2.1.1")}) == ["APX007"]
    assert codes(source, floors={"lightning": Version("2.1.0")}) == []


def test_fsdp_mixed_precision_plugin_is_named_for_the_target():
    source = "from lightning.pytorch.plugins import FSDPMixedPrecisionPlugin\n"
    assert messages(source, floors={"lightning": Version("2.1.0")})[0].endswith(
        "use FSDPPrecisionPlugin without the device argument")
    assert codes(source, floors={"lightning": Version("2.0.9")}) == []
    old = ("from pytorch_lightning.plugins.precision.fsdp_native_native_amp import "
           "FullyShardedNativeNativeMixedPrecisionPlugin\n")
    assert messages(old, floors={"lightning": Version("2.0")})[0].endswith("use FSDPMixedPrecisionPlugin")


def test_amp_type_re_export_broke_in_1_9_and_only_the_enums_module_warned():
    (reexport,) = messages("from pytorch_lightning.utilities import AMPType\n", floors={"lightning": Version("1.9")})
    assert "pytorch_lightning.utilities.AMPType was removed in Lightning 1.9;" in reexport
    (enum,) = messages("from pytorch_lightning.utilities.enums import AMPType\n", floors={"lightning": Version("1.9")})
    assert "pytorch_lightning.utilities.enums.AMPType is deprecated since Lightning 1.9;" in enum


def test_apex_available_advice_never_raises_without_apex():
    """find_spec("apex.amp") raises ModuleNotFoundError when apex is absent, and any probe of
    apex.amp is itself an APX001 finding: the advice is to delete the guard."""
    for module in ("pytorch_lightning.utilities", "pytorch_lightning.plugins.precision.apex_amp"):
        (message,) = messages(f"from {module} import _APEX_AVAILABLE\n")
        assert "apex.amp\")" not in message
        assert "delete the guard" in message


def test_the_1_x_mixed_base_class_is_not_the_native_plugin():
    """`precision.mixed.MixedPrecisionPlugin` (1.5-1.7) was the apex/native base class, not a rename."""
    (message,) = messages("from pytorch_lightning.plugins.precision.mixed import MixedPrecisionPlugin\n")
    assert message.startswith("APX007 pytorch_lightning.plugins.precision.mixed.MixedPrecisionPlugin was removed "
                              "in Lightning 1.8; use isinstance(plugin, MixedPrecision) to test")


def test_amp_type_and_amp_backend_reads():
    assert codes(
        """
        from pytorch_lightning.utilities.enums import AMPType
        import pytorch_lightning as pl
        class Cb(pl.Callback):
            def on_fit_start(self, trainer, pl_module):
                if trainer.amp_backend == AMPType.APEX or self.trainer.amp_backend == "apex":
                    pass
        """
    ) == ["APX006", "APX006", "APX006", "APX006"]


def test_amp_backend_attribute_on_non_trainers():
    check_no_findings("import pytorch_lightning as pl\nbackend = config.amp_backend\nself.amp_backend = 'native'\n")
    check_no_findings("backend = trainer.amp_backend\n")


def test_deepspeed_positional_forms():
    assert report(
        'from pytorch_lightning.plugins import DeepSpeedPrecisionPlugin as DS\nDS(16, "apex", "O2")\n'
    ) == [(1, 39, "APX007"), (2, 1, "APX007"), (2, 8, "APX005"), (2, 16, "APX003")]


def test_optimizer_step_override_with_using_native_amp():
    assert report(
        """
        import pytorch_lightning as pl
        class M(pl.LightningModule):
            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0,
                               optimizer_closure=None, on_tpu=False, using_native_amp=False,
                               using_lbfgs=False):
                super().optimizer_step(epoch, batch_idx, optimizer, using_native_amp=using_native_amp)
        """
    ) == [(5, 62, "APX009"), (7, 61, "APX009")]


def test_functools_partial_and_local_subclass_resolve_to_trainer():
    assert codes(
        """
        import functools
        from pytorch_lightning import Trainer
        class MyTrainer(Trainer):
            pass
        MyTrainer(precision=16)
        make = functools.partial(Trainer, precision="16")
        """
    ) == ["APX008", "APX008"]


# --- transformers --------------------------------------------------------------------------
def test_training_arguments_forms():
    assert report(
        """
        from transformers import TrainingArguments, Seq2SeqTrainingArguments as S2S
        a = TrainingArguments("out", fp16=True, fp16_backend="apex", fp16_opt_level="O2")
        b = S2S("out", half_precision_backend="apex", optim="adamw_apex_fused")
        c = dict(fp16_backend="auto")
        d = {"half_precision_backend": "apex"}
        argv = ["--fp16_opt_level", "O1", "--optim=adamw_apex_fused"]
        """
    ) == [
        (3, 41, "APX301"), (3, 41, "APX302"), (3, 62, "APX303"),
        (4, 16, "APX302"), (4, 47, "APX304"),
        (5, 10, "APX301"),
        (6, 6, "APX302"),
        (7, 9, "APX303"), (7, 35, "APX304"),
    ]


def test_transformers_migrated_and_unrelated_code():
    check_no_findings(
        """
        from transformers import TrainingArguments
        TrainingArguments("out", fp16=True, optim="adamw_torch_fused")
        other(fp16_backend="apex")
        """
    )
    check_no_findings('config = {"fp16_backend": "apex"}\nargv = ["--fp16_backend", "apex"]\n')


def test_findings_are_sorted_and_unique():
    found = report("import pytorch_lightning as pl\npl.Trainer(**{'amp_backend': 'apex', 'precision': 16})\n")
    assert found == [(2, 15, "APX002"), (2, 38, "APX008")]


def test_dynamic_imports_and_availability_checks_of_apex():
    assert report(
        """
        import importlib
        import importlib.util
        from lightning_utilities.core.imports import RequirementCache, module_available
        amp = importlib.import_module("apex.amp")
        parallel = __import__("apex.parallel")
        HAS_APEX = importlib.util.find_spec("apex") is not None
        APEX = RequirementCache("apex")
        APEX_AMP = module_available("apex.amp")
        """
    ) == [(5, 31, "APX001"), (6, 23, "APX001"), (7, 37, "APX001"), (8, 25, "APX001"), (9, 29, "APX001")]
    check_no_findings('import importlib\nimportlib.import_module("apex.optimizers")\nload("apex.amp")\n')


def test_aliased_bare_apex_import():
    assert report("import apex as ax\nax.amp.initialize(m)\n") == [(1, 8, "APX001"), (2, 1, "APX101")]


def test_import_findings_stand_at_the_imported_names():
    source = (
        "from torch.cuda.amp import (\n"
        "    GradScaler,  # the scaler\n"
        "    autocast as ac,\n"
        ")\n"
        "import os, apex.amp as amp\n"
        "from apex import optimizers, amp\n"
    )
    assert report(source) == [(2, 5, "APX203"), (3, 5, "APX201"), (5, 12, "APX001"), (6, 30, "APX001")]


def test_a_long_elif_chain_is_walked_as_a_loop():
    """Each `elif` is an `if` inside its parent's `else`: a generated dispatcher of a few hundred
    branches would nest a recursive walk deeper than Python's recursion limit ("cannot analyse").
    Here 150 branches get 100 frames above the test's own: a recursion takes three per branch."""
    branches = "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, 150))
    source = f"import torch\nif x == 0:\n    y = 0\n{branches}else:\n    s = torch.cuda.amp.GradScaler()\n"
    shim = source.replace("y = 7\n", "y = torch.amp.GradScaler('cuda')\n")  # a branch with the new spelling
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 100)
    try:
        found, dual = report(source), fix_text(shim)
    finally:
        sys.setrecursionlimit(limit)
    assert found == [(303, 9, "APX203")]
    assert not dual.fixed and [(f.line, f.code) for f in dual.remaining] == [(303, "APX203")]  # in a dual path


def test_a_long_sum_is_walked_as_a_loop():
    """`a + b + ...` nests a level per operator: 600 terms were "cannot analyse" (two frames a
    level), where Python compiles them; fix compiles a result too deep for `compile` to take
    as a tree (it counts Python's frames) from its text."""
    source = "import torch\nx = " + " + ".join(f"'p{i}'" for i in range(600)) + "\ns = torch.cuda.amp.GradScaler()\n"
    assert report(source) == [(3, 5, "APX203")]
    assert [f.code for f in fix_text(source).fixed] == ["APX203"]
    deeper = source.replace("'p0'", " + ".join(f"'q{i}'" for i in range(1000)))  # a tree compile() cannot take
    assert [f.code for f in fix_text(deeper).fixed] == ["APX203"]
    # parsed whole (the grammar's future import takes the module whole) and compiled from its text
    whole = "from __future__ import barry_as_FLUFL\n" + deeper
    assert [f.code for f in fix_text(whole).fixed] == ["APX203"]


def test_an_elif_chain_reads_later_branches_with_the_bindings_of_the_moment():
    """Whether the rest of a chain has the new spelling is read once for the whole chain, and read
    again when a name it went through was rebound on the way (here `a` in the first branch): the
    `else` no longer names torch.amp when the second branch is reached, so that branch is no
    half of a shim and its old spelling is fixed."""
    source = ("import torch\nfrom torch import amp as a\nif x == 0:\n    a = make()\n"
              "elif x == 1:\n    s = torch.cuda.amp.GradScaler()\nelse:\n    s = a.GradScaler()\n")
    assert [f.code for f in fix_text(source).fixed] == ["APX203"]


def test_version_guarded_fallback_is_a_shim_either_way_round():
    check_no_findings(
        """
        import torch
        from packaging import version
        if version.parse(torch.__version__) >= version.parse("2.4"):
            from torch.amp import custom_fwd
        else:
            from torch.cuda.amp import custom_fwd
        @custom_fwd(device_type="cuda")
        def f(x):
            return x
        """
    )
    check_no_findings(
        """
        import torch
        if not hasattr(torch, "amp"):
            scaler = torch.cuda.amp.GradScaler()
        else:
            scaler = torch.amp.GradScaler("cuda")
        """
    )


def test_plain_if_else_is_no_shim():
    assert codes(
        """
        import torch
        if use_amp:
            ctx = torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True)
        else:
            ctx = torch.cuda.amp.autocast()
        if TORCH_VERSION >= (2, 4):
            pass
        else:
            scaler = torch.cuda.amp.GradScaler()
        """
    ) == ["APX201", "APX203"]


def test_lightning_and_transformers_names_can_be_shadowed_too():
    check_no_findings(
        """
        import pytorch_lightning as pl
        from transformers import TrainingArguments
        def build(pl, TrainingArguments):
            pl.Trainer(precision=16)
            TrainingArguments("out", optim="adamw_apex_fused")
            return pl.plugins.ApexMixedPrecisionPlugin()
        """
    )


def test_a_name_bound_to_two_things_resolves_to_neither():
    assert report(CONDITIONAL_AUTOCAST) == [(6, 24, "APX201")]  # the assignment, not the use
    assert report(
        """
        autocast = suppress
        if flag:
            from torch.cuda.amp import autocast
        with autocast():
            pass
        """
    ) == [(4, 32, "APX201")]


def test_one_alias_per_scope_still_resolves():
    assert codes(
        """
        import torch
        def main():
            amp_autocast = torch.cuda.amp.autocast
            with amp_autocast():
                pass
        """
    ) == ["APX201", "APX201"]


def test_half_precision_backend_is_reported_for_5_x_targets_only():
    """The current spelling on 4.x; a TypeError from 5.0 (and "apex" is APX302 everywhere)."""
    source = 'from transformers import TrainingArguments\nTrainingArguments("o", half_precision_backend="auto")\n'
    assert codes(source) == ["APX305"]
    assert codes(source, floors={"transformers": Version("5.0")}) == ["APX305"]
    assert codes(source, floors={"transformers": Version("4.57")}) == []
    assert codes(source.replace('"auto"', '"apex"')) == ["APX302"]


@pytest.mark.parametrize("condition, reported", [
    ("torch_version_at_least('1.10')", True),  # the deprecated spelling in the branch new releases take
    ("torch.__version__ < '1.10'", False),  # ... in the branch old releases take: a fallback
    ("not _TORCH_GREATER_EQUAL_1_10", False),
    ("use_half and torch_version_at_least('1.10')", True),  # mixed tests: no version check
])
def test_a_deprecated_spelling_is_a_fallback_only_in_the_old_releases_branch(condition, reported):
    source = (f"import torch\nif {condition}:\n    with torch.cuda.amp.autocast():\n        pass\n"
              "else:\n    with torch.autocast('cuda'):\n        pass\n")
    assert codes(source) == (["APX201"] if reported else [])


def test_a_local_subclass_is_reported_once_at_its_class_statement():
    assert report(
        """\
        import pytorch_lightning as pl
        class MyAmpPlugin(pl.plugins.NativeMixedPrecisionPlugin):
            pass
        p = MyAmpPlugin(16, "cuda")
        ok = isinstance(p, MyAmpPlugin)
        """
    ) == [(2, 19, "APX007")]


def test_new_patterns_keep_the_precision_traps_silent():
    check_no_findings('import mindspore\nconfig = {}\nconfig["amp_level"] = "O2"\n')
    check_no_findings('import paddle\nparams = {"amp_level": "O1" if fast else "O0"}\n')
    check_no_findings('import numpy as np\nnp.set_printoptions(precision=16 if verbose else 8)\n')
    check_no_findings('salesforce = {"apex_class": "MyApexClass"}\nfrom mylib.mlp import MLP\n')


@pytest.mark.parametrize("source, expected", [
    # a launcher's command line: the script's options, whether or not the launcher imports its library
    ('import subprocess, sys\nsubprocess.run([sys.executable, "train.py", "--amp_backend", "apex"])\n', ["APX002"]),
    ('cmd = ["torchrun", "--nproc_per_node", "2", "-m", "pkg.train", "--fp16_opt_level", "O2"]\n', ["APX303"]),
    ('cmd = ["python", "run_glue.py", "--amp_level=O2"]\n', ["APX003"]),
    # not a command that starts a script, or the option is the launcher's own words
    ('flags = ["--amp_backend", "apex"]\n', []),
    ('cmd = ["echo", "train.py", "--amp_backend", "apex"]\n', []),
    ('cmd = ["accelerate", "launch", "train.py", "--fp16"]\n', []),  # the script's --fp16
    ('cmd = ["accelerate", "launch", "-m", "pkg.train", "--fp16"]\n', []),
])
def test_removed_flags_in_a_command_line_that_starts_a_script(source, expected):
    assert codes(source) == expected


def test_maintained_apex_names_are_reported_where_they_are_used():
    """APX110 (opt-in): a team removing apex changes every use of a contrib name, not the import only."""
    source = """\
    from apex.contrib.optimizers.distributed_fused_adam import DistributedFusedAdam
    from apex.contrib.layer_norm.layer_norm import FastLayerNormFN
    import apex.contrib.layer_norm as ln
    from apex.optimizers import FusedAdam
    ok = isinstance(opt, DistributedFusedAdam)
    y = FastLayerNormFN.apply(x, w, b, 1e-5)
    z = ln.FastLayerNorm(8)
    FusedAdam(params)
    """
    assert [(line, column) for line, column, code in report(source) if code == "APX110"] == [
        (1, 1), (2, 1), (3, 8), (5, 22), (6, 5), (7, 5)]
