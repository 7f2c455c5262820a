"""The functions the migration reads as norms of the gradients (tests/gradient_norm_cases.py) are,
on real torch: with every gradient multiplied by a power of two, what they return is multiplied by
it, so divided by the scale it is what they returned on the unscaled gradients."""
import importlib.util
from pathlib import Path

import pytest
import torch

_spec = importlib.util.spec_from_file_location(
    "gradient_norm_cases", Path(__file__).resolve().parents[1] / "tests" / "gradient_norm_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


def _value(source: str, call: str, scale: float) -> float:
    torch.manual_seed(0)
    parameters = [torch.nn.Parameter(torch.randn(5, 3)) for _ in range(3)] + [torch.nn.Parameter(torch.randn(4))]
    for parameter in parameters:
        parameter.grad = torch.randn_like(parameter) * scale
    namespace = {"torch": torch}
    exec(source, namespace)  # noqa: S102 - the cases are this repository's own
    result = eval(call.replace("GRADIENTS", "(p for p in parameters)"), {**namespace, "parameters": parameters})
    return float(result)


@pytest.mark.parametrize("name", cases.NORMS)
def test_a_function_read_as_a_norm_scales_with_the_gradients(name):
    source, call = cases.NORMS[name]
    for scale in (2.0 ** 7, 2.0 ** 16):
        assert _value(source, call, scale) == pytest.approx(scale * _value(source, call, 1.0), rel=1e-6)


@pytest.mark.parametrize("name", ["a squared norm", "a norm plus a constant", "a root of a signed sum"])
def test_a_function_not_read_as_a_norm_does_not(name):
    source, call = cases.NOT_NORMS[name]
    scale = 2.0 ** 7
    assert _value(source, call, scale) != pytest.approx(scale * _value(source, call, 1.0), rel=1e-3)
