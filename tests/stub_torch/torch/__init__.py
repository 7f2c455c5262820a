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

from torch import amp, cpu, cuda  # noqa: E402  (the dtypes first: the submodules use them)
from torch.amp import GradScaler, autocast  # noqa: E402

__all__ = ["CALLS", "GradScaler", "amp", "autocast", "bfloat16", "cpu", "cuda", "float16", "float32"]
