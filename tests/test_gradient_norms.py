"""What the migration counts as a norm of the gradients (a value it may divide by the scale):
read from the function's body, never run (flake8_no_apex/rules/_amp_norms.py)."""
import ast

import pytest

from flake8_no_apex.rules._amp_norms import returns_gradient_norm
from gradient_norm_cases import NORMS, NOT_NORMS


def reads_as_a_norm(source: str, call: str) -> bool:
    function = ast.parse(source).body[0]
    call = ast.parse(call.replace("GRADIENTS", "amp.master_params(optimizer)"), mode="eval").body
    gradients = next(a for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Call))
    return returns_gradient_norm(function, call, gradients)


@pytest.mark.parametrize("name", NORMS)
def test_a_norm_of_the_gradients_is_read_as_one(name):
    assert reads_as_a_norm(*NORMS[name])


@pytest.mark.parametrize("name", NOT_NORMS)
def test_a_value_that_does_not_scale_with_the_gradients_is_not(name):
    assert not reads_as_a_norm(*NOT_NORMS[name])
