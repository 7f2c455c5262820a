"""APX111 against timm's released wheels: ApexScaler and NativeScaler came together in timm 0.3.0 (0.2.1
has neither), both are still in 1.0.31, they take the same call, ApexScaler reaches apex through an
`amp` that is None when `from apex import amp` fails, and the two save their state under different
checkpoint keys (what the rule's doc says of resuming)."""
import ast

import pytest

from wheels import Release

CUDA = "timm/utils/cuda.py"


def _classes(release: Release) -> dict:
    source = release.source(CUDA)
    if source is None:
        return {}
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}


def _call_parameters(cls: ast.ClassDef) -> list:
    call = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__call__")
    return [a.arg for a in call.args.args]


def _state_dict_key(cls: ast.ClassDef) -> str:
    return next(n.value.value for n in cls.body if isinstance(n, ast.Assign)
                and [t.id for t in n.targets] == ["state_dict_key"])


def test_both_scalers_arrive_in_0_3_0_and_not_before():
    assert not {"ApexScaler", "NativeScaler"} & set(_classes(Release("timm", "0.2.1")))
    assert {"ApexScaler", "NativeScaler"} <= set(_classes(Release("timm", "0.3.0")))
    assert "from .cuda import ApexScaler, NativeScaler" in Release("timm", "0.3.0").source("timm/utils/__init__.py")


@pytest.mark.parametrize("version", ["0.3.0", "1.0.31"])
def test_native_scaler_takes_apex_scaler_s_call(version):
    classes = _classes(Release("timm", version))
    assert _call_parameters(classes["NativeScaler"]) == _call_parameters(classes["ApexScaler"])
    assert (_state_dict_key(classes["ApexScaler"]), _state_dict_key(classes["NativeScaler"])) == ("amp", "amp_scaler")


def test_apex_scaler_s_amp_is_none_without_apex_amp():
    """timm 1.0.31: `try: from apex import amp except ImportError: amp = None`, and ApexScaler calls
    amp.scale_loss: apex 25.07 has no apex.amp, so that import fails there as without apex."""
    tree = ast.parse(Release("timm", "1.0.31").source(CUDA))
    guard = next(n for n in tree.body if isinstance(n, ast.Try))
    assert ast.unparse(guard.body[0]) == "from apex import amp"
    handler = guard.handlers[0]
    assert ast.unparse(handler.type) == "ImportError" and "amp = None" in ast.unparse(handler)
    apex_scaler = _classes(Release("timm", "1.0.31"))["ApexScaler"]
    assert "amp.scale_loss(loss, optimizer)" in ast.unparse(apex_scaler)
