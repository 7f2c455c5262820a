"""A stand-in for torch's AMP API, for property tests: it records what a program constructs.

Only what the rules rewrite is here, with torch 2.13's signatures and defaults (the conformance
group compares them with the real ones): torch.amp's autocast, GradScaler, custom_fwd and
custom_bwd, and the deprecated torch.cuda.amp / torch.cpu.amp classes that call them.
"""
CALLS = []  # what the program did, in order


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


float16, bfloat16, float32 = dtype("float16"), dtype("bfloat16"), dtype("float32")
half, float = float16, float32

# The thread's autocast state, which torch.amp.autocast reads for the dtype and cache setting a call
# leaves as None, and which entering an autocast sets (and leaving it restores), as in torch 2.13.
_AUTOCAST_DTYPES = {"cuda": float16, "cpu": bfloat16}
_AUTOCAST_CACHE = [True]


def get_autocast_dtype(device_type):
    return _AUTOCAST_DTYPES[device_type]


def set_autocast_dtype(device_type, value):
    _AUTOCAST_DTYPES[device_type] = value


def is_autocast_cache_enabled():
    return _AUTOCAST_CACHE[0]


def set_autocast_cache_enabled(value):
    _AUTOCAST_CACHE[0] = value


def reset_autocast_state():
    """The state of a new thread (the property test runs programs one after another)."""
    _AUTOCAST_DTYPES.update(cuda=float16, cpu=bfloat16)
    _AUTOCAST_CACHE[0] = True

from torch import amp, cpu, cuda  # noqa: E402  (the dtypes first: the submodules use them)
from torch.amp import GradScaler, autocast  # noqa: E402

__all__ = ["CALLS", "GradScaler", "amp", "autocast", "bfloat16", "cpu", "cuda", "float16", "float32",
           "get_autocast_dtype", "is_autocast_cache_enabled", "reset_autocast_state", "set_autocast_cache_enabled",
           "set_autocast_dtype"]
