"""PyTorch's device-specific AMP namespaces and autocast state functions, deprecated in torch 2.4
(PT-01..PT-09)."""
from __future__ import annotations

import ast
from typing import List, Optional

from ..edits import leading_separator, open_paren, replace
from ..table import LEGACY, Fix, Floors, Grade, Plan, Rule, Site, Symbols, TextEdit, Timeline
from ._torch import TORCH, torch_name, torch_plan

# The new torch AMP spellings: a try body using one of them makes its `except ImportError`
# handler a compatibility fallback, not a finding.
NEW_TORCH_AMP = ("torch.amp", "torch.autocast", "torch.GradScaler")

# The old autocast orders its parameters (enabled, dtype, cache_enabled); the new one
# (device_type, dtype, enabled, cache_enabled). Positional arguments must become keywords.
_AUTOCAST_PARAMETERS = ("enabled", "dtype", "cache_enabled")
_LONGEST_SUGGESTION = 100
# What the old autocast passes when the call does not say: torch.cuda.amp.autocast's defaults are
# fixed (float16, a weight cache), torch.amp.autocast's are None, "whatever the autocast state of
# the thread says" (an outer autocast's dtype, torch.set_autocast_dtype): written out, they keep
# the old meaning under any surrounding state.
_FIXED_DEFAULTS = {"cuda": ("float16", "True"), "cpu": ("bfloat16", "True")}


def kept_defaults(call: ast.Call, device: str, torch: str) -> List[str]:
    """The keywords the new call needs to mean what the old one did: the old defaults of the
    dtype and cache setting that the call does not give (positionally or by keyword)."""
    given = {name for name, _ in zip(_AUTOCAST_PARAMETERS, call.args)} | {k.arg for k in call.keywords}
    dtype, cache = _FIXED_DEFAULTS[device]
    return [word for name, word in (("dtype", f"dtype={torch}.{dtype}"), ("cache_enabled", f"cache_enabled={cache}"))
            if name not in given]


def _arguments(call: Optional[ast.Call], positional_names: tuple) -> Optional[List[str]]:
    """The call's arguments as keyword arguments, or None when that cannot be done."""
    if call is None:
        return []
    if len(call.args) > len(positional_names) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    words = [f"{name}={ast.unparse(arg)}" for name, arg in zip(positional_names, call.args)]
    return words + [ast.unparse(kw) for kw in call.keywords]


def _render_call(callee: str, first: str, words: Optional[List[str]]) -> str:
    """The replacement call, or its short form when the arguments do not fit a message."""
    text = f"{callee}({', '.join([first, *words])})" if words is not None else ""
    if not text or len(text) > _LONGEST_SUGGESTION:
        text = f"{callee}({first}, ...)"
    return text


def _called(site: Site) -> Optional[ast.Call]:
    return site.call if site.call is not None and site.call.func is site.node else None


def autocast_advice(site: Site, floors: Floors) -> str:
    call = _called(site)
    if call is None:
        return f'use torch.amp.autocast("{site.replacement}", ...)'
    words = _arguments(call, _AUTOCAST_PARAMETERS)
    if words is not None and not any(k.arg is None for k in call.keywords):
        words += kept_defaults(call, site.replacement, "torch")
    return "use " + _render_call("torch.amp.autocast", f'"{site.replacement}"', words)


def grad_scaler_advice(site: Site, floors: Floors) -> str:
    call = _called(site)
    if call is None:
        return f'use torch.amp.GradScaler("{site.replacement}", ...)'
    # the new signature only prepends `device`, so positional arguments keep their meaning
    words = None
    if not any(isinstance(a, ast.Starred) for a in call.args):
        words = [ast.unparse(a) for a in [*call.args, *call.keywords]]
    return "use " + _render_call("torch.amp.GradScaler", f'"{site.replacement}"', words)


def custom_fwd_advice(site: Site, floors: Floors) -> str:
    decorator = site.replacement
    call = _called(site)
    words = _arguments(call, ())
    if words and any(k.arg == "device_type" for k in call.keywords):
        return "use @" + _render_call(f"torch.amp.{decorator}", words[0], words[1:])
    return "use @" + _render_call(f"torch.amp.{decorator}", 'device_type="cuda"', words)


def _arguments_edits(ctx, call: ast.Call, name: str, device: str, torch: str) -> Optional[List[TextEdit]]:
    """Insert the device before the first argument (so a call laid out one argument per line
    keeps its layout); for autocast, turn positional arguments into keywords and write the old
    defaults the call left out (`kept_defaults`)."""
    if name == "autocast" and (
        len(call.args) > len(_AUTOCAST_PARAMETERS) or any(isinstance(a, ast.Starred) for a in call.args)
        # `autocast(True, enabled=False)` already fails (enabled given twice): no keyword for it
        or {k.arg for k in call.keywords} & set(_AUTOCAST_PARAMETERS[:len(call.args)])
        # `autocast(**options)`: whether they give the dtype is not known here
        or any(k.arg is None for k in call.keywords)
    ):
        return None
    arguments = sorted([*call.args, *call.keywords], key=lambda a: ctx.source.span(a)[0])
    first = ctx.source.span(arguments[0])[0] if arguments else open_paren(ctx.source, call)
    if first is None:
        return None
    separator = leading_separator(ctx.source, call, first) if arguments else ""
    insertions = {}
    if name in ("autocast", "GradScaler"):
        insertions[first] = f'"{device}"{separator}'
    elif any(k.arg == "device_type" for k in call.keywords):  # written for the new decorator already
        pass
    elif call.args:  # custom_fwd(forward): the keyword-only device_type goes after it
        insertions[ctx.source.span(call.args[-1])[1]] = ', device_type="cuda"'
    else:
        insertions[first] = f'device_type="cuda"{separator}'
    if name == "autocast":
        for parameter, arg in zip(_AUTOCAST_PARAMETERS, call.args):
            start = ctx.source.span(arg)[0]
            insertions[start] = insertions.get(start, "") + f"{parameter}="
        defaults = kept_defaults(call, device, torch)
        if defaults and arguments:
            after = ctx.source.span(arguments[-1])[1]
            insertions[after] = insertions.get(after, "") + "".join(separator + word for word in defaults)
        elif defaults:
            insertions[first] += "".join(", " + word for word in defaults)
    return [TextEdit(at, at, text) for at, text in insertions.items()]


def fix_reference(ctx, finding) -> Optional[Plan]:
    """`<any alias>.autocast(...)` -> `torch.amp.autocast("cuda", ...)`, through whatever name
    binds torch here (`import torch` is added when none does). Imports go once unused."""
    site = finding.site
    if isinstance(site.node, ast.alias) or torch_name(site) is None:
        return None
    name = site.name.rsplit(".", 1)[-1]
    device = site.replacement if site.replacement in ("cuda", "cpu") else "cuda"
    callee = f"{torch_name(site) or 'torch'}.amp.{name}"
    call = site.call if site.call is not None and site.call.func is site.node else None
    if call is not None:
        arguments = _arguments_edits(ctx, call, name, device, torch_name(site) or "torch")
        if arguments is None:
            return None
        edits = [replace(ctx.source, site.node, callee), *arguments]
    elif name in ("custom_fwd", "custom_bwd") and id(site.node) in ctx.decorators:
        edits = [replace(ctx.source, site.node, f'{callee}(device_type="cuda")')]
    else:
        return None  # a bare reference: isinstance, subclassing, later positional calls differ
    # the old classes subclass the new ones: an instance of the new class fails an isinstance
    # check (or an except clause) that names the old one, which this module does
    identity_checked = call is not None and (finding.code, name) in ctx.uncalled
    return torch_plan(site, edits, Grade.UNSAFE if identity_checked else Grade.SAFE)


# The device-specific autocast state functions torch 2.4 deprecated, and what each becomes: the
# generic function with the device in front of the arguments (`set_autocast_cpu_dtype(d)` ->
# `set_autocast_dtype("cpu", d)`); each keeps its number of arguments.
_STATE_FUNCTIONS = {
    f"{verb}_autocast_{device}_{what}": (f"{verb}_autocast_{what}", name, arguments)
    for device, name in (("gpu", "cuda"), ("cpu", "cpu"), ("ipu", "ipu"), ("xla", "xla"))
    for verb, what, arguments in (("get", "dtype", 0), ("set", "dtype", 1), ("is", "enabled", 0),
                                  ("set", "enabled", 1))
    if not (device == "gpu" and what == "enabled")  # torch.is_autocast_enabled() is CUDA's, not deprecated
}


def _state_replacement(old: str) -> str:
    new, device, arguments = _STATE_FUNCTIONS[old]
    return f'torch.{new}("{device}"{", ..." if arguments else ""})'


def fix_state_function(ctx, finding) -> Optional[Plan]:
    """`torch.get_autocast_gpu_dtype()` -> `torch.get_autocast_dtype("cuda")`, through whatever
    name binds torch here: a call with its arguments as the old function took them (positional
    only), the device in front."""
    site = finding.site
    call = _called(site)
    name = site.name.rsplit(".", 1)[-1]
    if call is None or torch_name(site) is None or name not in _STATE_FUNCTIONS:
        return None
    new, device, arguments = _STATE_FUNCTIONS[name]
    if len(call.args) != arguments or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None  # it raises TypeError as it is: nothing to keep
    first = ctx.source.span(call.args[0])[0] if call.args else open_paren(ctx.source, call)
    if first is None:
        return None
    separator = leading_separator(ctx.source, call, first) if call.args else ""
    edits = [replace(ctx.source, site.node, f"{torch_name(site) or 'torch'}.{new}"),
             TextEdit(first, first, f'"{device}"{separator}')]
    return torch_plan(site, edits, Grade.SAFE)


# The floating tensor types set_default_tensor_type takes, and the dtype each means.
_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "BFloat16Tensor": "bfloat16"}


def _tensor_type(site: Site) -> Optional[tuple]:
    """(dtype, on CUDA) of `set_default_tensor_type(torch.cuda.HalfTensor)` (through the name that
    binds torch there) or of its string form."""
    call = _called(site)
    if call is None or len(call.args) != 1 or call.keywords:
        return None
    argument = call.args[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        parts = argument.value.split(".")
    elif isinstance(argument, ast.Attribute) and torch_name(site):
        parts = ast.unparse(argument).split(".")
        parts[0] = "torch" if parts[0] == torch_name(site) else ""
    else:
        return None
    if parts[0] != "torch" or parts[-1] not in _TENSOR_TYPES or parts[1:-1] not in ([], ["cuda"]):
        return None
    return _TENSOR_TYPES[parts[-1]], parts[1:-1] == ["cuda"]


def default_tensor_type_advice(site: Site, floors: Floors) -> str:
    found = _tensor_type(site)
    if found is None:
        return "use torch.set_default_dtype(dtype) and torch.set_default_device(device)"
    dtype, cuda = found
    if cuda:
        return f'use torch.set_default_dtype(torch.{dtype}) and torch.set_default_device("cuda")'
    return f"use torch.set_default_dtype(torch.{dtype})"


def fix_default_tensor_type(ctx, finding) -> Optional[Plan]:
    """A CPU type -> `set_default_dtype(torch.<dtype>)`; unsafe: the old call also made the CPU the
    default device again after a CUDA type. CUDA types need a second statement: shown only."""
    site = finding.site
    call = _called(site)
    found = _tensor_type(site)
    torch = torch_name(site)
    if found is None or found[1] or torch is None:
        return None
    torch = torch or "torch"
    return torch_plan(site, [replace(ctx.source, call, f"{torch}.set_default_dtype({torch}.{found[0]})")], Grade.UNSAFE)


_FALLBACK_DOC = (
    "Not reported in the fallback half of a compatibility shim: an `except ImportError:` whose "
    "`try:` uses the new spelling, or the other branch of a version check "
    "(`if torch_version >= ...:`, `hasattr(torch, \"amp\")`) that uses it."
)

RULES = [
    Rule(
        code="APX201",
        title="torch.cuda.amp.autocast",
        match=(Symbols("torch.cuda.amp", {"autocast": "cuda"}),),
        timeline=Timeline("torch", "2.4", replacement_since="1.12", source="PT-01"),
        subject="{name}",
        advice=autocast_advice,
        fix=Fix(Grade.SAFE, "torch.amp.autocast(\"cuda\", ...) is the class the old name wraps; positional "
                "arguments become keywords, and the old defaults the call leaves out (dtype=torch.float16, "
                "cache_enabled=True) are written, because the new call's None reads them from the surrounding "
                "autocast state: so their meaning is kept under an outer autocast or set_autocast_dtype. A bare "
                "reference (isinstance, a subclass, a name called later with positional arguments) is left to a "
                "person, as is a call with *args or **kwargs"),
        doc=("`torch.cuda.amp.autocast` emits a FutureWarning since torch 2.4. Its positional "
             "parameters are `(enabled, dtype, cache_enabled)` while `torch.amp.autocast` takes "
             "`(device_type, dtype, enabled, cache_enabled)`: `autocast(use_amp)` must become "
             "`autocast(\"cuda\", enabled=use_amp)`, not `autocast(\"cuda\", use_amp)`. The old class always "
             "passes `dtype=torch.float16, cache_enabled=True`; the new one defaults both to None, which means "
             "\"what the thread's autocast state says\" (`torch.get_autocast_dtype(\"cuda\")`, "
             "`torch.is_autocast_cache_enabled()`): inside an outer bfloat16 autocast, or after "
             "`torch.set_autocast_dtype`, `torch.amp.autocast(\"cuda\")` runs in another precision. The fix "
             "writes both where the call does not give them; drop them yourself where no code around the call "
             "sets another dtype. " + _FALLBACK_DOC),
        before="import torch\n\nwith torch.cuda.amp.autocast(use_amp):\n    loss = model(x)\n",
        after=("import torch\n\nwith torch.amp.autocast(\"cuda\", enabled=use_amp, dtype=torch.float16, "
               "cache_enabled=True):\n    loss = model(x)\n"),
        invalid=(
            "from torch.cuda.amp import autocast\n",
            "import torch.cuda.amp as tca\ntca.autocast()\n",
            "from torch.cuda import amp\n\n@amp.autocast()\ndef forward(x):\n    return x\n",
            "import torch as th\nctx = th.cuda.amp.autocast_mode.autocast(dtype=th.bfloat16)\n",
            # the deprecated spelling in the branch that current releases take is no fallback
            "import torch\nif torch_version_at_least('1.10'):\n    with torch.cuda.amp.autocast():\n        pass\n"
            "else:\n    with torch.autocast('cuda'):\n        pass\n",
        ),
        valid=(
            "import torch\nwith torch.autocast(device_type=\"cuda\"):\n    pass\n",
            "from torch_xla.amp import autocast\nwith autocast(device):\n    pass\n",
            "def f(torch):\n    return torch.cuda.amp.autocast()\n",
            "try:\n    from torch.amp import autocast\nexcept ImportError:\n    from torch.cuda.amp import autocast\n",
        ),
        shim_exempt=True,
        shim_spellings=NEW_TORCH_AMP,
        fixer=fix_reference,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX202",
        title="torch.cpu.amp.autocast",
        match=(Symbols("torch.cpu.amp", {"autocast": "cpu"}),),
        timeline=Timeline("torch", "2.4", replacement_since="1.12", source="PT-02"),
        subject="{name}",
        advice=autocast_advice,
        fix=Fix(Grade.SAFE, "torch.amp.autocast(\"cpu\", ...) is what the old name wraps; positional "
                "arguments become keywords and the old defaults the call leaves out (dtype=torch.bfloat16, "
                "cache_enabled=True) are written, as for APX201; bare references are left to a person"),
        doc=("`torch.cpu.amp.autocast` emits a FutureWarning since torch 2.4. It always passes "
             "`dtype=torch.bfloat16, cache_enabled=True`, where `torch.amp.autocast(\"cpu\")` takes both from "
             "the thread's autocast state (an outer `torch.autocast(\"cpu\", dtype=torch.float16)` makes it "
             "float16), so the fix writes them where the call does not give them. " + _FALLBACK_DOC),
        before="import torch\n\nwith torch.cpu.amp.autocast():\n    y = model(x)\n",
        after=("import torch\n\nwith torch.amp.autocast(\"cpu\", dtype=torch.bfloat16, cache_enabled=True):\n"
               "    y = model(x)\n"),
        invalid=("from torch.cpu.amp import autocast as cpu_autocast\nwith cpu_autocast():\n    pass\n",),
        valid=("import torch\nwith torch.amp.autocast(\"cpu\"):\n    pass\n",),
        shim_exempt=True,
        shim_spellings=NEW_TORCH_AMP,
        fixer=fix_reference,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX203",
        title="torch.cuda.amp.GradScaler",
        match=(Symbols("torch.cuda.amp", {"GradScaler": "cuda"}), Symbols("torch.cpu.amp", {"GradScaler": "cpu"})),
        timeline=Timeline("torch", "2.4", replacement_since="2.3", source="PT-03, PT-04"),
        subject="{name}",
        advice=grad_scaler_advice,
        fix=Fix(Grade.SAFE, "torch.amp.GradScaler only prepends the device to the same parameters; bare "
                "references (isinstance, subclasses) are left to a person, and where the module has one, its "
                "calls are fixed only as unsafe: the old class subclasses the new one, so an instance of the new "
                "class fails `isinstance(s, torch.cuda.amp.GradScaler)`"),
        doc=("`torch.cuda.amp.GradScaler` and `torch.cpu.amp.GradScaler` emit a FutureWarning "
             "since torch 2.4 (not 2.3: 2.3 added `torch.amp.GradScaler` and kept the old name "
             "silent). " + _FALLBACK_DOC),
        before="import torch\n\nscaler = torch.cuda.amp.GradScaler(init_scale=2.0**16)\n",
        after="import torch\n\nscaler = torch.amp.GradScaler(\"cuda\", init_scale=2.0**16)\n",
        invalid=(
            "from torch.cuda.amp import GradScaler\n",
            "import torch\nclass MyScaler(torch.cuda.amp.GradScaler):\n    pass\n",
            "from torch.cuda.amp.grad_scaler import GradScaler\n",
        ),
        valid=(
            "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler\n",
            "import paddle\nscaler = paddle.amp.GradScaler()\n",
            "import torch\nscaler = torch.GradScaler(\"cuda\")\n",
        ),
        shim_exempt=True,
        shim_spellings=NEW_TORCH_AMP,
        fixer=fix_reference,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX204",
        title="torch.cuda.amp.custom_fwd / custom_bwd",
        match=(Symbols("torch.cuda.amp", {"custom_fwd": "custom_fwd", "custom_bwd": "custom_bwd"}),),
        timeline=Timeline("torch", "2.4", replacement_since="2.4", source="PT-05, PT-06"),
        subject="{name}",
        advice=custom_fwd_advice,
        fix=Fix(Grade.SAFE, "torch.amp.custom_fwd(device_type=\"cuda\") is the same decorator; a bare "
                "@custom_fwd must become a call because device_type is required"),
        doc=("`torch.cuda.amp.custom_fwd`/`custom_bwd` emit a FutureWarning when applied since "
             "torch 2.4. The replacement's `device_type` is keyword-only and required, so a bare "
             "`@custom_fwd` becomes `@torch.amp.custom_fwd(device_type=\"cuda\")`. " + _FALLBACK_DOC),
        before=("import torch\n\nclass F(torch.autograd.Function):\n    @staticmethod\n"
                "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
                "    def forward(ctx, x):\n        return x\n"),
        after=("import torch\n\nclass F(torch.autograd.Function):\n    @staticmethod\n"
               "    @torch.amp.custom_fwd(device_type=\"cuda\", cast_inputs=torch.float32)\n"
               "    def forward(ctx, x):\n        return x\n"),
        invalid=("from torch.cuda.amp import custom_bwd\n\n@custom_bwd\ndef backward(ctx, g):\n    return g\n",),
        valid=("from torch.amp import custom_fwd\n\n@custom_fwd(device_type=\"cuda\")\ndef f(x):\n    return x\n",),
        shim_exempt=True,
        shim_spellings=NEW_TORCH_AMP,
        fixer=fix_reference,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX205",
        title="torch.cuda.amp.grad_scaler internals",
        match=(Symbols("torch.cuda.amp.grad_scaler", {
            "_refresh_per_optimizer_state": "torch.amp.grad_scaler._refresh_per_optimizer_state",
            "_MultiDeviceReplicator": "torch.amp.grad_scaler._MultiDeviceReplicator",
            # imported there from torch.cuda.amp.common until 2.2, and still defined in that module
            "amp_definitely_not_available": "torch.cuda.amp.common.amp_definitely_not_available",
        }),),
        timeline=Timeline("torch", None, removed_in="2.3.0", replacement_since="2.3.0", source="PT-08"),
        subject="{name}",
        advice="use {replacement} (private: it moved when torch.amp.GradScaler arrived)",
        fix=Fix(Grade.DISPLAY, "a private helper: whoever imports it should look at what else moved"),
        doc=("torch 2.3 moved the GradScaler implementation to `torch.amp.grad_scaler`; "
             "`torch.cuda.amp.grad_scaler` kept only the public class and `OptState`, so importing "
             "`_refresh_per_optimizer_state`, `_MultiDeviceReplicator` or `amp_definitely_not_available` from it "
             "is an ImportError from 2.3 on (the wheels of 2.2.2 and 2.3.0 read)."),
        before="from torch.cuda.amp.grad_scaler import _refresh_per_optimizer_state\n",
        after="from torch.amp.grad_scaler import _refresh_per_optimizer_state\n",
        invalid=("from torch.cuda.amp.grad_scaler import _MultiDeviceReplicator\n",
                 "import torch\nr = torch.cuda.amp.grad_scaler._MultiDeviceReplicator(scale)\n",
                 "from torch.cuda.amp.grad_scaler import amp_definitely_not_available\n"),
        valid=("from torch.amp.grad_scaler import OptState, _refresh_per_optimizer_state\n",
               "from torch.cuda.amp.common import amp_definitely_not_available\n"),
    ),
    Rule(
        code="APX205",
        title="torch.cuda.amp.grad_scaler.OptState",
        match=(Symbols("torch.cuda.amp.grad_scaler", {"OptState": "torch.amp.grad_scaler.OptState"}),),
        timeline=Timeline("torch", "2.3.0", replacement_since="2.3.0", source="PT-08", status=LEGACY),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "an internal enum; the import moves with the GradScaler code that uses it"),
        doc=("Since torch 2.3 `OptState` lives in `torch.amp.grad_scaler`; the old module re-exports it "
             "without a warning."),
        before="from torch.cuda.amp.grad_scaler import OptState\n",
        after="from torch.amp.grad_scaler import OptState\n",
    ),
    Rule(
        code="APX205",
        title="torch.cuda.amp.autocast_mode._cast",
        match=(Symbols("torch.cuda.amp.autocast_mode",
                       {"_cast": "torch.amp.autocast_mode._cast(value, \"cuda\", dtype)"}),),
        timeline=Timeline("torch", "2.4.0", replacement_since="2.4.0", source="PT-07"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.DISPLAY, "a private helper whose new signature takes the device between value and dtype"),
        doc="`torch.cuda.amp.autocast_mode._cast(value, dtype)` emits a FutureWarning since torch 2.4.",
        before=("import torch\nfrom torch.cuda.amp.autocast_mode import _cast\n\n"
                "half = _cast(torch.ones(2), torch.float16)\n"),
        after=('import torch\nfrom torch.amp.autocast_mode import _cast\n\n'
               'half = _cast(torch.ones(2), "cuda", torch.float16)\n'),
    ),
    Rule(
        code="APX206",
        title="torch autocast state functions of one device",
        match=(Symbols("torch", {old: _state_replacement(old) for old in _STATE_FUNCTIONS}),),
        timeline=Timeline("torch", "2.4", replacement_since="2.4", source="PT-09"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.SAFE, "the generic function with the device first is what the old one calls (torch 2.4 "
                "added the device overloads, so the fix needs a torch floor of 2.4); a call with other arguments "
                "than the old function's, or a bare reference, is left to a person"),
        doc=("torch 2.4 made the autocast state functions generic (`torch.get_autocast_dtype(device)`, "
             "`set_autocast_dtype(device, dtype)`, `is_autocast_enabled(device)`, `set_autocast_enabled(device, "
             "flag)`) and deprecated the per-device ones: `get_autocast_gpu_dtype`, `set_autocast_gpu_dtype`, "
             "`is_autocast_cpu_enabled`, `set_autocast_cpu_enabled`, `get_autocast_cpu_dtype`, "
             "`set_autocast_cpu_dtype` and their ipu and xla twins. The DeprecationWarning comes from C++ and is "
             "hidden by Python's default filters outside `__main__`, so a library calling them never shows it: "
             "a linter is the only signal. `torch.is_autocast_enabled()` without a device (CUDA's) is not "
             "deprecated. Before 2.4 the new spellings raise TypeError, hence the fix only for torch >= 2.4."),
        before="import torch\n\ndtype = torch.get_autocast_gpu_dtype()\ntorch.set_autocast_cpu_enabled(False)\n",
        after='import torch\n\ndtype = torch.get_autocast_dtype("cuda")\ntorch.set_autocast_enabled("cpu", False)\n',
        invalid=("from torch import is_autocast_cpu_enabled\n",
                 "import torch as th\nth.set_autocast_xla_dtype(th.bfloat16)\n",
                 "import torch\nfn = torch.get_autocast_ipu_dtype\n"),
        valid=("import torch\ndtype = torch.get_autocast_dtype(\"cuda\")\n",
               "import torch\nif torch.is_autocast_enabled():\n    pass\n",
               "def f(torch):\n    return torch.get_autocast_gpu_dtype()\n",
               "import mindspore\nmindspore.get_autocast_gpu_dtype()\n",
               "import torch\ntry:\n    dtype = torch.get_autocast_dtype(\"cuda\")\n"
               "except (AttributeError, TypeError):\n    dtype = torch.get_autocast_gpu_dtype()\n"),
        shim_exempt=True,
        shim_spellings=("torch.get_autocast_dtype", "torch.set_autocast_dtype"),
        fixer=fix_state_function,
        fix_modules=TORCH,
    ),
    Rule(
        code="APX207",
        title="torch.set_default_tensor_type",
        match=(Symbols("torch", {"set_default_tensor_type": ""}),),
        timeline=Timeline("torch", "2.1", replacement_since="2.0", source="PT-10"),
        subject="{name}",
        advice=default_tensor_type_advice,
        fix=Fix(Grade.UNSAFE, "for a CPU type, set_default_dtype gives tensors the same dtype, but the old call also "
                "made the CPU the default device again after a CUDA type had been set; a CUDA type needs "
                "set_default_device too, a second statement a person places (it also moves every factory call "
                "without a device to CUDA)"),
        doc=("`torch.set_default_tensor_type(torch.cuda.HalfTensor)` is how pure-fp16 scripts of the apex era made "
             "every new tensor a CUDA half tensor. torch 2.1 deprecated it (a UserWarning from C++): the dtype and "
             "the device are set apart, `torch.set_default_dtype(torch.float16)` and "
             "`torch.set_default_device(\"cuda\")` (the latter since torch 2.0)."),
        before="import torch\n\ntorch.set_default_tensor_type(torch.DoubleTensor)\n",
        after="import torch\n\ntorch.set_default_dtype(torch.float64)\n",
        invalid=("import torch\n\ntorch.set_default_tensor_type(\"torch.FloatTensor\")\n",
                 "from torch import set_default_tensor_type\n"),
        valid=("import torch\n\ntorch.set_default_dtype(torch.float16)\n",
               "import mindspore\n\nmindspore.set_default_tensor_type(mindspore.float16)\n"),
        fixer=fix_default_tensor_type,
        fix_modules=TORCH,
    ),
]
