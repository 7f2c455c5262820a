"""The reproducers of issue 21 on the real libraries: what made three safe fixes change behaviour
is true of torch 2.13 and Lightning 2.6.6, and the fixes now keep what the code did (or are
graded unsafe where they cannot)."""
from __future__ import annotations

import pytest
import torch

from flake8_no_apex.fixer import fix_text
from runtime import run

AROUND = """\
import torch
a = b = torch.randn(4, 4)
def inner():
    with {}:
        return torch.mm(a, b).dtype
with torch.autocast("cpu", dtype=torch.float16):
    result = inner()
"""


@pytest.mark.parametrize("call, short", [
    ("torch.cpu.amp.autocast()", 'torch.amp.autocast("cpu")'),
    ("torch.cpu.amp.autocast(enabled=True)", 'torch.amp.autocast("cpu", enabled=True)'),
    ("torch.cpu.amp.autocast(True, cache_enabled=False)",
     'torch.amp.autocast("cpu", enabled=True, cache_enabled=False)'),
])
def test_the_fixed_autocast_keeps_the_dtype_an_outer_autocast_would_change(call, short):
    program = AROUND.format(call)
    before = run(program)
    assert before.error is None and before.namespace["result"] is torch.bfloat16
    # the short form the fix used to write takes float16 from the outer autocast
    assert run(AROUND.format(short)).namespace["result"] is torch.float16
    fixed = fix_text(program)
    assert "torch.cpu.amp" not in fixed.text
    assert run(fixed.text).namespace["result"] is torch.bfloat16


def test_the_set_autocast_dtype_state_is_read_only_by_the_new_call():
    program = ("import torch\ntorch.set_autocast_dtype('cpu', torch.float16)\n"
               "with torch.cpu.amp.autocast():\n    result = torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype\n"
               "torch.set_autocast_dtype('cpu', torch.bfloat16)\n")
    assert run(program).namespace["result"] is torch.bfloat16
    assert run(fix_text(program).text).namespace["result"] is torch.bfloat16


def test_lightning_builds_the_new_class_of_which_the_old_name_is_a_subclass():
    """isinstance(trainer.precision_plugin, MixedPrecisionPlugin) is False, and True once renamed."""
    from lightning.pytorch import Trainer
    from lightning.pytorch.plugins import MixedPrecision, MixedPrecisionPlugin  # noqa: APX007 (what is proven)

    assert issubclass(MixedPrecisionPlugin, MixedPrecision) and MixedPrecisionPlugin is not MixedPrecision  # noqa
    trainer = Trainer(accelerator="cpu", precision="bf16-mixed", logger=False, enable_checkpointing=False)
    assert type(trainer.precision_plugin) is MixedPrecision
    assert not isinstance(trainer.precision_plugin, MixedPrecisionPlugin)  # noqa: APX007
    source = ("from lightning.pytorch.plugins import MixedPrecisionPlugin\n"
              "plugin = MixedPrecisionPlugin('bf16-mixed', 'cpu')\n"
              "same = isinstance(trainer.precision_plugin, MixedPrecisionPlugin)\n")
    assert fix_text(source).text == source  # not a safe fix
    namespace = {"trainer": trainer}
    exec(compile(fix_text(source, unsafe=True).text, "<fixed>", "exec"), namespace)
    assert namespace["same"] is True  # what the unsafe fix changes, and why it is unsafe
