"""PyTorch Lightning's apex integration and legacy precision API (PL-01..PL-16, LF-01..LF-03).

Symbols are written under `lightning`: the resolver folds `pytorch_lightning`,
`lightning_fabric` and `lightning_lite` into `lightning.pytorch` / `lightning.fabric`.
"""
from __future__ import annotations

import ast
from typing import List, Optional

from ..edits import drop_option, module_span, remove_element, rename_attribute, replace, replace_value
from ..resolve import canonical
from ..table import (DISCOURAGED, LEGACY, AttributeRead, ByFloor, Fix, Grade, Keyword, Parameter, Plan, Rule, Symbols,
                     TextEdit, Timeline, plan)

# Trainers of the Lightning ecosystem that take the Trainer's arguments (subclasses of it):
# add a wrapper here, and its import root to LIBRARY_ROOTS["lightning"].
TRAINER_WRAPPERS = ("flash:Trainer",)
TRAINERS = ("lightning:Trainer", "lightning:Trainer.from_argparse_args", "lightning:LightningLite", *TRAINER_WRAPPERS)
_DEEPSPEED_PRECISION = ("lightning:DeepSpeedPrecisionPlugin", "lightning:DeepSpeedPrecision")
_PRECISION_CALLEES = ("lightning:Trainer", "lightning:Fabric", "lightning:LightningLite", *TRAINER_WRAPPERS)
_PRECISION_CALLEES_DOC = ("Only calls that resolve to a Lightning `Trainer`, `Fabric` or `LightningLite` (subclasses "
                          "and `functools.partial` included) are checked: `precision=16` elsewhere is not Lightning's.")

# The *Plugin precision classes and their current names: the new names exist from 2.1.1, where
# the old ones are silent aliases; 2.2.0 made them subclasses that warn (_graveyard/precision.py).
# FSDPMixedPrecisionPlugin is a row of its own: it warns since 2.1.0 and takes a device.
_PLUGIN_SUFFIX_RENAMES = {
    "MixedPrecisionPlugin": "MixedPrecision",
    "PrecisionPlugin": "Precision",
    "DeepSpeedPrecisionPlugin": "DeepSpeedPrecision",
    "FSDPPrecisionPlugin": "FSDPPrecision",
    "HalfPrecisionPlugin": "HalfPrecision",
    "DoublePrecisionPlugin": "DoublePrecision",
    "BitsandbytesPrecisionPlugin": "BitsandbytesPrecision",
    "TransformerEnginePrecisionPlugin": "TransformerEnginePrecision",
    "XLAPrecisionPlugin": "XLAPrecision",
}

# Where the renamed precision classes are exported, per import root (the old submodules,
# such as `precision.native_amp`, were renamed in 2.0).
_PLUGIN_PACKAGES = {
    "pytorch_lightning": "pytorch_lightning.plugins",
    "lightning.pytorch": "lightning.pytorch.plugins",
    "lightning_lite": "lightning_fabric.plugins",
    "lightning_fabric": "lightning_fabric.plugins",
    "lightning.fabric": "lightning.fabric.plugins",
}


def _plugins_package(module: str) -> Optional[str]:
    """The module to import a renamed precision class from, given the one that had the old."""
    for root, package in _PLUGIN_PACKAGES.items():
        if module == root or module.startswith(root + "."):
            keep = module in (f"{root}.plugins", f"{root}.plugins.precision") and root != "lightning_lite"
            return module if keep else package
    return None


# Classes whose first parameter is the precision, which Lightning 2.0 spells "16-mixed".
_TAKES_PRECISION = ("MixedPrecision", "MixedPrecisionPlugin", "DeepSpeedPrecision", "DeepSpeedPrecisionPlugin",
                    "FSDPPrecision", "FSDPPrecisionPlugin", "FSDPMixedPrecisionPlugin")
# Classes whose second parameter was the device, and their successors that have none.
_TOOK_DEVICE = ("FSDPMixedPrecisionPlugin", "FullyShardedNativeNativeMixedPrecisionPlugin")
_TAKES_NO_DEVICE = ("FSDPPrecision", "FSDPPrecisionPlugin")
_MIXED_VALUES = {16: "16-mixed", "16": "16-mixed", "bf16": "bf16-mixed"}


def _precision_argument(ctx, call: Optional[ast.Call], new: str) -> Optional[List[TextEdit]]:
    """The 2.0 spelling of a renamed class's precision argument; None if it is no literal."""
    floor = ctx.floors.get("lightning")
    if call is None or new not in _TAKES_PRECISION or (floor is not None and floor.major < 2):
        return []
    argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "precision"), None)
    if argument is None:
        return []
    if not isinstance(argument, ast.Constant) or isinstance(argument.value, bool):
        return None
    value = _MIXED_VALUES.get(argument.value)
    return [replace_value(ctx.source, argument, argument, value)] if value else []


def _device_argument(ctx, call: Optional[ast.Call], old: str, new: str) -> Optional[List[TextEdit]]:
    """Drop the device a renamed FSDP class no longer takes (`FSDPPrecision(precision, scaler)`);
    None when it cannot be dropped without changing what runs."""
    if call is None or old not in _TOOK_DEVICE or new not in _TAKES_NO_DEVICE:
        return []
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    device = call.args[1] if len(call.args) > 1 else next((k for k in call.keywords if k.arg == "device"), None)
    if device is None:
        return []
    value = device.value if isinstance(device, ast.keyword) else device
    if not isinstance(value, (ast.Constant, ast.Name, ast.Attribute)):
        return None  # evaluating it may have effects that dropping it would lose
    if len(call.args) > 2:  # the scaler was positional: it must become a keyword
        scaler = call.args[2]
        start = ctx.source.span(scaler)[0]
        edit = remove_element(ctx.source, device, call)
        return [edit, TextEdit(start, start, "scaler=")] if edit else None
    edit = remove_element(ctx.source, device, call)
    return [edit] if edit else None


def _rename_import(ctx, statement: ast.ImportFrom, alias: ast.alias, old: str, new: str) -> Optional[Plan]:
    """`from <m> import Old[ as X]` -> `from <package> import New[ as X]`, with every use of
    the name; None when a use cannot follow (noqa), the import holds other names, the name is
    re-exported (unused here, or in `__all__`: importers need it) or the new name is taken."""
    package = _plugins_package(statement.module or "")
    binding = ctx.binding(alias)
    ctx.complete((alias.asname or alias.name,))  # every use: one in a body the walk skipped too
    if package is None or binding is None or getattr(alias, "lineno", None) is None or not binding.uses:
        return None
    # `import Native..., MixedPrecisionPlugin` (or two old names of one new class): the import
    # already binds the new name, or an earlier name of it is renamed to it; the old name goes
    shared = package == statement.module and alias.asname is None and _bound_beside(ctx, statement, alias, new)
    if alias.asname is None and not shared and (ctx.in_strings(old) or ctx.binds(new)):
        return None
    if any(ctx.noqa(use.lineno, "APX007") for use in binding.uses):
        return None
    edits = []
    if package != statement.module:
        module = module_span(ctx.source, statement) if len(statement.names) == 1 else None
        if module is None:
            return None
        edits.append(TextEdit(*module, package))
    start = ctx.source.span(alias)[0]
    edits.append(remove_element(ctx.source, alias, statement) if shared
                 else TextEdit(start, start + len(old), new))
    if None in edits:
        return None
    grade = Grade.SAFE
    for use in binding.uses:
        if alias.asname is None:
            edits.append(replace(ctx.source, use, new))
        call = ctx.calls.get(id(use))
        if call is None and not ctx.is_hint(use):  # a value (isinstance, a base class, __name__): _IDENTITY
            grade = Grade.UNSAFE
        device = _device_argument(ctx, call, old, new)
        if device is None:
            return None  # the new class would be called with an argument it does not take
        arguments = _precision_argument(ctx, call, new)
        if arguments is None:
            grade = Grade.UNSAFE
        else:
            edits += arguments + device
    return plan(edits, grade)


# Lightning's deprecated precision names are subclasses of the new classes (1.9's
# NativeMixedPrecisionPlugin of MixedPrecisionPlugin, 2.2+'s MixedPrecisionPlugin of MixedPrecision),
# and the Trainer builds the new class: `isinstance(trainer.precision_plugin, Old)` is False before the
# rename and True after it.
_IDENTITY = ("; a module that uses the name as a value (isinstance, issubclass, a base class, `__name__`) "
             "gets it as unsafe: the old name is a subclass of the new one, which the Trainer builds, so an "
             "isinstance check of it changes answer")


def _bound_beside(ctx, statement: ast.ImportFrom, alias: ast.alias, new: str) -> bool:
    """Whether another name of the same import binds `new` already, or is an earlier old name
    that its own rename turns into `new` (the first of them is renamed, the others go)."""
    for other in statement.names:
        if other is alias or other.asname is not None:
            continue
        if other.name == new:
            return True
        if statement.names.index(other) < statement.names.index(alias) and any(
                f.site.node is other and f.rule.fixer is fix_rename
                and f.site.replacement.format(**ctx.spelled) == new for f in ctx.findings):
            return True
    return False


def fix_rename(ctx, finding) -> Optional[Plan]:
    """A renamed precision class: the import and its uses, or a `pkg.plugins.Old` reference."""
    site = finding.site
    new = site.replacement.format(**ctx.spelled)
    old = site.name.rsplit(".", 1)[-1]
    if not new.isidentifier():
        return None  # replaced by a Trainer argument, not by a class
    if isinstance(site.node, ast.alias):
        return _rename_import(ctx, site.statement, site.node, old, new)
    if isinstance(site.node, ast.Attribute):
        parent = canonical(site.name.rsplit(".", 1)[0])
        if not parent.endswith((".plugins", ".plugins.precision")) or site.name.startswith("lightning_lite"):
            return None
        call = site.call if site.call and site.call.func is site.node else None
        device = _device_argument(ctx, call, old, new)
        if device is None:
            return None
        arguments = _precision_argument(ctx, call, new)
        edits = [rename_attribute(ctx.source, site.node, new), *device, *(arguments or [])]
        # a value here, or elsewhere in the module (`isinstance(p, pl.plugins.Old)`): see _IDENTITY
        identity = call is None and not ctx.is_hint(site.node) or (finding.code, old) in ctx.uncalled
        return plan(edits, Grade.SAFE if arguments is not None and not identity else Grade.UNSAFE)
    # a Name: fixed together with the import that binds it
    statement = getattr(site.binding, "statement", None)
    alias = next((a for a in getattr(statement, "names", ()) if a.name == old and a.asname is None), None)
    return _rename_import(ctx, statement, alias, old, new) if isinstance(statement, ast.ImportFrom) and alias else None


def _module_names(tree: ast.Module) -> dict:
    """Top-level names and the module a `from` import took each from (None: not an import)."""
    names = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom):
            names.update({a.asname or a.name: statement.module for a in statement.names})
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[statement.name] = None
        else:
            names.update({n.id: None for n in ast.walk(statement) if isinstance(n, ast.Name) and
                          isinstance(n.ctx, ast.Store)})
    return names


def fix_apex_plugin(ctx, finding) -> Optional[Plan]:
    """`ApexMixedPrecisionPlugin(...)` -> `MixedPrecision("16-mixed", "cuda")`, spelled for the
    target; unsafe, since training moves from apex to native AMP."""
    site = finding.site
    call = site.call if site.call is not None and site.call.func is site.node else None
    if call is None:
        return None
    new_call, new_class = ctx.spelled["mixed_precision_plugin"], ctx.spelled["mixed_precision"]
    if isinstance(site.node, ast.Attribute):
        if not canonical(site.name.rsplit(".", 1)[0]).endswith((".plugins", ".plugins.precision")):
            return None
        prefix = ctx.source.segment(site.node.value)
        return plan([replace(ctx.source, call, f"{prefix}.{new_call}")], Grade.UNSAFE)
    statement = getattr(site.binding, "statement", None)
    package = _plugins_package(getattr(statement, "module", None) or "")
    if not isinstance(statement, ast.ImportFrom) or package is None:
        return None
    if _module_names(ctx.tree).get(new_class, package) != package:
        return None  # the name is taken by something else
    return plan([replace(ctx.source, call, new_call)], Grade.UNSAFE, imports=[f"{package}:{new_class}"],
                releases=[site.node.id])


_APEX_AVAILABLE_ADVICE = ("delete the guard and the apex code it protects: no apex build since 25.07 has "
                          "apex.amp, so the flag is False wherever a current apex is installed")
_APEX_AVAILABLE_FIX = Fix(Grade.DISPLAY, "the guarded apex code has to go first")
_APEX_AVAILABLE_AFTER = "HAS_APEX_AMP = False  # no apex build since 25.07 has apex.amp: delete what it guards\n"
_AMP_TYPE_ADVICE = 'use the string value ("native" or "apex"), or delete the apex branch'
_AMP_TYPE_FIX = Fix(Grade.DISPLAY, "the apex branch it guards usually goes away as a whole")


def fix_drop(ctx, finding) -> Optional[Plan]:
    """Drop an apex setting: safe for the "native" value, unsafe for apex (numerics change)."""
    site = finding.site
    edit = drop_option(ctx.source, site)
    return plan([edit], Grade.SAFE if site.value == "native" else Grade.UNSAFE) if edit else None


def fix_precision(ctx, finding) -> Optional[Plan]:
    site = finding.site
    edit = replace_value(ctx.source, site.node, site.value_node, site.replacement.strip('"'))
    return plan([edit], Grade.SAFE) if edit else None


RULES = [
    Rule(
        code="APX002",
        title="Trainer(amp_backend=...)",
        match=(
            Keyword("amp_backend", callees=TRAINERS, library="lightning", any_call=True, dict_forms=True, argv=True,
                    cli_definitions=True),
        ),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", source="PL-01, PL-18, PL-19"),
        subject="Trainer(amp_backend=...)",
        advice="drop it (native AMP is the only backend) and set precision={precision_16}",
        fix=Fix(Grade.UNSAFE, 'dropping amp_backend="apex" moves training from apex O1/O2 to native AMP; '
                'dropping "native" is safe'),
        doc=("Lightning 1.9 deprecated `amp_backend` (any value, since the default became None) and "
             "2.0 removed it: `Trainer.__init__` takes no `**kwargs`, so it raises TypeError. Found "
             "on Trainer calls, on any call and in dict literals or `dict(...)` in a module that "
             "imports Lightning (Trainer construction is often wrapped), as `--amp_backend` in "
             "argument lists, and as the flag `parser.add_argument(\"--amp_backend\")` defines for "
             "`Trainer.from_argparse_args`."),
        before='import pytorch_lightning as pl\n\ntrainer = pl.Trainer(amp_backend="apex", precision=16)\n',
        after='import pytorch_lightning as pl\n\ntrainer = pl.Trainer(precision="16-mixed")\n',
        invalid=(
            'import lightning as L\ntrainer_kwargs = {"amp_backend": "native"}\n',
            'from pytorch_lightning import Trainer\nt = Trainer.from_argparse_args(args, amp_backend="apex")\n',
            'import pytorch_lightning as pl\nargs = parser.parse_args(["--amp_backend", "apex"])\n',
            'import pytorch_lightning as pl\nparser.add_argument("--amp_backend", default="native")\n',
            'import pytorch_lightning as pl\ndef build(**kw):\n    return pl.Trainer(**kw)\n'
            'build(amp_backend="apex")\n',
            'import functools, pytorch_lightning as pl\nmake = functools.partial(pl.Trainer, amp_backend="apex")\n',
            'import flash\ntrainer = flash.Trainer(amp_backend="apex")\n',
        ),
        valid=(
            'from mylib import Trainer\ntrainer = Trainer(amp_backend="apex")\n',
            'import argparse\nparser = argparse.ArgumentParser()\n'
            'parser.add_argument("--amp_backend", help="apex or native")\n',
            'import pytorch_lightning as pl\nparser.add_argument("--backend", help="amp_backend: apex or native")\n',
        ),
        fixer=fix_drop,
    ),
    Rule(
        code="APX003",
        title="amp_level=",
        match=(
            Keyword("amp_level", callees=(*TRAINERS, "lightning:ApexMixedPrecisionPlugin", *_DEEPSPEED_PRECISION),
                    library="lightning", any_call=True, dict_forms=True, argv=True, cli_definitions=True),
            Keyword("amp_level", callees=_DEEPSPEED_PRECISION, position=2),
        ),
        timeline=Timeline("lightning", "1.8.0", removed_in="2.0.0", source="PL-02, PL-11"),
        subject="amp_level=...",
        advice="drop it (it only configured apex's opt level)",
        fix=Fix(Grade.UNSAFE, "dropping it changes training from apex O1/O2 to native AMP"),
        doc=("`amp_level` selected the apex opt level. Lightning 1.8 deprecated it on the Trainer, "
             "1.9 everywhere, and 2.0 removed it. Also found positionally: "
             "`DeepSpeedPrecisionPlugin(16, \"apex\", \"O2\")`."),
        before='import pytorch_lightning as pl\n\ntrainer = pl.Trainer(precision=16, amp_level="O2")\n',
        after='import pytorch_lightning as pl\n\ntrainer = pl.Trainer(precision="16-mixed")\n',
        invalid=(
            'from pytorch_lightning.plugins import DeepSpeedPrecisionPlugin\n'
            'p = DeepSpeedPrecisionPlugin(16, "apex", "O2")\n',
            'import pytorch_lightning as pl\nsys.argv += ["--trainer.amp_level=O2"]\n',
            'import pytorch_lightning as pl\ntrainer_args = {}\ntrainer_args["amp_level"] = "O2"\n',
        ),
        valid=('cfg = dict(amp_level="O1")\n', 'import nemo\nmodel = nemo.Model(amp_level="O1")\n',
               'settings = {}\nsettings["amp_level"] = "O1"\n'),
        fixer=fix_drop,
    ),
    Rule(
        code="APX004",
        title="ApexMixedPrecisionPlugin",
        match=(Symbols("lightning", {"ApexMixedPrecisionPlugin": ""}),),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", replacement_since="1.9.0", source="PL-04"),
        subject="{name}",
        advice="use Trainer(precision={precision_16}), or {mixed_precision_plugin} as a plugin",
        fix=Fix(Grade.UNSAFE, "moves training from apex to native AMP; calls become the target's "
                "MixedPrecision(\"16-mixed\", \"cuda\") and the import follows"),
        doc=("Lightning's apex plugin was deprecated in 1.9 and its module deleted in 2.0. Found at "
             "imports, calls, subclasses and isinstance checks, under `pytorch_lightning` and "
             "`lightning.pytorch`."),
        before=('from pytorch_lightning.plugins import ApexMixedPrecisionPlugin\n\n'
                'trainer = Trainer(plugins=[ApexMixedPrecisionPlugin(amp_level="O2")])\n'),
        after=('from pytorch_lightning.plugins import MixedPrecision\n\n'
               'trainer = Trainer(plugins=[MixedPrecision("16-mixed", "cuda")])\n'),
        invalid=(
            'import lightning.pytorch as pl\nclass P(pl.plugins.precision.ApexMixedPrecisionPlugin):\n    pass\n',
            'import pytorch_lightning as pl\nok = isinstance(p, pl.plugins.ApexMixedPrecisionPlugin)\n',
        ),
        valid=('class ApexMixedPrecisionPlugin:\n    pass\n\np = ApexMixedPrecisionPlugin()\n',),
        fixer=fix_apex_plugin,
    ),
    Rule(
        code="APX005",
        title="DeepSpeedPrecisionPlugin(amp_type=...)",
        match=(Keyword("amp_type", callees=_DEEPSPEED_PRECISION, position=1),),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", source="PL-11, LF-02"),
        subject="DeepSpeedPrecisionPlugin(amp_type=...)",
        advice="drop it (native AMP is the only backend): {deepspeed_precision}",
        fix=Fix(Grade.UNSAFE, 'amp_type="apex" moves to native AMP when dropped'),
        doc=("`DeepSpeedPrecisionPlugin(precision, amp_type, amp_level)` lost `amp_type` and "
             "`amp_level` in Lightning 2.0 (Lite's `DeepSpeedPrecision` in 1.9)."),
        before=('from pytorch_lightning.plugins import DeepSpeedPrecisionPlugin\n\n'
                'plugin = DeepSpeedPrecisionPlugin(16, amp_type="apex")\n'),
        after='from pytorch_lightning.plugins import DeepSpeedPrecision\n\nplugin = DeepSpeedPrecision("16-mixed")\n',
        invalid=('from lightning_lite.plugins import DeepSpeedPrecision\np = DeepSpeedPrecision(16, "native")\n',),
        fixer=fix_drop,
    ),
    Rule(
        code="APX006",
        title="AMPType",
        match=(Symbols("lightning.pytorch.utilities.enums", {"AMPType": ""}),),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", source="PL-12"),
        subject="{name}",
        advice=_AMP_TYPE_ADVICE,
        fix=_AMP_TYPE_FIX,
        doc=("`pytorch_lightning.utilities.enums.AMPType` warns on every member access since Lightning 1.9 "
             "and is gone in 2.0."),
        before=('from pytorch_lightning.utilities.enums import AMPType\n\n'
                'if backend == AMPType.APEX:\n    pass\n'),
        after='if backend == "apex":\n    pass\n',
        invalid=('import pytorch_lightning as pl\nbackend = pl.utilities.enums.AMPType("apex")\n',),
    ),
    Rule(
        code="APX006",
        title="AMPType re-exports",
        match=(Symbols("lightning.pytorch.utilities", {"AMPType": ""}),
               Symbols("lightning.fabric.utilities", {"AMPType": ""})),
        timeline=Timeline("lightning", None, removed_in="1.9.0", source="PL-12, LF-03"),
        subject="{name}",
        advice=_AMP_TYPE_ADVICE,
        fix=_AMP_TYPE_FIX,
        doc=("The re-export `pytorch_lightning.utilities.AMPType` and Lite's `lightning_lite.utilities.AMPType` "
             "were removed in Lightning 1.9 without a deprecation period: importing them is an ImportError "
             "from 1.9 on (only `utilities.enums.AMPType` warned, until 2.0)."),
        before=('from pytorch_lightning.utilities import AMPType\n\n'
                'if backend == AMPType.APEX:\n    pass\n'),
        after='if backend == "apex":\n    pass\n',
        invalid=('from lightning_lite.utilities.enums import AMPType\n',),
    ),
    Rule(
        code="APX006",
        title="Trainer.amp_backend read",
        match=(
            AttributeRead(
                "amp_backend", library="lightning", receiver_hint="trainer", receivers=("lightning:Trainer",)
            ),
        ),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", source="PL-03"),
        subject="Trainer.amp_backend",
        advice="remove it (it is always native); to check for mixed precision use "
               "isinstance(trainer.precision_plugin, {mixed_precision})",
        fix=Fix(Grade.DISPLAY, "the check it feeds has to be rewritten by a person"),
        doc=("Reading `trainer.amp_backend` warns since Lightning 1.9 and fails in 2.0. Found on "
             "receivers named like a trainer (`trainer`, `self.trainer`) in modules importing Lightning."),
        before='import lightning.pytorch as pl\n\nif self.trainer.amp_backend == "apex":\n    pass\n',
        after=('from lightning.pytorch.plugins import MixedPrecision\n\n'
               'if isinstance(self.trainer.precision_plugin, MixedPrecision):\n    pass\n'),
        valid=('import pytorch_lightning as pl\nself.amp_backend = "native"\n',
               'config.amp_backend\n'),
    ),
    Rule(
        code="APX006",
        title="_APEX_AVAILABLE",
        match=(Symbols("lightning.pytorch.utilities", {"_APEX_AVAILABLE": ""}),),
        timeline=Timeline("lightning", None, removed_in="1.9.0", source="PL-14"),
        subject="{name}",
        advice=_APEX_AVAILABLE_ADVICE,
        fix=_APEX_AVAILABLE_FIX,
        doc=("`_APEX_AVAILABLE` (`module_available(\"apex.amp\")`) left `pytorch_lightning.utilities` in 1.9 "
             "without deprecation. `importlib.util.find_spec(\"apex.amp\")` is no replacement: it raises "
             "ModuleNotFoundError when apex is not installed, and `find_spec(\"apex\")` is also satisfied by "
             "the unrelated PyPI package `apex`. No check is needed any more: no apex build since 25.07 has "
             "`apex.amp`, so the flag is False wherever a current apex is installed (a probe of `apex.amp` "
             "would itself be an APX001 finding); delete the guard with the apex branch it protects."),
        before="from pytorch_lightning.utilities import _APEX_AVAILABLE\n",
        after=_APEX_AVAILABLE_AFTER,
        invalid=("from pytorch_lightning.utilities.imports import _APEX_AVAILABLE\n",),
    ),
    Rule(
        code="APX006",
        title="_APEX_AVAILABLE of the apex plugin",
        match=(Symbols("lightning.pytorch.plugins.precision.apex_amp", {"_APEX_AVAILABLE": ""}),),
        timeline=Timeline("lightning", None, removed_in="2.0.0", source="PL-14"),
        subject="{name}",
        advice=_APEX_AVAILABLE_ADVICE,
        fix=_APEX_AVAILABLE_FIX,
        doc=("Lightning 1.9 re-created `_APEX_AVAILABLE` privately in the apex plugin's module "
             "(`RequirementCache(\"apex\")`, which the unrelated PyPI `apex` satisfies); 2.0 deleted the module."),
        before="from pytorch_lightning.plugins.precision.apex_amp import _APEX_AVAILABLE\n",
        after=_APEX_AVAILABLE_AFTER,
    ),
    Rule(
        code="APX007",
        title="`Native*` precision plugins",
        match=(
            Symbols(
                "lightning",
                {
                    "NativeMixedPrecisionPlugin": "{mixed_precision}",
                    "ShardedNativeMixedPrecisionPlugin":
                        'Trainer(strategy="{fsdp_strategy}", precision={precision_16})',
                    "FullyShardedNativeMixedPrecisionPlugin":
                        'Trainer(strategy="{fsdp_strategy}", precision={precision_16})',
                    "NativeMixedPrecision": "MixedPrecision",
                },
            ),
        ),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", replacement_since="1.9.0",
                          source="PL-05, PL-08, PL-09, LF-01"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.SAFE, "a rename to the class that replaced it, with its import and every use, and a "
                "literal precision argument in the 2.0 spelling; a computed one makes it unsafe" + _IDENTITY),
        doc=("Lightning 1.9 renamed `NativeMixedPrecisionPlugin` to `MixedPrecisionPlugin` (now "
             "`MixedPrecision`) and deprecated the FairScale sharded variants; 2.0 removed the old "
             "names. Lite's `NativeMixedPrecision` became Fabric's `MixedPrecision` in 1.9."),
        before=('from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n\n'
                'plugin = NativeMixedPrecisionPlugin(16, "cuda")\n'),
        after='from pytorch_lightning.plugins import MixedPrecision\n\nplugin = MixedPrecision("16-mixed", "cuda")\n',
        invalid=('from lightning_lite.plugins import NativeMixedPrecision\n',),
        valid=('from lightning.pytorch.plugins import MixedPrecision\n',),
        fixer=fix_rename,
    ),
    Rule(
        code="APX007",
        title="FullyShardedNativeNativeMixedPrecisionPlugin",
        match=(Symbols("lightning", {"FullyShardedNativeNativeMixedPrecisionPlugin": "{fsdp_precision}"}),),
        timeline=Timeline("lightning", None, removed_in="2.0.0", replacement_since="2.0.0", source="PL-10"),
        subject="{name}",
        advice=ByFloor("lightning", ((None, "use {replacement}"),
                                     ("2.1.0", "use {replacement} without the device argument"))),
        fix=Fix(Grade.SAFE, "a rename to the class that replaced it; the device argument, which "
                "FSDPPrecision (2.1.1) and FSDPPrecisionPlugin (2.1.0) do not take, is dropped when it is "
                "a constant or a name, and a literal precision is converted to the 2.0 spelling" + _IDENTITY),
        doc=("Lightning 2.0 renamed the native FSDP precision plugin to `FSDPMixedPrecisionPlugin` "
             "without a deprecation period (same parameters: precision, device, scaler); 2.1.0 replaced that "
             "with `FSDPPrecisionPlugin(precision, scaler)` and 2.1.1 renamed it `FSDPPrecision`. "
             "`FSDPPrecision(\"16-mixed\", \"cuda\")` raises ValueError: the device must go."),
        before=("from pytorch_lightning.plugins.precision.fsdp_native_native_amp import (\n"
                "    FullyShardedNativeNativeMixedPrecisionPlugin,\n)\n\n"
                'plugin = FullyShardedNativeNativeMixedPrecisionPlugin(16, "cuda")\n'),
        after=('from pytorch_lightning.plugins import (\n    FSDPPrecision,\n)\n\n'
               'plugin = FSDPPrecision("16-mixed")\n'),
        fixer=fix_rename,
    ),
    Rule(
        code="APX007",
        title="FSDPMixedPrecisionPlugin",
        match=(Symbols("lightning", {"FSDPMixedPrecisionPlugin": "{fsdp_precision}"}),),
        timeline=Timeline("lightning", "2.1.0", replacement_since="2.1.0", source="PL-10"),
        subject="{name}",
        advice="use {replacement} without the device argument",
        fix=Fix(Grade.SAFE, "the deprecated class passes precision and scaler on to the new one and ignores "
                "the device; the device argument is dropped when it is a constant or a name" + _IDENTITY),
        doc=("`FSDPMixedPrecisionPlugin(precision, device, scaler)` warns since Lightning 2.1.0, where "
             "`FSDPPrecisionPlugin(precision, scaler)` replaced it (renamed `FSDPPrecision` in 2.1.1). It "
             "still works through a shim that drops the device."),
        before=('from lightning.pytorch.plugins import FSDPMixedPrecisionPlugin\n\n'
                'plugin = FSDPMixedPrecisionPlugin("bf16-mixed", "cuda")\n'),
        after='from lightning.pytorch.plugins import FSDPPrecision\n\nplugin = FSDPPrecision("bf16-mixed")\n',
        invalid=('import lightning.pytorch as pl\n'
                 'p = pl.plugins.precision.FSDPMixedPrecisionPlugin("16-mixed", device="cuda", scaler=None)\n',),
        fixer=fix_rename,
    ),
    Rule(
        code="APX007",
        title="`*Plugin` precision classes",
        match=(Symbols("lightning", _PLUGIN_SUFFIX_RENAMES),),
        timeline=Timeline("lightning", "2.2.0", replacement_since="2.1.1", source="PL-06"),
        subject="{name}",
        advice="use {replacement}",
        fix=Fix(Grade.SAFE, "the old name is an alias (2.1.1) or a subclass shim (2.2.0 on) of the new one, "
                "with the same parameters" + _IDENTITY),
        doc=("Lightning 2.1.1 renamed the precision classes with a `Plugin` suffix and kept the old names "
             "as silent aliases; from 2.2.0 they are shims that warn. Code that must run on 2.1.0 or older "
             "keeps the old names (the new ones do not exist there)."),
        before=('from lightning.pytorch.plugins import MixedPrecisionPlugin\n\n'
                'plugin = MixedPrecisionPlugin("16-mixed", "cuda")\n'),
        after='from lightning.pytorch.plugins import MixedPrecision\n\nplugin = MixedPrecision("16-mixed", "cuda")\n',
        invalid=('import lightning.pytorch as pl\np = pl.plugins.precision.DeepSpeedPrecisionPlugin("16-mixed")\n',),
        fixer=fix_rename,
    ),
    Rule(
        code="APX007",
        title="1.x base class precision.mixed.MixedPrecisionPlugin",
        match=(Symbols("lightning.pytorch.plugins.precision.mixed", {"MixedPrecisionPlugin": ""}),),
        timeline=Timeline("lightning", None, removed_in="1.8.0", source="PL-21"),
        subject="{name}",
        advice=("use isinstance(plugin, {mixed_precision}) to test for native mixed precision (the removed "
                "class was the abstract base of the apex and the native AMP plugins)"),
        fix=Fix(Grade.DISPLAY, "the base class covered the apex plugin too, so no class replaces it exactly"),
        doc=("Lightning 1.5-1.7 had an abstract `MixedPrecisionPlugin` in `plugins/precision/mixed.py`, the "
             "base of the apex and native AMP plugins; 1.8.0 deleted the module. It is not the native AMP "
             "plugin that 1.9 named `MixedPrecisionPlugin` (now `MixedPrecision`), so it is not renamed."),
        before=('from pytorch_lightning.plugins.precision.mixed import MixedPrecisionPlugin\n\n'
                'if isinstance(trainer.precision_plugin, MixedPrecisionPlugin):\n    pass\n'),
        after=('from lightning.pytorch.plugins import MixedPrecision\n\n'
               'if isinstance(trainer.precision_plugin, MixedPrecision):\n    pass\n'),
    ),
    Rule(
        code="APX008",
        title="precision=16 and \"bf16\"",
        match=(Keyword("precision", callees=_PRECISION_CALLEES,
                       values={16: '"16-mixed"', "16": '"16-mixed"', "bf16": '"bf16-mixed"'}),),
        timeline=Timeline("lightning", "2.0.0", replacement_since="2.0.0", source="PL-16", status=DISCOURAGED),
        subject="precision={value}",
        advice="use precision={replacement}",
        fix=Fix(Grade.SAFE, "Lightning maps the legacy value to exactly this one"),
        doc=("Lightning 2.0 renamed the precision values: 16 -> \"16-mixed\", \"bf16\" -> \"bf16-mixed\" (each "
             "literal arm of `16 if fp16 else 32` too). "
             "The old ones still work, with a UserWarning (not a deprecation warning): \"`precision=16` is "
             "supported for historical reasons but its usage is discouraged. Please set your precision to "
             "16-mixed instead!\". " + _PRECISION_CALLEES_DOC),
        before='from lightning.pytorch import Trainer\n\ntrainer = Trainer(precision=16)\n',
        after='from lightning.pytorch import Trainer\n\ntrainer = Trainer(precision="16-mixed")\n',
        invalid=(
            'import lightning as L\nfabric = L.Fabric(precision="bf16")\n',
            'import pytorch_lightning as pl\nt = pl.Trainer(**{"precision": 16})\n',
            'import pytorch_lightning as pl\nt = pl.Trainer(precision=16 if args.fp16 else 32)\n',
        ),
        valid=(
            'import numpy as np\nimport pytorch_lightning as pl\nnp.set_printoptions(precision=16)\n',
            'import pytorch_lightning as pl\nt = pl.Trainer(precision="16-mixed")\n',
            'import torchmetrics\nm = torchmetrics.Precision(precision=16)\n',
        ),
        fixer=fix_precision,
    ),
    Rule(
        code="APX010",
        title="precision=32 and 64",
        match=(Keyword("precision", callees=_PRECISION_CALLEES,
                       values={32: '"32-true"', "32": '"32-true"', 64: '"64-true"', "64": '"64-true"'}),),
        timeline=Timeline("lightning", "2.0.0", replacement_since="2.0.0", source="PL-16", status=LEGACY),
        subject="precision={value}",
        advice="use precision={replacement}",
        fix=Fix(Grade.SAFE, "Lightning maps the legacy value to exactly this one"),
        doc=("Lightning 2.0 renamed 32 -> \"32-true\" and 64 -> \"64-true\". No release warns for the old "
             "values: 2.x documents and accepts them as aliases, so this is a spelling to modernise, not a "
             "deprecation, and off by default (flake8's extended default ignore): working code is not noise to "
             "report. Enable it with `--extend-select APX010` or `--select APX`. " + _PRECISION_CALLEES_DOC),
        before='from lightning.pytorch import Trainer\n\ntrainer = Trainer(precision=32)\n',
        after='from lightning.pytorch import Trainer\n\ntrainer = Trainer(precision="32-true")\n',
        invalid=(
            'import pytorch_lightning as pl\nclass MyTrainer(pl.Trainer):\n    pass\nt = MyTrainer(precision=32)\n',
            'import lightning as L\nfabric = L.Fabric(precision="64")\n',
        ),
        valid=('import pytorch_lightning as pl\nt = pl.Trainer(precision="32-true")\n',),
        fixer=fix_precision,
        default_off=True,
    ),
    Rule(
        code="APX009",
        title="using_native_amp",
        match=(
            Parameter("optimizer_step", "using_native_amp", library="lightning"),
            Keyword("using_native_amp", library="lightning", any_call=True),
        ),
        timeline=Timeline("lightning", "1.9.0", removed_in="2.0.0", source="PL-15"),
        subject="optimizer_step(using_native_amp=...)",
        advice="drop it: def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None)",
        fix=Fix(Grade.DISPLAY, "the 2.0 hook signature drops several parameters at once"),
        doc=("Overriding `LightningModule.optimizer_step` with a `using_native_amp` parameter warns "
             "since 1.9; 2.0 calls the hook with the new signature."),
        before=('import pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n'
                '    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx,\n'
                '                       optimizer_closure, on_tpu, using_native_amp, using_lbfgs):\n'
                '        optimizer.step(closure=optimizer_closure)\n'),
        after=('import lightning.pytorch as pl\n\nclass M(pl.LightningModule):\n'
               '    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):\n'
               '        optimizer.step(closure=optimizer_closure)\n'),
        valid=('def optimizer_step(self, using_native_amp):\n    pass\n',),
    ),
]
