"""The two-back-ends migration keeps what the program does: run on stand-ins for apex and torch
that record every call, the migrated program given apex's value of the option does exactly what
the original did given the native value, and with any other value what the original did with it.
Programs are generated: if/elif chains over the option in any order, with `and`, `!=` and else
branches, apex's branches calling apex and the native ones the scaler."""
from __future__ import annotations

import sys
import textwrap
import types

from hypothesis import HealthCheck, given, settings, strategies as st

from flake8_no_apex.fixer import fix_text

APEX, NATIVE, OTHER = "apex", "native", "fp32"


def _stand_ins(trace: list) -> dict:
    """`apex` and `torch` modules whose AMP calls append to the trace."""
    class Scaled:
        def __init__(self, loss):
            self.loss = loss

        def __enter__(self):
            trace.append(("apex.scale_loss", self.loss))
            return self

        def __exit__(self, *exc):
            return False

        def backward(self):
            trace.append(("apex.backward", self.loss))

    amp = types.SimpleNamespace(
        initialize=lambda model, optimizer, **kw: trace.append(("apex.initialize", kw)) or (model, optimizer),
        scale_loss=lambda loss, optimizer, **kw: Scaled(loss),
        state_dict=lambda: trace.append(("apex.state_dict",)) or {"apex": 1})

    class GradScaler:
        def __init__(self, *args, **kwargs):
            trace.append(("GradScaler", args, tuple(sorted(kwargs.items()))))

        def step(self, optimizer):
            trace.append(("scaler.step", optimizer))

        def update(self):
            trace.append(("scaler.update",))

        def state_dict(self):
            return {"scaler": 1}

    class CudaGradScaler(GradScaler):  # torch.cuda.amp's is torch.amp's for "cuda" (which the torch rules write)
        def __init__(self, *args, **kwargs):
            super().__init__("cuda", *args, **kwargs)

    apex = types.ModuleType("apex")
    apex.amp = amp
    torch = types.ModuleType("torch")
    torch.amp = types.SimpleNamespace(GradScaler=GradScaler)
    torch.cuda = types.SimpleNamespace(amp=types.SimpleNamespace(GradScaler=CudaGradScaler))
    return {"apex": apex, "apex.amp": amp, "torch": torch}


def run(source: str, option: str, flag: bool = True) -> list:
    trace: list = []
    modules = _stand_ins(trace)
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        names = {"__name__": "program", "option": option, "flag": flag, "trace": trace, "model": "m", "optimizer": "o"}
        exec(compile(source, "program.py", "exec"), names)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return trace


# what each kind of branch does; apex's call apex, the native ones the scaler
BODIES = {
    APEX: ["model, optimizer = amp.initialize(model, optimizer, opt_level='O2')",
           "with amp.scale_loss('loss', optimizer) as scaled_loss:\n    scaled_loss.backward()",
           "trace.append(('state', amp.state_dict()))", "trace.append('apex branch')"],
    NATIVE: ["scaler = torch.cuda.amp.GradScaler()", "scaler.step(optimizer)\nscaler.update()",
             "trace.append(('state', scaler.state_dict()))", "trace.append('native branch')"],
    OTHER: ["trace.append('fp32 branch')", "optimizer = optimizer + '!'"],
}


@st.composite
def chains(draw):
    """One if/elif chain over the option (in an `if` of its own or not): its tests and bodies."""
    values = draw(st.permutations([APEX, NATIVE, OTHER]))[:draw(st.integers(1, 3))]
    lines = []
    for index, value in enumerate(values):
        compare = draw(st.sampled_from([f"option == {value!r}", f"{value!r} == option",
                                        f"flag and option == {value!r}"]))
        lines.append(("if " if index == 0 else "elif ") + compare + ":")
        body = draw(st.sampled_from(BODIES[value]))
        lines += ["    " + line for line in body.splitlines()]
    if draw(st.booleans()):
        lines += ["else:", "    trace.append('else')"]
    if draw(st.booleans()):  # inside a block of its own
        lines = ["if flag:"] + ["    " + line for line in lines]
    return lines


@st.composite
def programs(draw):
    blocks = [
        ["if option == 'apex':", "    model, optimizer = amp.initialize(model, optimizer)",
         "elif option == 'native':", "    scaler = torch.cuda.amp.GradScaler()"],
        *draw(st.lists(chains(), max_size=4)),
        ["if option != 'native':", "    trace.append('not native')"],
        ["if option == 'native':", "    scaler.step(optimizer)", "    scaler.update()"],
    ]
    order = draw(st.permutations(range(1, len(blocks))))
    lines = ["from apex import amp", "import torch", ""]
    for index in [0, *order]:
        lines += blocks[index]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_apex_s_value_does_what_the_native_value_did(source):
    migrated = fix_text(source, unsafe=True).text
    if "from apex import amp" in migrated:  # refused: nothing to compare
        return
    for flag in (True, False):
        assert run(migrated, APEX, flag) == run(source, NATIVE, flag)
        for option in (NATIVE, OTHER):
            assert run(migrated, option, flag) == run(source, option, flag)


def test_a_generated_shape_migrates():
    """The property above is not vacuous: the generator's plainest program migrates."""
    source = textwrap.dedent("""\
        from apex import amp
        import torch

        if option == 'apex':
            model, optimizer = amp.initialize(model, optimizer)
        elif option == 'native':
            scaler = torch.cuda.amp.GradScaler()
        if option == 'native':
            scaler.step(optimizer)
            scaler.update()
        """)
    migrated = fix_text(source, unsafe=True).text
    assert "from apex import amp" not in migrated, migrated
    assert run(migrated, APEX) == run(source, NATIVE) != run(source, APEX)
