"""The fixer: minimal edits, graded, import-aware, layout-preserving, idempotent."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from packaging.version import Version

from flake8_no_apex import fixer, noqa
from flake8_no_apex.checker import check_tree
from flake8_no_apex.fixer import FixError, fix_text
from flake8_no_apex.rules import PYTHON_RULES, RULES
from helpers import CONDITIONAL_AUTOCAST

FIXTURES = Path(__file__).parent / "fixtures"


def check_transformed(before: str, after: str, **options) -> None:
    before, after = textwrap.dedent(before), textwrap.dedent(after)
    result = fix_text(before, **options)
    assert result.text == after
    ast.parse(result.text)
    assert fix_text(result.text, **options).text == result.text, "a second run changes nothing"


def check_unchanged(source: str, **options) -> None:
    source = textwrap.dedent(source)
    assert fix_text(source, **options).text == source


# --- torch -----------------------------------------------------------------------------------
def test_autocast_positional_arguments_become_keywords():
    check_transformed(
        """\
        import torch

        with torch.cuda.amp.autocast(use_amp):
            pass
        with torch.cuda.amp.autocast(True, torch.bfloat16, cache_enabled=False):
            pass
        """,
        """\
        import torch

        with torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16, cache_enabled=True):
            pass
        with torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16, cache_enabled=False):
            pass
        """,
    )


def test_calls_are_unsafe_where_the_module_checks_the_old_class():
    """torch.cuda.amp.GradScaler subclasses torch.amp.GradScaler: a fixed construction would fail
    an isinstance check of the old class (checked on torch 2.13 by the conformance group)."""
    source = textwrap.dedent(
        """\
        import torch

        scaler = torch.cuda.amp.GradScaler()
        assert isinstance(scaler, torch.cuda.amp.GradScaler)
        """
    )
    check_unchanged(source)
    assert 'scaler = torch.amp.GradScaler("cuda")' in fix_text(source, unsafe=True).text
    check_transformed(  # a check of the new class is no obstacle
        "import torch\ns = torch.cuda.amp.GradScaler()\nok = isinstance(s, torch.amp.GradScaler)\n",
        'import torch\ns = torch.amp.GradScaler("cuda")\nok = isinstance(s, torch.amp.GradScaler)\n',
    )


def test_imported_names_are_rewritten_and_their_import_removed():
    check_transformed(
        """\
        \"\"\"Training.\"\"\"
        import os
        from torch.cuda.amp import GradScaler, autocast


        @autocast()
        def forward(x):
            return x


        scaler = GradScaler(2.0**16, enabled=os.environ.get("AMP") == "1")
        """,
        """\
        \"\"\"Training.\"\"\"
        import os
        import torch


        @torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True)
        def forward(x):
            return x


        scaler = torch.amp.GradScaler("cuda", 2.0**16, enabled=os.environ.get("AMP") == "1")
        """,
    )


def test_module_aliases_reuse_an_existing_torch_name():
    check_transformed(
        """\
        import torch as th
        import torch.cuda.amp as tca
        from torch.cuda import amp

        s = th.cuda.amp.GradScaler()
        with tca.autocast():
            pass
        with amp.autocast(dtype=th.float16):
            pass
        """,
        """\
        import torch as th

        s = th.amp.GradScaler("cuda")
        with th.amp.autocast("cuda", dtype=th.float16, cache_enabled=True):
            pass
        with th.amp.autocast("cuda", dtype=th.float16, cache_enabled=True):
            pass
        """,
    )


def test_custom_fwd_bare_and_called_and_cpu_autocast():
    check_transformed(
        """\
        import torch
        from torch.cuda.amp import custom_bwd, custom_fwd


        class F(torch.autograd.Function):
            @staticmethod
            @custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, x):
                with torch.cpu.amp.autocast():
                    return x

            @staticmethod
            @custom_bwd
            def backward(ctx, g):
                return g
        """,
        """\
        import torch


        class F(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
            def forward(ctx, x):
                with torch.amp.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):
                    return x

            @staticmethod
            @torch.amp.custom_bwd(device_type="cuda")
            def backward(ctx, g):
                return g
        """,
    )


def test_what_cannot_be_fixed_safely_is_left_and_reported():
    source = """\
        import torch
        from torch.cuda import amp
        ctx_factory = torch.cuda.amp.autocast  # a later positional call would change meaning
        isinstance(s, torch.cuda.amp.GradScaler)
        class S(torch.cuda.amp.GradScaler):
            pass
        with amp.autocast(*flags):
            pass
        def f(torch):
            return amp.autocast()  # `torch` here is a parameter
        """
    check_unchanged(source)
    assert [f.line for f in fix_text(textwrap.dedent(source)).remaining] == [3, 4, 5, 7, 10]


def test_targets_gate_fixes_too():
    source = "import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n"
    result = fix_text(source, floors={"torch": Version("2.1")})
    assert "torch.cuda.amp.GradScaler()" in result.text
    assert 'torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True)' in result.text


def test_noqa_lines_and_shims_are_not_fixed():
    check_unchanged(
        """\
        import torch
        with torch.cuda.amp.autocast():  # noqa: APX201
            pass
        try:
            from torch.amp import GradScaler
        except ImportError:
            from torch.cuda.amp import GradScaler
        """
    )


@pytest.mark.parametrize("comment", [
    "# noqa", "# NOQA", "# noqa:APX201", "# noqa: APX201,APX203", "# noqa: APX203 APX201", "# noqa:APX2",
    "# noqa: APX203,, APX1 ,APX201", "# noqa: E501\tAPX201", "# noqa : APX201", "# noqa: apx201", "# noqa:  APX201"])
def test_noqa_codes_are_read_as_flake8_reads_them(comment):
    """The code list is split as flake8.utils.parse_comma_separated_list splits it (that module
    is not imported: it loads logging and platform), and the comment matched by flake8's regex."""
    from flake8.defaults import NOQA_INLINE_REGEXP
    from flake8.utils import parse_comma_separated_list

    from flake8_no_apex.edits import Source

    match = NOQA_INLINE_REGEXP.search(comment)
    codes = match.groupdict()["codes"] if match else None
    for code in ("APX201", "APX203", "APX101"):
        expected = match is not None and (codes is None or code.startswith(tuple(parse_comma_separated_list(codes))))
        assert fixer.noqa_lines(Source(f"x = 1  {comment}\n"))(1, code) is expected, (comment, code)


def test_import_is_added_after_a_docstring_and_future_import_without_other_imports():
    check_transformed(
        """\
        #!/usr/bin/env python
        \"\"\"Doc.\"\"\"
        from __future__ import annotations
        from torch.cuda import amp

        scaler = amp.GradScaler()""",
        """\
        #!/usr/bin/env python
        \"\"\"Doc.\"\"\"
        from __future__ import annotations
        import torch

        scaler = torch.amp.GradScaler("cuda")""",
    )


def test_crlf_non_ascii_and_comments_are_preserved():
    before = 'import torch\r\nname = "é"; s = torch.cuda.amp.GradScaler(  # keep\r\n    enabled=True,\r\n)\r\n'
    after = 'import torch\r\nname = "é"; s = torch.amp.GradScaler(  # keep\r\n    "cuda",\r\n    enabled=True,\r\n)\r\n'
    assert fix_text(before).text == after


# --- Lightning -------------------------------------------------------------------------------
def test_renamed_plugin_import_uses_and_precision_argument():
    check_transformed(
        """\
        from pytorch_lightning.plugins.precision.native_amp import NativeMixedPrecisionPlugin
        from pytorch_lightning.plugins import NativeMixedPrecisionPlugin as Native

        a = NativeMixedPrecisionPlugin(16, "cuda")
        b = Native(precision="bf16", device="cuda")
        """,
        """\
        from pytorch_lightning.plugins import MixedPrecision
        from pytorch_lightning.plugins import MixedPrecision as Native

        a = MixedPrecision("16-mixed", "cuda")
        b = Native(precision="bf16-mixed", device="cuda")
        """,
    )


def test_rename_follows_the_lightning_target():
    check_transformed(
        "from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n"
        "p = NativeMixedPrecisionPlugin(16, 'cuda')\n",
        "from pytorch_lightning.plugins import MixedPrecisionPlugin\np = MixedPrecisionPlugin(16, 'cuda')\n",
        floors={"lightning": Version("1.9")},
    )


def test_rename_with_a_computed_precision_is_unsafe():
    source = "import lightning.pytorch as pl\np = pl.plugins.MixedPrecisionPlugin(args.precision, 'cuda')\n"
    check_unchanged(source)
    assert "pl.plugins.MixedPrecision(args.precision" in fix_text(source, unsafe=True).text


@pytest.mark.parametrize("source", [
    # the reproducer: the Trainer builds MixedPrecision, and the old name is its subclass
    "from lightning.pytorch.plugins import MixedPrecisionPlugin\n\nplugin = MixedPrecisionPlugin('16-mixed', 'cuda')\n"
    "if isinstance(trainer.precision_plugin, MixedPrecisionPlugin):\n    pass\n",
    "import lightning.pytorch as pl\nplugin = pl.plugins.MixedPrecisionPlugin('16-mixed', 'cuda')\n"
    "ok = isinstance(p, pl.plugins.MixedPrecisionPlugin)\n",
    "from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n"
    "ok = issubclass(cls, NativeMixedPrecisionPlugin)\n",
    "from lightning.pytorch.plugins import MixedPrecisionPlugin\nsame = type(p) is MixedPrecisionPlugin\n",
    "from lightning.pytorch.plugins import MixedPrecisionPlugin\nname = MixedPrecisionPlugin.__name__\n",
    "from lightning.pytorch.plugins import MixedPrecisionPlugin\nclass Mine(MixedPrecisionPlugin):\n    pass\n",
])
def test_a_rename_whose_name_is_used_as_a_value_is_unsafe(source):
    """The old names subclass the new ones: an isinstance check of them changes answer after a rename."""
    check_unchanged(source)
    assert fix_text(source, unsafe=True).text != source  # still offered, as unsafe


def test_a_type_hint_of_a_renamed_class_does_not_make_its_rename_unsafe():
    check_transformed(
        "from lightning.pytorch.plugins import MixedPrecisionPlugin\n\n"
        "def build(p: MixedPrecisionPlugin = None) -> MixedPrecisionPlugin:\n"
        "    made: MixedPrecisionPlugin = MixedPrecisionPlugin('16-mixed', 'cuda')\n    return made\n",
        "from lightning.pytorch.plugins import MixedPrecision\n\n"
        "def build(p: MixedPrecision = None) -> MixedPrecision:\n"
        "    made: MixedPrecision = MixedPrecision('16-mixed', 'cuda')\n    return made\n",
    )
    check_transformed("import torch\nfrom typing import Optional\n\n"
                      "def f(s: Optional[torch.cuda.amp.GradScaler] = None):\n"
                      "    return torch.cuda.amp.GradScaler()\n",
                      "import torch\nfrom typing import Optional\n\n"
                      "def f(s: Optional[torch.cuda.amp.GradScaler] = None):\n"
                      "    return torch.amp.GradScaler(\"cuda\")\n")


def test_fsdp_renames_drop_the_device_fsdp_precision_does_not_take():
    """FSDPPrecision(precision, scaler): `FSDPPrecision("16-mixed", "cuda")` raises ValueError in Lightning 2.6."""
    check_transformed(
        """\
        from lightning.pytorch.plugins import FSDPMixedPrecisionPlugin
        from pytorch_lightning.plugins.precision.fsdp_native_native_amp import (
            FullyShardedNativeNativeMixedPrecisionPlugin,
        )

        a = FSDPMixedPrecisionPlugin("16-mixed", "cuda")
        b = FSDPMixedPrecisionPlugin(precision="bf16-mixed", device=device)
        c = FullyShardedNativeNativeMixedPrecisionPlugin(16, "cuda", my_scaler)
        """,
        """\
        from lightning.pytorch.plugins import FSDPPrecision
        from pytorch_lightning.plugins import (
            FSDPPrecision,
        )

        a = FSDPPrecision("16-mixed")
        b = FSDPPrecision(precision="bf16-mixed")
        c = FSDPPrecision("16-mixed", scaler=my_scaler)
        """,
    )


def test_fsdp_rename_keeps_the_device_where_the_target_class_takes_it():
    check_transformed(
        "from pytorch_lightning.plugins.precision.fsdp_native_native_amp import "
        "FullyShardedNativeNativeMixedPrecisionPlugin as P\np = P(16, 'cuda')\n",
        "from pytorch_lightning.plugins import FSDPMixedPrecisionPlugin as P\np = P(\"16-mixed\", 'cuda')\n",
        floors={"lightning": Version("2.0")},
    )
    check_transformed(
        "import lightning.pytorch as pl\np = pl.plugins.FSDPMixedPrecisionPlugin('16-mixed', 'cuda')\n",
        "import lightning.pytorch as pl\np = pl.plugins.FSDPPrecisionPlugin('16-mixed')\n",
        floors={"lightning": Version("2.1.0")},
    )


def test_fsdp_rename_leaves_a_device_it_cannot_drop():
    """A device computed by a call may have effects; through *args it cannot be found."""
    check_unchanged("from lightning.pytorch.plugins import FSDPMixedPrecisionPlugin\n"
                    "p = FSDPMixedPrecisionPlugin('16-mixed', pick_device())\n", unsafe=True)
    check_unchanged("from lightning.pytorch.plugins import FSDPMixedPrecisionPlugin\n"
                    "p = FSDPMixedPrecisionPlugin(*args)\n", unsafe=True)


def test_rename_keeps_a_multi_name_import_it_cannot_split():
    check_unchanged("from pytorch_lightning.plugins.precision.native_amp import NativeMixedPrecisionPlugin, x\n")


def test_trainer_arguments():
    check_transformed(
        """\
        import pytorch_lightning as pl

        trainer = pl.Trainer(
            max_epochs=3,
            amp_backend="native",
            precision='bf16',  # mixed
        )
        kwargs = {"amp_backend": "native", "devices": 1}
        apex = pl.Trainer(amp_backend="apex", amp_level="O2", precision=16)
        """,
        """\
        import pytorch_lightning as pl

        trainer = pl.Trainer(
            max_epochs=3,
            precision='bf16-mixed',  # mixed
        )
        kwargs = {"devices": 1}
        apex = pl.Trainer(amp_backend="apex", amp_level="O2", precision="16-mixed")
        """,
    )


def test_apex_settings_are_dropped_only_with_unsafe_fixes():
    source = 'import pytorch_lightning as pl\npl.Trainer(amp_backend="apex", amp_level="O2", precision=16)\n'
    result = fix_text(source, unsafe=True)
    assert result.text == 'import pytorch_lightning as pl\npl.Trainer(precision="16-mixed")\n'
    assert fix_text(source).unsafe == 2


# --- transformers ----------------------------------------------------------------------------
def test_transformers_options_follow_the_target():
    source = """\
        from transformers import TrainingArguments
        from transformers.training_args import OptimizerNames
        args = TrainingArguments("out", fp16_backend="auto", optim="adamw_apex_fused")
        cli = ["--fp16_backend", "auto", "--optim=adamw_apex_fused"]
        name = OptimizerNames.ADAMW_APEX_FUSED
        """
    check_transformed(
        source,
        """\
        from transformers import TrainingArguments
        from transformers.training_args import OptimizerNames
        args = TrainingArguments("out", half_precision_backend="auto", optim="adamw_torch_fused")
        cli = ["--half_precision_backend", "auto", "--optim=adamw_torch_fused"]
        name = OptimizerNames.ADAMW_TORCH_FUSED
        """,
        floors={"transformers": Version("4.30")},
    )
    newest = fix_text(textwrap.dedent(source)).text
    assert 'TrainingArguments("out", optim="adamw_torch_fused")' in newest
    assert '"--fp16_backend"' in newest  # a flag with its value in the next item is left to a person


# --- guarantees ------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", PYTHON_RULES, ids=[f"{r.code}-{r.title}" for r in PYTHON_RULES])
def test_every_example_fixes_to_code_that_parses_and_is_stable(rule):
    for unsafe in (False, True):
        once = fix_text(rule.before, unsafe=unsafe)
        ast.parse(once.text)
        assert fix_text(once.text, unsafe=unsafe).text == once.text
        # what fix says is left is what a fresh check of its result reports
        fresh = check_tree(ast.parse(once.text))
        assert [(f.line, f.col, f.code) for f in once.remaining] == [(f.line, f.col, f.code) for f in fresh]


def test_safe_fixes_of_the_examples_remove_their_findings():
    fixed_codes = set()
    for rule in PYTHON_RULES:
        result = fix_text(rule.before)
        fixed_codes |= {f.code for f in result.fixed}
        assert not {f.code for f in result.fixed} & {f.code for f in result.remaining if f.rule is rule}
    assert {"APX007", "APX008", "APX201", "APX202", "APX203", "APX204", "APX301", "APX304"} <= fixed_codes


FRAGMENTS = [r.before for r in PYTHON_RULES] + [s for r in PYTHON_RULES for s in r.invalid] + [
    p.read_text() for p in FIXTURES.glob("*.py")
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3), st.booleans())
def test_fixing_twice_equals_fixing_once(parts, unsafe):
    once = fix_text("\n".join(parts), unsafe=unsafe).text
    ast.parse(once)
    assert fix_text(once, unsafe=unsafe).text == once


def test_a_fix_that_would_break_the_code_is_refused(monkeypatch):
    """Fault injection: a fixer that emits broken code must not get it written."""
    rule = next(r for r in RULES if r.code == "APX201")

    def broken(ctx, finding):
        start, end = ctx.source.span(finding.site.node)
        return fixer.plan([fixer.TextEdit(start, end, "torch.amp.autocast(")], fixer.Grade.SAFE)

    planned = fixer._plan  # rows are immutable: the fixer's dispatch takes this one for the rule
    monkeypatch.setattr(fixer, "_plan", lambda ctx, f: broken(ctx, f) if f.rule is rule else planned(ctx, f))
    text = "import torch\nwith torch.cuda.amp.autocast():\n    pass\nscaler = torch.cuda.amp.GradScaler()\n"
    result = fix_text(text)  # the other fixes still apply; the broken plan is left to a person
    assert result.text == text.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")')
    assert [f.code for f in result.remaining] == ["APX201"]
    assert (2, "the fix of APX201 would not compile: left to a person") in result.notes
    # and no front end is offered it: the plans of check's JSON and the editor are proven the same way
    assert [p is None for p in fixer.Round.of(text, {}).plans()] == [True, False]


# --- apex (unsafe) ----------------------------------------------------------------------------
def test_apex_calls_become_torch_calls_with_unsafe_fixes():
    source = """\
        import apex
        from apex.parallel import DistributedDataParallel as DDP, convert_syncbn_model
        from apex.optimizers import FusedAdam

        model = convert_syncbn_model(model)
        model = DDP(model, delay_allreduce=True)
        opt = FusedAdam(model.parameters(), lr=1e-3)
        adam = FusedAdam(model.parameters(), adam_w_mode=False, weight_decay=0.1)
        sgd = apex.optimizers.FusedSGD(params, lr=0.1, momentum=0.9)
        norm = apex.normalization.FusedRMSNorm(4096)
        """
    check_unchanged(source)  # none of it is safe
    check_transformed(
        source,
        """\
        import torch

        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0, fused=True)
        adam = torch.optim.Adam(model.parameters(), weight_decay=0.1, fused=True)
        sgd = torch.optim.SGD(params, lr=0.1, momentum=0.9, fused=True)
        norm = torch.nn.RMSNorm(4096, eps=1e-5)
        """,
        unsafe=True,
        selected=lambda code: True,
    )


def test_apex_arguments_torch_cannot_honour_block_the_fix():
    check_unchanged(
        """\
        from apex.optimizers import FusedAdam
        from apex.parallel import SyncBatchNorm
        a = FusedAdam(p, 1e-3, False)
        b = FusedAdam(p, adam_w_mode=flag)
        c = SyncBatchNorm(64, channel_last=True)
        """,
        unsafe=True,
        selected=lambda code: True,
    )


def test_apex_plugin_becomes_mixed_precision_merged_into_the_import():
    check_transformed(
        """\
        import pytorch_lightning as pl
        from pytorch_lightning.plugins import ApexMixedPrecisionPlugin, DDPPlugin

        trainer = pl.Trainer(plugins=[ApexMixedPrecisionPlugin(amp_level="O2"), DDPPlugin()])
        """,
        """\
        import pytorch_lightning as pl
        from pytorch_lightning.plugins import DDPPlugin, MixedPrecision

        trainer = pl.Trainer(plugins=[MixedPrecision("16-mixed", "cuda"), DDPPlugin()])
        """,
        unsafe=True,
    )


def test_added_import_goes_before_the_first_use_at_module_level():
    check_transformed(
        "from torch.cuda import amp\nscaler = amp.GradScaler()\nimport os\n",
        'import torch\nscaler = torch.amp.GradScaler("cuda")\nimport os\n',
    )


def test_an_import_unused_before_the_fix_may_be_a_re_export_and_stays():
    check_unchanged("from torch.cuda.amp import autocast, GradScaler  # re-exported for old callers\n")
    check_transformed(
        "from torch.cuda.amp import autocast, GradScaler\nimport torch\nscaler = GradScaler()\n",
        'from torch.cuda.amp import autocast\nimport torch\nscaler = torch.amp.GradScaler("cuda")\n',
    )


def test_a_conditionally_bound_name_is_not_fixed():
    check_unchanged(CONDITIONAL_AUTOCAST)
    assert [f.line for f in fix_text(CONDITIONAL_AUTOCAST).remaining] == [6]


def test_half_precision_backend_is_dropped_safely_where_it_chose_native_amp():
    check_transformed('from transformers import TrainingArguments\n'
                      'a = TrainingArguments("o", fp16=True, half_precision_backend="cuda_amp")\n',
                      'from transformers import TrainingArguments\na = TrainingArguments("o", fp16=True)\n')
    check_unchanged('from transformers import TrainingArguments\n'
                    'a = TrainingArguments("o", bf16=True, half_precision_backend="cpu_amp")\n')


# --- layout: where new imports go, what removed code leaves behind -------------------------------
def test_import_torch_goes_in_isort_order_into_a_sorted_block():
    check_transformed(
        '''\
        """Train."""
        from __future__ import annotations

        import os

        import numpy as np
        import torchvision
        from torch.cuda.amp import autocast

        from . import data

        with autocast():
            pass
        ''',
        '''\
        """Train."""
        from __future__ import annotations

        import os

        import numpy as np
        import torch
        import torchvision

        from . import data

        with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):
            pass
        ''',
    )


def test_import_torch_follows_the_last_import_when_the_block_is_not_sorted():
    check_transformed(
        """\
        import sys
        import os
        from torch.cuda.amp import autocast

        with autocast():
            pass
        """,
        """\
        import sys
        import os
        import torch

        with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):
            pass
        """,
    )


def test_a_device_inserted_into_a_call_laid_out_one_argument_per_line_keeps_the_layout():
    check_transformed(
        """\
        import torch

        scaler = torch.cuda.amp.GradScaler(
            init_scale=1024.0,
            growth_interval=100,
        )
        with torch.cuda.amp.autocast(
                True):
            pass
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler(
            "cuda",
            init_scale=1024.0,
            growth_interval=100,
        )
        with torch.amp.autocast(
                "cuda",
                enabled=True,
                dtype=torch.float16,
                cache_enabled=True):
            pass
        """,
    )


def test_removed_imports_take_their_comments_along():
    check_transformed(
        """\
        import torch
        from torch.cuda.amp import GradScaler  # the old scaler
            # (kept for the 1.x cluster)
        from torch.cuda.amp import (
            # the old autocast
            autocast,
            custom_fwd,
        )

        with autocast():
            scaler = GradScaler()
        f = custom_fwd
        """,
        """\
        import torch
        from torch.cuda.amp import (
            custom_fwd,
        )

        with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):
            scaler = torch.amp.GradScaler("cuda")
        f = custom_fwd
        """,
    )


def test_fixes_leave_no_new_indentation_warnings():
    import pycodestyle

    def indentation_warnings(text: str) -> list:
        style = pycodestyle.Checker(lines=text.splitlines(True), select=["E1"], quiet=True)
        style.check_all()
        return style.report.counters

    fixtures = [p.read_text() for p in FIXTURES.glob("*.py")] + [r.before for r in PYTHON_RULES]
    for text in fixtures:
        before = indentation_warnings(text)
        after = indentation_warnings(fix_text(text, unsafe=True).text)
        assert {k: v for k, v in after.items() if k.startswith("E1") and v > before.get(k, 0)} == {}


def test_fixes_that_never_settle_are_an_error_naming_their_rules():
    """A fixer whose edit leaves its finding in place would loop: after the last round fix
    says so, with the code, instead of stopping in silence."""
    from flake8_no_apex.checker import RuleIndex
    from flake8_no_apex.table import Fix, Grade, Rule, Symbols, Timeline, TextEdit, plan

    def rewrite_in_place(ctx, finding):
        start, end = ctx.source.span(finding.site.node)
        return plan([TextEdit(start, end, ctx.source.text[start:end])], Grade.SAFE)

    restless = Rule(code="APX999", title="restless", match=(Symbols("torch.cuda.amp", {"autocast": ""}),),
                    timeline=Timeline("torch", "2.4"), subject="{name}", advice="", fix=Fix(Grade.SAFE, ""),
                    doc="", before="", after="", fixer=rewrite_in_place)
    with pytest.raises(FixError, match=r"APX999 still changed the code after 10 rounds"):
        fix_text("import torch\ntorch.cuda.amp.autocast()\n", index=RuleIndex([restless]))


@pytest.mark.parametrize("statement", [
    "from a.b import c", "from  a . b\\\n  .c import (d)", "from a.import_x import y", "from\\\na import b",
    "from a.b import c as d, e", "from .a import b", "from ..a.b import c", "from . import b", "from ...a import b",
])
def test_the_module_of_an_import_is_where_the_concrete_tree_has_it(statement):
    """`module_span` reads the text where it can and the statement's tokens otherwise: both
    where ast-grep's concrete syntax tree has the module."""
    from ast_grep_py import SgRoot

    from flake8_no_apex.edits import Source, module_span, module_tokens_span

    text = f"if x:\n    {statement}\n"
    source = Source(text)
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ImportFrom))
    concrete = SgRoot(text, "python").root().find(kind="import_from_statement").field("module_name").range()
    assert module_span(source, node) == module_tokens_span(source, node) == (concrete.start.index, concrete.end.index)


def _listed(node):
    """An element of ast-grep's concrete syntax tree as `Source.element` reads one: where it is,
    and the commas right beside it (a backslash continuation between them is nothing: the tree
    has it as a sibling, so a fix used to keep `, \\` dangling; Python's tokenizer skips it)."""
    from flake8_no_apex.edits import Listed

    if node is None:
        return None
    before, after = node.prev(), node.next()
    while before is not None and before.kind() == "line_continuation":
        before = before.prev()
    while after is not None and after.kind() == "line_continuation":
        after = after.next()
    return Listed(node.range().start.index, node.range().end.index,
                  before.range().start.index if before is not None and before.kind() == "," else None,
                  after.range().end.index if after is not None and after.kind() == "," else None)


def compare_lists_with_the_concrete_tree(paths) -> Counter:
    """Each call's `(`, arguments and keyword arguments, each import's names and each dict's
    pairs as `Source` finds them from the tokens of the call, import or dict alone, against
    ast-grep's concrete syntax tree of the whole module (what the fixes read before): the same
    wherever that tree has the node (where it has none, a parse that gave up on newer syntax
    nearby, the tokens may still answer). Returns the count of each kind compared."""
    from ast_grep_py import SgRoot

    from flake8_no_apex.edits import Source

    compared: Counter = Counter()
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the standard library's invalid escapes
                tree = ast.parse(text)
        except SyntaxError:
            continue
        source, root = Source(text), SgRoot(text, "python").root()
        concrete = {}
        for kind in ("call", "keyword_argument", "aliased_import", "dotted_name"):
            for node in root.find_all(kind=kind):
                concrete.setdefault((kind, node.range().start.index, node.range().end.index), node)
        pairs = {}
        for node in root.find_all(kind="pair"):
            pairs.setdefault(node.range().start.index, node)

        def same(what: str, ours, theirs, node: ast.AST) -> None:
            if theirs is not None:
                compared[what] += 1
                assert ours == theirs, (str(path), node.lineno, what)

        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                call = concrete.get(("call", *source.span(node)))
                arguments = call.field("arguments") if call is not None else None
                if arguments is not None and arguments.text().startswith("("):
                    same("(", source.opening_parenthesis(node), arguments.range().start.index, node)
                children = {(c.range().start.index, c.range().end.index): c for c in arguments.children()} \
                    if arguments is not None else {}
                for argument in [*node.args, *node.keywords]:
                    same("argument", source.element(argument, node), _listed(children.get(source.span(argument))),
                         argument)
                for keyword in node.keywords:
                    if keyword.arg is not None:
                        found = concrete.get(("keyword_argument", *source.span(keyword)))
                        same("keyword", source.element(keyword, node), _listed(found), keyword)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name != "*":
                        found = concrete.get(("aliased_import" if alias.asname else "dotted_name", *source.span(alias)))
                        same("alias", source.element(alias, node), _listed(found), node)
            elif isinstance(node, ast.Dict):
                for key in node.keys:
                    if key is not None:
                        found = pairs.get(source.span(key)[0])
                        same("pair", source.element(key, node, whole=False), _listed(found), key)
    return compared


def test_the_tokens_list_what_the_concrete_syntax_tree_does():
    """The commas, parentheses and comments fixes need, read from the tokens of one call, import
    or dict, are ast-grep's (the fixer's source of them before) on the fixtures, the examples and
    a sixteenth of the standard library: indented, multi-line, commented, continued with
    backslashes, lambdas among arguments, in f-strings and decorators. (The slow group compares
    the whole standard library and the regression corpus.)"""
    import sysconfig

    root = Path(__file__).parent
    paths = [*sorted((root / "fixtures").glob("*.py")), *sorted((root.parent / "examples").glob("*.py")),
             *sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[1::16]]
    compared = compare_lists_with_the_concrete_tree(paths)
    assert min(compared.values()) > 10 and sum(compared.values()) > 1_500, compared


@pytest.mark.slow
def test_the_tokens_list_what_the_concrete_syntax_tree_does_everywhere():
    import sysconfig

    import corpus

    tree = corpus.ensure()
    paths = [*sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")), *(sorted(tree.rglob("*.py")) if tree else [])]
    compared = compare_lists_with_the_concrete_tree(paths)
    assert sum(compared.values()) > 90_000, compared


@pytest.mark.parametrize("before, after", [
    ("f(a, b=1)", "f(a)"),
    ("f(a, b=lambda x, y: x)", "f(a)"),
    ("f(b=lambda x, y: x, a=2)", "f(a=2)"),
    ("f(a,  # keep\n  b=1)", "f(a,  # keep\n  )"),
    ("f(a, \\\n  b=1)", "f(a)"),
    ("f(\n    a,\n    # about b\n    b=1,\n)", "f(\n    a,\n)"),
    ("f(a, b=(\n  1))", "f(a)"),
])
def test_a_keyword_argument_goes_with_its_comma(before, after):
    """`remove_element` on Python's tokens: the comma after the keyword, else the one before
    (across a backslash continuation), the comment lines above an element on lines of its own."""
    from flake8_no_apex.edits import Source, remove_element

    source = Source(before + "\n")
    call = next(n for n in ast.walk(ast.parse(source.text)) if isinstance(n, ast.Call) and n.keywords)
    keyword = next(k for k in call.keywords if k.arg == "b")
    assert source.apply([remove_element(source, keyword, call)]) == after + "\n"


@pytest.mark.parametrize("text", ["f((b))", "f(*b)", "f(x, (b))"])
def test_a_parenthesized_argument_is_no_element_of_the_call(text):
    """Only an argument written as the node is, not `(b)` around `b`: no edit rather than a wrong one."""
    from flake8_no_apex.edits import Source

    source = Source(text)
    call = ast.parse(text).body[0].value
    b = next(n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id == "b")
    assert source.element(b, call) is None
    assert source.opening_parenthesis(call) == 1


NOQA_LAYOUTS = [  # (module, whether each noqa line is read alone: no tokenizing)
    ('import torch\nx = torch.cuda.amp.GradScaler()  # noqa: APX203\n', True),
    ('import torch\nx = """\n# noqa: APX203\n"""; y = torch.cuda.amp.GradScaler()\n', False),
    ('import torch\nx = """ # noqa: E501\n"""; y = torch.cuda.amp.GradScaler()  # noqa: APX203\n', False),
    ('import torch\nx = torch.cuda.amp.GradScaler() + \\\n    1  # noqa: APX203\n', False),
    ('import torch\nx = 1 + \\\n    torch.cuda.amp.GradScaler()  # noqa\n', False),
    ('import torch\nx = (torch.cuda.amp.GradScaler(),\n     2)  # noqa: APX203\n', True),
    ('import torch\nx = ("a"\n     "b", torch.cuda.amp.GradScaler())  # noqa: APX203\n', False),
    ('import torch\nx = f"""{torch.cuda.amp.GradScaler()}\n"""  # noqa: APX203\n', False),
    ('import torch\nx = f"{torch.cuda.amp.GradScaler()}"  # noqa:APX2\ny = torch.cuda.amp.GradScaler()\n', True),
    ('import torch\ndef f():\n    """Doc.\n\n    # noqa\n    """\n    return torch.cuda.amp.GradScaler()\n', False),
    ('import torch\ndef f():\n    """Doc.\n    """\n    return torch.cuda.amp.GradScaler()  # noqa: APX203\n', True),
    ('import torch\nx = 1; \\\ny = torch.cuda.amp.GradScaler()  # noqa: E501\nz = 2  # noqa: APX203\n', False),
    ('import torch\n# noqa: APX203 \\\nx = torch.cuda.amp.GradScaler()\n', False),
    ('import torch\r\nx = torch.cuda.amp.GradScaler()  # noqa: APX203\r\ny = torch.cuda.amp.GradScaler()\r\n', True),
    ('import torch\rx = torch.cuda.amp.GradScaler()  # noqa: APX203\ry = torch.cuda.amp.GradScaler()\r', None),
]


@pytest.mark.parametrize("text, read_alone", NOQA_LAYOUTS)
def test_noqa_lines_read_alone_only_where_flake8_reads_them_alone(text, read_alone):
    """With the resolver's multi-line literals, `noqa_lines` skips tokenizing where each noqa line
    is read alone: the same answer as with the tokenizer's lines, for every line and code."""
    from flake8_no_apex.checker import Checker
    from flake8_no_apex.edits import Source

    checker = Checker()
    checker.check(ast.parse(text))
    source = Source(text)
    lines = {source.position(match.start())[0] for match in noqa.noqa_pattern().finditer(text)}
    if read_alone is not None:  # None: lone carriage returns, always tokenized
        assert fixer._lines_read_alone(source, lines, checker.multiline_literals) is read_alone
    fast = fixer.noqa_lines(source, checker.multiline_literals)
    tokenized = fixer.noqa_lines(Source(text))
    for line in range(1, len(source.lines) + 1):
        for code in ("APX203", "APX201", "E501"):
            assert fast(line, code) is tokenized(line, code), (line, code)


def test_noqa_is_read_with_flake8s_own_pattern():
    """The pattern is the installed flake8's, read from its defaults module alone."""
    from flake8.defaults import NOQA_INLINE_REGEXP

    noqa._flake8_defaults.cache_clear()
    assert noqa.noqa_pattern() is NOQA_INLINE_REGEXP  # flake8.defaults is imported here: that module's
    pattern = subprocess.run(
        [sys.executable, "-c", "import sys; from flake8_no_apex import noqa; p = noqa.noqa_pattern(); "
                               "print(repr((p.pattern, p.flags)), 'flake8' in sys.modules)"],
        capture_output=True, text=True, check=True).stdout.split("\n")[0]
    assert pattern == f"{(NOQA_INLINE_REGEXP.pattern, NOQA_INLINE_REGEXP.flags)!r} False"


def test_custom_fwd_already_given_its_device_type_is_only_renamed():
    """`device_type=` written before the rename: adding another would not compile (issue 21)."""
    check_transformed(
        """\
        import torch

        @torch.cuda.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, x):
            return x
        """,
        """\
        import torch

        @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, x):
            return x
        """,
    )


def test_an_offered_plan_is_whole_its_import_added_and_the_imports_it_leaves_unused_removed():
    """What check's JSON and the editor offer is what fix writes: with `import torch` where the new
    code needs it, and without `from apex import amp` once the migration rewrote its every use."""
    text = "from torch.cuda.amp import autocast\nwith autocast():\n    pass\n"
    only = next(p for p in fixer.Round.of(text, {}).plans() if p is not None)
    assert fixer.Source(text).apply(only.edits) == fix_text(text).text
    from helpers import CANONICAL_STEP as migration

    plan = next(p for p in fixer.Round.of(migration, {}).plans() if p is not None)
    assert fixer.Source(migration).apply(plan.edits) == fix_text(migration, unsafe=True).text


@pytest.mark.parametrize("floor, new", [("1.9", "MixedPrecisionPlugin"), (None, "MixedPrecision")])
def test_two_old_names_of_one_new_class_leave_one_import_of_it(floor, new):
    """`import NativeMixedPrecisionPlugin, MixedPrecisionPlugin` renamed both to one name: `import A, A`."""
    floors = {"lightning": Version(floor)} if floor else {}
    text = ("from pytorch_lightning.plugins import NativeMixedPrecisionPlugin, MixedPrecisionPlugin\n\n"
            "a = NativeMixedPrecisionPlugin(16, 'cuda')\nb = MixedPrecisionPlugin(16, 'cuda')\n")
    fixed = fix_text(text, floors).text
    assert fixed.splitlines()[0] == f"from pytorch_lightning.plugins import {new}"
    # a rename and the name an unsafe fix adds beside it in the same round: one import too
    legacy = ("from pytorch_lightning.plugins import ApexMixedPrecisionPlugin, NativeMixedPrecisionPlugin\n\n"
              "a = ApexMixedPrecisionPlugin(amp_level='O2')\nb = NativeMixedPrecisionPlugin(16, 'cuda')\n")
    first = fix_text(legacy, floors, unsafe=True).text.splitlines()[0]
    assert first == f"from pytorch_lightning.plugins import {new}"
    own = "from x import A, A\nimport torch\ntorch.cuda.amp.autocast()\n"  # duplicates the code had stay
    assert fix_text(own).text.startswith("from x import A, A")


def _whole_module_compiles(round_, finished) -> bool:
    try:
        compile(round_.source.apply(finished.edits), "<whole>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("text, broken", [
    ("import torch\n\n@decorate\ndef f():\n    return torch.cuda.amp.autocast()\n", "return"),
    ("from __future__ import annotations\nimport torch\nx = 1; y = (\n    torch.cuda.amp.autocast())\n", "yield"),
    ('"""Doc."""\nfrom __future__ import annotations\nimport torch\nif ok:\n'
     '    s = torch.cuda.amp.GradScaler()\n', "f(a=1, a=2)"),
    ("import torch\ndef g():\n    free = 1\n    def h():\n        return torch.cuda.amp.autocast()\n", "nonlocal q"),
    ("import torch\ndef g():\n    free = 1\n    def h():\n        nonlocal free\n"
     "        free = torch.cuda.amp.autocast()\n", "free = 2"),
    ("import torch\nclass T:\n    @staticmethod\n    def step(self):\n        for x in y:\n"
     "            s = torch.cuda.amp.GradScaler()\n            super().step()\n", "break"),
    ("import torch\nclass T:\n    def step(self):\n        s = torch.cuda.amp.GradScaler()\n", "return 1\nyield 2"),
])
def test_a_plan_is_compiled_with_the_statements_it_touches_as_the_whole_module_would_be(text, broken):
    """The compile proof of an offered plan reads only the top-level statements it edits (and the
    __future__ imports): it must agree with compiling the whole module, for plans that compile and
    for plans that do not (a fault injected into the plan's text)."""
    round_ = fixer.Round.of(text, {})
    ctx = round_.context()
    for finding in round_.findings:
        good = fixer._plan(ctx, finding)
        if good is None:
            continue
        good = round_.finished(ctx, good)
        assert round_.compiles(good) is _whole_module_compiles(round_, good) is True
        last = good.edits[-1]
        bad = fixer.plan([*good.edits[:-1], fixer.TextEdit(last.start, last.end, last.text + f"\n{broken}\n")],
                         good.grade)
        assert round_.compiles(bad) is _whole_module_compiles(round_, bad)


def test_two_keywords_removed_from_the_end_of_a_call_make_one_edit():
    """apex DDP's message_size= and gradient_predivide_factor= each took the comma between them:
    the plan's edits overlapped and `fix` stopped on the file (NVIDIA DeepLearningExamples' BERT
    run_pretraining.py)."""
    source = ("from apex.parallel import DistributedDataParallel as DDP\n"
              "model = DDP(model, message_size=250000000, gradient_predivide_factor=get_world_size())\n")
    result = fix_text(source, unsafe=True)
    compile(result.text, "<fixed>", "exec")
    assert "message_size" not in result.text and "gradient_predivide_factor" not in result.text
