"""Hugging Face accelerate's old mixed-precision spellings (AC-01, AC-03..AC-05): the `fp16` switch of
`Accelerator`, its `use_fp16` property, `autocast(cache_enabled=...)` and the apex probe."""
from __future__ import annotations

import ast
from typing import Optional

from ..edits import drop_option, rename_option, replace
from ..table import AttributeRead, Fix, Grade, Keyword, Plan, Rule, Symbols, Timeline, plan
from ._amp_common import _pure

ACCELERATOR = ("accelerate:Accelerator",)


def fix_fp16(ctx, finding) -> Optional[Plan]:
    """What 0.6-0.15 did with `fp16=`: `if fp16: mixed_precision = "fp16"`. `fp16=True` ->
    `mixed_precision="fp16"`, `fp16=False` goes, `fp16=x` -> `mixed_precision="fp16" if x else None`
    (or `else` the `mixed_precision=` the call gives, when both read names only, each then read once
    in the same order: unsafe, as accelerate validated that value even when fp16 overrode it)."""
    site = finding.site
    call = site.call
    if not isinstance(site.node, ast.keyword) or call is None or site.value_node is None:
        return None
    value = site.value_node.value if isinstance(site.value_node, ast.Constant) else None
    given = next((k for k in call.keywords if k.arg == "mixed_precision"), None)
    if value is False:
        edit = drop_option(ctx.source, site)
        return plan([edit], Grade.SAFE) if edit else None
    if given is None:
        renamed = rename_option(ctx.source, site.node, "fp16", "mixed_precision")
        text = '"fp16"' if value is True else f'"fp16" if {_operand(ctx, site.value_node)} else None'
        return plan([renamed, replace(ctx.source, site.value_node, text)], Grade.SAFE)
    if not (_pure(site.value_node) and _pure(given.value)) or value is not None and value is not True:
        return None
    chosen = '"fp16"' if value is True else f'"fp16" if {_operand(ctx, site.value_node)} else ' \
        f'{_operand(ctx, given.value)}'
    dropped = drop_option(ctx.source, site)
    # unsafe: accelerate checked the given value before fp16 overrode it (an unknown one raised)
    return plan([dropped, replace(ctx.source, given.value, chosen)], Grade.UNSAFE) if dropped else None


def _operand(ctx, node: ast.AST) -> str:
    """The expression as an operand of `a if b else c`."""
    text = ctx.source.segment(node)
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)) else f"({text})"


def fix_use_fp16(ctx, finding) -> Optional[Plan]:
    """`accelerator.use_fp16` -> `(accelerator.mixed_precision != "no")`: what the property
    returned (bf16 included). Unsafe: the receiver may be found by its name only."""
    node = finding.site.node
    if not isinstance(node, ast.Attribute):
        return None
    receiver = ctx.source.segment(node.value)
    return plan([replace(ctx.source, node, f'({receiver}.mixed_precision != "no")')], Grade.UNSAFE)


def fix_launch_fp16(ctx, finding) -> Optional[Plan]:
    """`"--fp16"` -> `"--mixed_precision", "fp16"` in the launcher's argument vector."""
    node = finding.site.node
    if not (isinstance(node, ast.Constant) and node.value == "--fp16"):
        return None
    quote = ctx.source.segment(node)[0]
    return plan([replace(ctx.source, node, f"{quote}--mixed_precision{quote}, {quote}fp16{quote}")], Grade.SAFE)


RULES = [
    Rule(
        code="APX401",
        title="Accelerator(fp16=...)",
        match=(Keyword("fp16", callees=ACCELERATOR, library="accelerate"),),
        timeline=Timeline("accelerate", "0.6.0", removed_in="0.16.0", replacement_since="0.6.0", source="AC-01"),
        subject="Accelerator(fp16=...)",
        advice='use mixed_precision="fp16"',
        fix=Fix(Grade.SAFE, "every release that took it did `if fp16: mixed_precision = \"fp16\"`: the fix writes "
                "that (`mixed_precision=\"fp16\" if x else None` for a computed value, `else` the call's own "
                "`mixed_precision=` when both only read names, unsafe: accelerate validated that one first); "
                "other calls are left to a person"),
        doc=("`Accelerator(fp16=True)` warned from accelerate 0.6, where `mixed_precision=\"fp16\"` came (a "
             "DeprecationWarning, hidden outside `__main__`; a FutureWarning \"will be removed in version 0.15.0\" "
             "from 0.14), and is a TypeError from 0.16. `mixed_precision` also takes \"bf16\" and \"no\"."),
        before="from accelerate import Accelerator\n\naccelerator = Accelerator(fp16=True)\n",
        after='from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision="fp16")\n',
        invalid=("import accelerate\n\naccelerator = accelerate.Accelerator(fp16=args.fp16)\n",),
        valid=('from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision="bf16")\n',
               "from transformers import TrainingArguments\n\nargs = TrainingArguments(\"out\", fp16=True)\n",
               "import accelerate\n\n\ndef train(fp16=True):\n    return fp16\n"),
        fixer=fix_fp16,
    ),
    Rule(
        code="APX402",
        title="Accelerator.use_fp16",
        match=(AttributeRead("use_fp16", library="accelerate", receiver_hint="accelerator", receivers=ACCELERATOR),),
        timeline=Timeline("accelerate", "0.17.0", removed_in="1.0.0", replacement_since="0.6.0", source="AC-03"),
        subject="Accelerator.use_fp16",
        advice='use accelerator.mixed_precision != "no" (what it returned, bf16 included)',
        fix=Fix(Grade.UNSAFE, "the rewrite is what the property returned, but the receiver is found by its name "
                "(`accelerator`, `self.accelerator`) as well as by its class"),
        doc=("`accelerator.use_fp16` warned from accelerate 0.17 (FutureWarning) and is gone in 1.0 "
             "(AttributeError). It returned `self.mixed_precision != \"no\"`, so it was True under bf16 too: the "
             "warning's own advice, `mixed_precision == \"fp16\"`, is False there; the fix writes what it returned. "
             "Found on receivers named like an accelerator in modules importing accelerate."),
        before=("from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision=\"fp16\")\n"
                "scaled = accelerator.use_fp16\n"),
        after=("from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision=\"fp16\")\n"
               "scaled = (accelerator.mixed_precision != \"no\")\n"),
        invalid=("import accelerate\n\n\nclass Loop:\n    def step(self):\n"
                 "        return self.accelerator.use_fp16\n",),
        valid=("import accelerate\n\nuse = options.use_fp16\n",
               "from accelerate import Accelerator\n\nprecision = Accelerator().mixed_precision\n"),
        fixer=fix_use_fp16,
    ),
    Rule(
        code="APX403",
        title="accelerator.autocast(cache_enabled=...)",
        match=(Keyword("cache_enabled", library="accelerate", method=("accelerator", "autocast")),),
        timeline=Timeline("accelerate", "0.22.0", removed_in="1.0.0", replacement_since="0.22.0", source="AC-04"),
        subject="accelerator.autocast(cache_enabled=...)",
        advice="use accelerate.Accelerator(kwargs_handlers=[accelerate.utils.AutocastKwargs(cache_enabled=True)])",
        fix=Fix(Grade.DISPLAY, "cache_enabled=True also changed the accelerator's autocast settings for every later "
                "block; where that is wanted, the AutocastKwargs handler goes to the Accelerator, which a person "
                "builds elsewhere"),
        doc=("`accelerator.autocast(cache_enabled=True)` (accelerate 0.19-0.34) warned from 0.22 and is a TypeError "
             "in 1.0. It set `cache_enabled` on the accelerator's autocast handler for good, so later `autocast()` "
             "blocks kept it: the replacement is `AutocastKwargs(cache_enabled=True)` among the `Accelerator`'s "
             "`kwargs_handlers` (or `autocast(autocast_handler=AutocastKwargs(...))` for one block)."),
        before=("from accelerate import Accelerator\n\naccelerator = Accelerator()\n"
                "with accelerator.autocast(cache_enabled=True):\n    loss = model(x)\n"),
        after=("from accelerate import Accelerator\nfrom accelerate.utils import AutocastKwargs\n\n"
               "accelerator = Accelerator(kwargs_handlers=[AutocastKwargs(cache_enabled=True)])\n"
               "with accelerator.autocast():\n    loss = model(x)\n"),
        invalid=("import accelerate\n\n\nclass Loop:\n    def step(self, x):\n"
                 "        with self.accelerator.autocast(cache_enabled=False):\n            return self.model(x)\n",),
        valid=("import accelerate\nimport torch\n\nwith torch.autocast(\"cuda\", cache_enabled=True):\n    pass\n",
               "import torch\n\nwith accelerator.autocast(cache_enabled=True):\n    pass\n"),
    ),
    Rule(
        code="APX405",
        title="accelerate launch --fp16",
        match=(Keyword("fp16", library="accelerate", argv=True, launcher=("accelerate", "launch")),),
        timeline=Timeline("accelerate", "0.6.0", removed_in="0.16.0", replacement_since="0.6.0", source="AC-02"),
        subject="accelerate launch --fp16",
        advice="use --mixed_precision fp16",
        fix=Fix(Grade.SAFE, "`--mixed_precision fp16` is what the flag set, from accelerate 0.6 on; only the "
                "launcher's own flag (before the script) is rewritten, a `--fp16` of the script stays"),
        doc=("`accelerate launch --fp16 train.py` warned from accelerate 0.6 (a DeprecationWarning; a FutureWarning "
             "from 0.14) and is an argparse error from 0.16 "
             "(\"unrecognized arguments\"); the launcher's switch is `--mixed_precision fp16` (also \"bf16\", "
             "\"no\"). Found in argument vectors built in Python (`subprocess.run([\"accelerate\", \"launch\", "
             "\"--fp16\", \"train.py\"])`), shell scripts, Dockerfiles, CI workflows and notebooks' `!` lines, "
             "before the script they start: a `--fp16` after it is the script's own."),
        before='import subprocess\n\nsubprocess.run(["accelerate", "launch", "--fp16", "train.py"], check=True)\n',
        after=('import subprocess\n\n'
               'subprocess.run(["accelerate", "launch", "--mixed_precision", "fp16", "train.py"], check=True)\n'),
        invalid=('command = ["accelerate", "launch", "--num_processes", "2", "--fp16", "-m", "pkg.train"]\n',),
        valid=('import subprocess\n\nsubprocess.run(["accelerate", "launch", "train.py", "--fp16"])\n',
               'import subprocess\n\nsubprocess.run(["python", "run_glue.py", "--fp16"])\n'),
        fixer=fix_launch_fp16,
    ),
    Rule(
        code="APX404",
        title="accelerate.utils.is_apex_available",
        match=(Symbols("accelerate.utils", {"is_apex_available": 'importlib.util.find_spec("apex") is not None'}),
               Symbols("accelerate.utils.imports", {"is_apex_available": 'importlib.util.find_spec("apex") is not '
                                                                         'None'})),
        timeline=Timeline("accelerate", None, removed_in="0.19.0", source="AC-05"),
        subject="{name}",
        advice="delete the apex branch it guards, or use {replacement} (what it returned)",
        fix=Fix(Grade.DISPLAY, "the guard and the apex code under it go together"),
        doc=("accelerate 0.10 to 0.18 had `accelerate.utils.is_apex_available()`, `importlib.util.find_spec(\"apex\") "
             "is not None`; 0.19 deleted it without a deprecation, so importing it is an ImportError. The PyPI "
             "package named `apex` (not NVIDIA's) satisfies that probe too."),
        before=("from accelerate.utils import is_apex_available\n\n"
                "if is_apex_available():\n    from apex import amp\n"),
        after="import torch\n\nscaler = torch.amp.GradScaler(\"cuda\")\n",
        invalid=("import accelerate.utils\n\nok = accelerate.utils.is_apex_available()\n",),
        valid=("from transformers.utils import is_apex_available\n",),
    ),
]
