"""Property: a safe fix keeps what a program does. Generated programs use torch's deprecated AMP
API in every import style; each runs before and after `fix` against a stub torch package
(tests/stub_torch, torch 2.13's signatures) that records every autocast entered, GradScaler
built and custom_fwd/custom_bwd applied. The records and the outcome must be the same."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from packaging.version import Version

from flake8_no_apex.fixer import fix_text

STUB = Path(__file__).parent / "stub_torch"

# How the program reaches torch.cuda.amp: (imports, prefix of the names)
STYLES = {
    "module": ("import torch\n", "torch.cuda.amp."),
    "alias": ("import torch as th\n", "th.cuda.amp."),
    "submodule": ("import torch.cuda.amp as tca\n", "tca."),
    "from_cuda": ("from torch.cuda import amp\n", "amp."),
    "names": ("from torch.cuda.amp import GradScaler, autocast, custom_bwd, custom_fwd\n", ""),
}
# Where a plain `import torch` stands, if anywhere: fixes may only use the ones that run first.
TORCH_IMPORTS = {
    "none": ("", ""),
    "top": ("import torch\n", ""),
    "type_checking": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n", ""),
    "bottom": ("", "import torch\n"),
}
AUTOCAST_ARGUMENTS = ["", "False", "enabled=flag", "True, None, False", "flag, cache_enabled=False"]
SCALER_ARGUMENTS = ["", "2.0**10", "enabled=flag", "1024.0, 3.0, 0.25, 7, False", "growth_interval=9"]


def statement(kind: str, prefix: str, argument: str) -> str:
    if kind == "with":
        return f"with {prefix}autocast({argument}):\n    pass\n"
    if kind == "scaler":
        return f"scaler = {prefix}GradScaler({argument})\n"
    if kind == "decorator":
        return f"@{prefix}autocast({argument})\ndef step():\n    return 1\nstep()\n"
    if kind == "custom_fwd":
        return f"@{prefix}custom_fwd\ndef forward(x):\n    return x\n"
    if kind == "custom_fwd_call":
        return f"@{prefix}custom_fwd(cast_inputs=None)\ndef forward(x):\n    return x\n"
    assert kind == "custom_bwd"
    return f"@{prefix}custom_bwd\ndef backward(g):\n    return g\n"


@st.composite
def programs(draw) -> str:
    style_imports, prefix = STYLES[draw(st.sampled_from(sorted(STYLES)))]
    head, tail = TORCH_IMPORTS[draw(st.sampled_from(sorted(TORCH_IMPORTS)))]
    body = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["with", "scaler", "decorator", "custom_fwd", "custom_fwd_call", "custom_bwd"]))
        arguments = SCALER_ARGUMENTS if kind == "scaler" else AUTOCAST_ARGUMENTS
        text = statement(kind, prefix, draw(st.sampled_from(arguments)))
        place = draw(st.sampled_from(["module", "function", "branch"]))
        if place == "function":
            text = "def run():\n" + textwrap.indent(text, "    ") + "run()\n"
        elif place == "branch":
            text = "if flag:\n" + textwrap.indent(text, "    ")
        body.append(text)
    program = style_imports + "flag = True\n" + "".join(body)
    # the state around the code: torch.amp.autocast's None defaults read it, the old ones did not
    around = draw(st.sampled_from(["nothing", "outer_autocast", "set_dtype", "outer_no_cache"]))
    if around != "nothing":
        program = "import torch as _t\n" + {
            "outer_autocast": ("with _t.amp.autocast('cuda', dtype=_t.bfloat16), "
                               "_t.amp.autocast('cpu', dtype=_t.float16):\n"),
            "set_dtype": "_t.set_autocast_dtype('cuda', _t.float32)\nif True:\n",
            "outer_no_cache": "with _t.amp.autocast('cuda', cache_enabled=False):\n",
        }[around] + textwrap.indent(program, "    ")
    return head + program + tail


@pytest.fixture(scope="module")
def stub_torch():
    saved = {name: module for name, module in sys.modules.items() if name == "torch" or name.startswith("torch.")}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(STUB))
    import torch

    yield torch
    sys.path.remove(str(STUB))
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules.update(saved)


def behaviour(torch, program: str):
    """What the program did: the AMP objects it made, and how it ended."""
    del torch.CALLS[:]
    torch.reset_autocast_state()
    try:
        exec(compile(program, "<program>", "exec"), {"__name__": "program"})
        outcome = None
    except Exception as error:  # the program's own failure is part of what it does
        outcome = type(error).__name__
    return list(torch.CALLS), outcome


# The project's oldest torch, from none declared (the newest) to the first with torch.amp.autocast:
# what is fixed, and how, changes with it (GradScaler only from 2.3, custom_fwd from 2.4).
FLOORS = [None, "1.12", "2.2", "2.3", "2.4"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs(), floor=st.sampled_from(FLOORS))
def test_safe_fixes_keep_what_the_program_does(stub_torch, program, floor):
    fixed = fix_text(program, {"torch": Version(floor)} if floor else {}).text
    before, after = behaviour(stub_torch, program), behaviour(stub_torch, fixed)
    assert before[1] is None, program  # the generated programs run
    assert after == before, f"{program}\n--- fixed at torch {floor}:\n{fixed}"


def test_the_stub_reads_the_thread_state_where_the_new_call_leaves_it_open(stub_torch):
    """The issue's reproducer: under an outer float16 autocast the old cpu autocast still ran in
    bfloat16; `torch.amp.autocast("cpu")` alone would take float16 from the state."""
    outer = "import torch\nwith torch.amp.autocast('cpu', dtype=torch.float16):\n    with {}:\n        pass\n"
    program = outer.format("torch.cpu.amp.autocast()")
    assert behaviour(stub_torch, fix_text(program).text) == behaviour(stub_torch, program)
    assert behaviour(stub_torch, outer.format('torch.amp.autocast("cpu")')) != behaviour(stub_torch, program)


def test_the_stub_records_what_the_old_and_new_spellings_do(stub_torch):
    old = "import torch\nwith torch.cuda.amp.autocast(False):\n    pass\ns = torch.cuda.amp.GradScaler(8.0)\n"
    new = ('import torch\nwith torch.amp.autocast("cuda", enabled=False):\n    pass\n'
           's = torch.amp.GradScaler("cuda", 8.0)\n')
    assert behaviour(stub_torch, old) == behaviour(stub_torch, new)
    wrong = new.replace("enabled=False", "False")
    assert behaviour(stub_torch, wrong) != behaviour(stub_torch, old)  # False as the dtype: caught


@pytest.mark.parametrize("before, after, unsafe", [
    ("Accelerator(fp16=True)", 'Accelerator(mixed_precision="fp16")', False),
    ("Accelerator(fp16=False, cpu=True)", "Accelerator(cpu=True)", False),
    ("Accelerator(fp16=args.fp16)", 'Accelerator(mixed_precision="fp16" if args.fp16 else None)', False),
    ("Accelerator(fp16=a or b)", 'Accelerator(mixed_precision="fp16" if (a or b) else None)', False),
    ("Accelerator(fp16=args.fp16, mixed_precision=args.mp)",
     'Accelerator(mixed_precision="fp16" if args.fp16 else args.mp)', True),
    ("Accelerator(fp16=f(), mixed_precision=g())", None, True),  # each call would run another number of times
])
def test_accelerator_fp16_becomes_what_accelerate_did_with_it(before, after, unsafe):
    source = f"from accelerate import Accelerator\n\naccelerator = {before}\n"
    safe = fix_text(source).text
    both = fix_text(source, unsafe=True).text
    if after is None:
        assert both == source
        return
    expected = f"from accelerate import Accelerator\n\naccelerator = {after}\n"
    assert both == expected
    assert safe == (source if unsafe else expected)
