"""APX206's fix on real torch: each per-device autocast state function and the generic call the fix
writes for it read the same value and leave the thread's autocast state the same, and only the
old one warns."""
import warnings

import pytest
import torch

from flake8_no_apex.fixer import fix_text
from flake8_no_apex.rules.torch_amp import _STATE_FUNCTIONS

DEVICES = ("cpu", "cuda", "xla", "ipu")


def _argument(kind: str, device: str) -> str:
    """A value unlike the device's default, so that a setter that set another device would show."""
    if kind == "enabled":
        return "True"
    return "torch.bfloat16" if torch.get_autocast_dtype(device) == torch.float16 else "torch.float16"


def _state():
    return {device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)) for device in DEVICES}


def _run(source: str):
    before = _state()
    namespace = {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(source, "<example>", "exec"), namespace)  # noqa: S102 - the examples of this file
        return namespace.get("value"), _state(), [str(w.message) for w in caught
                                                  if issubclass(w.category, DeprecationWarning)]
    finally:
        for device, (enabled, dtype) in before.items():
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, dtype)


@pytest.mark.parametrize("old", sorted(_STATE_FUNCTIONS))
def test_the_fixed_call_reads_and_sets_what_the_old_one_did(old):
    new, device, arguments = _STATE_FUNCTIONS[old]
    argument = _argument(new.rsplit("_", 1)[1], device) if arguments else ""
    source = f"import torch\n\nvalue = torch.{old}({argument})\n"
    fixed = fix_text(source).text
    assert fixed == f'import torch\n\nvalue = torch.{new}("{device}"{", " + argument if argument else ""})\n'
    value, state, warned = _run(source)
    fixed_value, fixed_state, fixed_warned = _run(fixed)
    assert (fixed_value, fixed_state) == (value, state)
    assert any(f"torch.{old}(" in message for message in warned) and not fixed_warned
    if arguments:
        assert state != _state(), "the example changes the state it restores"
