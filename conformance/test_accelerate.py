"""APX401's fix against accelerate's released wheels and the installed accelerate: every release
that took `Accelerator(fp16=...)` (0.6.0 to 0.15.0) used the parameter only as `if fp16:
mixed_precision = "fp16"`, so `mixed_precision="fp16" if x else None` is what it did; and the fixed
call builds the accelerator that precision names on the installed release."""
import ast

import pytest

from wheels import Release

TOOK_FP16 = ["0.6.0", "0.10.0", "0.14.0", "0.15.0"]


def _init(version: str) -> ast.FunctionDef:
    tree = ast.parse(Release("accelerate", version).source("accelerate/accelerator.py"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Accelerator")
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")


@pytest.mark.parametrize("version", TOOK_FP16)
def test_fp16_only_ever_set_mixed_precision_to_fp16(version):
    init = _init(version)
    assert next(a for a in init.args.args if a.arg == "mixed_precision") and next(
        d for a, d in zip(init.args.args[::-1], init.args.defaults[::-1]) if a.arg == "mixed_precision").value is None
    reads = [n for n in ast.walk(init) if isinstance(n, ast.Name) and n.id == "fp16" and isinstance(n.ctx, ast.Load)]
    assert len(reads) == 1, version
    guard = next(n for n in ast.walk(init) if isinstance(n, ast.If) and n.test is reads[0])
    assigned = [s for s in guard.body if isinstance(s, ast.Assign)]
    assert [ast.unparse(s) for s in assigned] == ["mixed_precision = 'fp16'"], version
    assert not guard.orelse


@pytest.mark.parametrize("fp16, expected", [(True, "fp16"), (False, "no")])
def test_the_fixed_call_builds_that_precision(fp16, expected):
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(reset_partial_state=True)  # one state per process: start afresh
    try:
        assert Accelerator(mixed_precision="fp16" if fp16 else None, cpu=True).mixed_precision == expected
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)


def test_the_launcher_rejects_fp16_and_takes_mixed_precision():
    """accelerate 1.16's own `accelerate launch` parser: `--fp16` is an error, `--mixed_precision
    fp16` the launcher's switch, and a `--fp16` after the script is the script's."""
    from accelerate.commands.launch import launch_command_parser

    parser = launch_command_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["--fp16", "train.py"])
    assert parser.parse_args(["--mixed_precision", "fp16", "train.py"]).mixed_precision == "fp16"
    assert parser.parse_args(["train.py", "--fp16"]).training_script_args == ["--fp16"]
