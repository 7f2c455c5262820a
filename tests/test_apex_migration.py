"""The apex AMP migration (`fix --unsafe-fixes` on APX101-APX103): realistic legacy training
scripts migrate to exactly the reviewed text, which parses, adds no pyflakes warning and is
stable; every shape the migration does not know is left as it is, with the reason. (That the
migrated scripts train with real torch is checked in conformance/test_migration.py.)"""
from __future__ import annotations

import ast
import json
import shutil
import textwrap
from pathlib import Path

import pytest
from pyflakes.api import check as pyflakes_check
from pyflakes.reporter import Reporter

from packaging.version import Version

from flake8_no_apex.fixer import Round, fix_text
from helpers import COMMAND, run_command

SCRIPTS = Path(__file__).parent / "apex_migration"
MIGRATED_CODES = {"APX001", "APX101", "APX102", "APX103"}


def pyflakes(text: str) -> set:
    """The pyflakes messages of a module, without their line numbers."""
    import io

    out = io.StringIO()
    pyflakes_check(text, "module.py", Reporter(out, out))
    return {line.split(" ", 1)[1] for line in out.getvalue().splitlines()}


def migrate(text: str):
    return fix_text(textwrap.dedent(text), unsafe=True)


def check_migrated(before: str, after: str) -> None:
    result = migrate(before)
    assert result.text == textwrap.dedent(after)
    assert fix_text(result.text, unsafe=True).text == result.text, "a second run changes nothing"


def check_refused(before: str, reason: str) -> None:
    result = migrate(before)
    assert result.text == textwrap.dedent(before)
    assert any(reason in note for _, note in result.notes), result.notes


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.stem)
def test_legacy_script_migrates_to_the_reviewed_text(script):
    result = fix_text(script.read_text(), unsafe=True)
    assert result.text == (SCRIPTS / "fixed" / script.name).read_text()
    assert not [f for f in result.remaining if f.code in MIGRATED_CODES]
    tree = ast.parse(result.text)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {name for name in imported if name and name.split(".")[0] in ("apex", "amp")}
    assert "amp" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert fix_text(result.text, unsafe=True).text == result.text


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.stem)
def test_migrated_script_has_no_new_pyflakes_warning(script):
    before = script.read_text()
    assert pyflakes(fix_text(before, unsafe=True).text) <= pyflakes(before)


def test_fp16_optimizer_code_beside_migrated_amp_code_stays_for_a_person():
    result = fix_text((SCRIPTS.parent / "fixtures" / "apex_training.py").read_text(), unsafe=True)
    assert "scaler.scale(loss).backward()" in result.text
    assert {f.code for f in result.remaining} == {"APX001", "APX106", "APX110"}


def test_safe_fixes_leave_the_training_step_alone():
    source = (SCRIPTS / "clipping.py").read_text()
    result = fix_text(source)
    assert result.text == source and result.unsafe == 3  # initialize, scale_loss, master_params


def test_opt_level_o0_drops_amp():
    check_migrated(
        """\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O0")
        for x, y in loader:
            loss = criterion(model(x), y) / 2
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward(retain_graph=True)
            optimizer.step()
        """,
        """\
        for x, y in loader:
            loss = criterion(model(x), y) / 2
            loss.backward(retain_graph=True)
            optimizer.step()
        """,
    )


def test_enabled_flag_and_renamed_results():
    check_migrated(
        """\
        import torch as th
        import apex

        def fit(model, optimizer, loader, use_amp):
            net, opt = apex.amp.initialize(model, optimizer, enabled=use_amp, verbosity=0)
            for batch in loader:
                out = net(batch)
                loss = out.mean()  # the loss
                with apex.amp.scale_loss(loss, opt) as scaled:  # scaled by apex
                    scaled.backward()
                opt.step()
        """,
        """\
        import torch as th

        def fit(model, optimizer, loader, use_amp):
            scaler = th.amp.GradScaler("cuda", enabled=bool(use_amp))
            net, opt = model, optimizer
            for batch in loader:
                with th.amp.autocast("cuda", enabled=scaler.is_enabled()):
                    out = net(batch)
                    loss = out.mean()  # the loss
                scaler.scale(loss).backward()  # scaled by apex
                scaler.step(opt)
                scaler.update()
        """,
    )


def test_the_scaler_takes_a_free_name_and_the_file_indentation():
    check_migrated(
        """\
        from apex import amp

        def train(model, optimizer, loader, scaler=None):
        \tmodel, optimizer = amp.initialize(model, optimizer)
        \tfor x in loader:
        \t\tloss = model(x).sum()
        \t\twith amp.scale_loss(loss, optimizer) as scaled_loss:
        \t\t\tscaled_loss.backward()
        \t\toptimizer.step()
        """,
        """\
        import torch

        def train(model, optimizer, loader, scaler=None):
        \tgrad_scaler = torch.amp.GradScaler("cuda")
        \tfor x in loader:
        \t\twith torch.amp.autocast("cuda"):
        \t\t\tloss = model(x).sum()
        \t\tgrad_scaler.scale(loss).backward()
        \t\tgrad_scaler.step(optimizer)
        \t\tgrad_scaler.update()
        """,
    )


def test_several_losses_of_one_optimizer_share_the_scaler_and_unscale_once():
    check_migrated(
        """\
        import torch
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for x in loader:
            first = model(x).sum()
            with amp.scale_loss(first, optimizer) as scaled_loss:
                scaled_loss.backward()
            second = model(x).mean()
            with amp.scale_loss(second, optimizer) as scaled_loss:
                scaled_loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            torch.nn.utils.clip_grad_value_(amp.master_params(optimizer), 1.0)
            optimizer.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for x in loader:
            with torch.amp.autocast("cuda"):
                first = model(x).sum()
            scaler.scale(first).backward()
            with torch.amp.autocast("cuda"):
                second = model(x).mean()
            scaler.scale(second).backward()
            scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            torch.nn.utils.clip_grad_value_((p for group in optimizer.param_groups for p in group["params"]), 1.0)
            scaler.step(optimizer)
            scaler.update()
        """,
    )


def test_an_enabled_flag_also_stands_for_the_if_around_the_scaled_backward():
    check_migrated(
        """\
        from apex import amp

        def train(args, model, optimizer, loader):
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1", enabled=args.amp)
            for x in loader:
                loss = model(x).sum()
                if args.amp:
                    with amp.scale_loss(loss, optimizer) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()
                optimizer.step()
        """,
        """\
        import torch

        def train(args, model, optimizer, loader):
            scaler = torch.amp.GradScaler("cuda", enabled=bool(args.amp))
            for x in loader:
                with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """,
    )


def test_an_optional_apex_probe_and_its_installed_check_go_with_the_migration():
    """flair's trainers (0.5) and torchvision's references: apex imported if installed."""
    check_migrated(
        """\
        import sys

        import torch

        try:
            from apex import amp
        except ImportError:
            amp = None


        class Trainer:
            def train(self, loader, use_amp=False, amp_opt_level="O1"):
                if use_amp:
                    if sys.version_info < (3, 0):
                        raise RuntimeError("Apex currently only supports Python 3. Aborting.")
                    if amp is None:
                        raise RuntimeError("Failed to import apex.")
                optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
                if use_amp:
                    self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=amp_opt_level)
                for batch in loader:
                    # forward pass
                    loss = self.model.forward_loss(batch)

                    # Backward
                    if use_amp:
                        with amp.scale_loss(loss, optimizer) as scaled_loss:
                            scaled_loss.backward()
                    else:
                        loss.backward()
                    optimizer.step()

            def find_learning_rate(self, loader):
                optimizer = torch.optim.SGD(self.model.parameters(), lr=1e-7)
                for batch in loader:
                    self.model.forward_loss(batch).backward()
                    optimizer.step()
        """,
        """\
        import sys

        import torch


        class Trainer:
            def train(self, loader, use_amp=False, amp_opt_level="O1"):
                if use_amp:
                    if sys.version_info < (3, 0):
                        raise RuntimeError("Apex currently only supports Python 3. Aborting.")
                optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
                scaler = torch.amp.GradScaler("cuda", enabled=use_amp and (amp_opt_level != "O0"))
                for batch in loader:
                    # forward pass
                    with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                        loss = self.model.forward_loss(batch)

                    # Backward
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()

            def find_learning_rate(self, loader):
                optimizer = torch.optim.SGD(self.model.parameters(), lr=1e-7)
                for batch in loader:
                    self.model.forward_loss(batch).backward()
                    optimizer.step()
        """,
    )


def test_comments_of_the_rewritten_backward_stay_where_they_were():
    check_migrated(
        """\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, enabled=fp16)
        for x in loader:
            loss = model(x).sum()
            if fp16:  # mixed precision
                # scale first
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                # clip_grad_norm_(amp.master_params(optimizer), 1.0)
            else:
                loss.backward()
                # clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda", enabled=bool(fp16))
        for x in loader:
            with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                loss = model(x).sum()
            # scale first
            scaler.scale(loss).backward()  # mixed precision
            # clip_grad_norm_(amp.master_params(optimizer), 1.0)
            # clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        """,
    )


def test_data_loading_before_the_first_model_call_stays_outside_autocast():
    check_migrated(
        """\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            x = x.cuda()
            y = y.cuda()
            optimizer.zero_grad()
            output = model.module(x)
            loss = criterion(output, y)
            acc = (output.argmax(1) == y).float().mean()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            x = x.cuda()
            y = y.cuda()
            optimizer.zero_grad()
            with torch.amp.autocast("cuda"):
                output = model.module(x)
                loss = criterion(output, y)
            acc = (output.argmax(1) == y).float().mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """,
    )


@pytest.mark.parametrize("source, reason", [
    ("""\
     from apex import amp

     def step(model, optimizer, loss):
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step()
     """, "amp.initialize is not called in this module"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     """, "amp.scale_loss is not used in the module"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = compute_loss(x)
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step()
     """, "no call of the model before it in its function"),
    ("""\
     from apex import amp

     model, optimizers = amp.initialize(model, [make(group) for group in groups])
     """, "is not given its models and optimizers by name"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:  # noqa: APX102
             scaled_loss.backward()
         optimizer.step()
     """, "amp.scale_loss (line 6) is left as it is (a noqa comment or an unselected code)"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step(closure)
     """, "is not a plain call"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
             log(scaled_loss)
         optimizer.step()
     """, "does more than scaled_loss.backward()"),
    ("""\
     from apex import amp

     if args.fp16:
         model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         if args.half:
             with amp.scale_loss(loss, optimizer) as scaled_loss:
                 scaled_loss.backward()
         else:
             loss.backward()
         optimizer.step()
     """, "tests another condition than the one that enables apex"),
    ("""\
     from apex import amp

     def main():
         model, optimizer = amp.initialize(model, optimizer)
         run(model, optimizer)

     def run(model, optimizer):
         loss = model(1).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step()

     run(model, optimizer)
     """, "is used elsewhere than after amp.initialize"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         update(optimizer)

     def update(optimizer):
         optimizer.step()
     """, "is away from the scaled backward"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer, master_weights=True)
     """, "master_weights= has no native counterpart"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x, prompt=\"\"\"a
     b\"\"\").sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step()
     """, "holds a multi-line string"),
    ("""\
     from apex import amp

     model, optimizer = amp.initialize(model, optimizer)
     for x in loader:
         loss = model(x).sum()
         with amp.scale_loss(loss, optimizer) as scaled_loss:
             scaled_loss.backward()
         optimizer.step()
     handle = amp._amp_state.handle
     """, "amp._amp_state.handle (line 9) is apex's own state or API, which has no native counterpart"),
    ("""\
     import torch
     from apex.fp16_utils import FP16_Optimizer

     model = Net().cuda().half()
     optimizer = FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.1), static_loss_scale=128.0)
     """, "does not wrap an optimizer named in one assignment"),
    ("""\
     import torch
     from apex.fp16_utils import FP16_Optimizer

     model = Net().cuda().half()
     optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
     optimizer = FP16_Optimizer(optimizer, static_loss_scale=128.0)
     for x in loader:
         loss = model(x).sum()
         optimizer.backward(loss)
         optimizer.step()
     """, "tensors are made half precision on line 4"),
    ("""\
     import torch
     from apex.fp16_utils import FP16_Optimizer

     optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
     optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=args.dynamic)
     """, "dynamic_loss_scale= is not a literal"),
    ("""\
     import torch
     from apex.fp16_utils import FP16_Optimizer

     optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
     optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)
     for x in loader:
         loss = model(x).sum()
         optimizer.backward(loss)
         print(optimizer.loss_scale)
         optimizer.step()
     """, "FP16_Optimizer's loss_scale (line 9) has no native counterpart"),
    ("""\
     from apex import amp

     class Trainer:
         def __init__(self, scaler, grad_scaler, amp_scaler):
             self.scaler, self.grad_scaler, self.amp_scaler = scaler, grad_scaler, amp_scaler
             self.model, self.optimizer = amp.initialize(self.model, self.optimizer)

         def step(self, x):
             loss = self.model(x).sum()
             with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                 scaled_loss.backward()
             self.optimizer.step()
     """, "every attribute name the scaler could take is in use"),
])
def test_shapes_the_migration_does_not_know_are_left_with_the_reason(source, reason):
    check_refused(source, reason)


def test_the_fix_says_how_numerics_change():
    result = migrate("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """)
    assert result.notes == [(3, "opt_level O2 (fp16 master weights) became autocast, which keeps fp32 weights")]


# Regressions of issue 21: plans at a torch floor below 2.3, and FP16_Optimizer without a scale
@pytest.mark.parametrize("keywords, scaler", [
    (', loss_scale=128.0', "torch.cuda.amp.GradScaler(init_scale=128.0, growth_interval=2**31 - 1)"),
    (', opt_level=level', 'torch.cuda.amp.GradScaler(enabled=level != "O0")'),
])
def test_the_scaler_of_an_old_torch_takes_its_keywords_into_the_parentheses(keywords, scaler):
    before = f"""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer{keywords})
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """
    result = fix_text(textwrap.dedent(before), {"torch": Version("2.2")}, unsafe=True)
    assert f"scaler = {scaler}\n" in result.text
    assert not result.remaining
    # check's JSON, the editor and fix share the plan: at that floor too it compiles
    plans = Round.of(textwrap.dedent(before), {"torch": Version("2.2")}).plans()
    assert all(p is not None and scaler in "".join(e.text for e in p.edits) for p in plans if p is not None)
    assert any(p is not None for p in plans)


def test_fp16_optimizer_without_a_loss_scale_keeps_apex_default_of_one():
    """FP16_Optimizer(opt) stopped check, fix and the editor for the whole file (AttributeError)."""
    result = migrate("""\
        import torch
        from apex.fp16_utils import FP16_Optimizer

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer = FP16_Optimizer(optimizer)
        for x in loader:
            loss = model(x).sum()
            optimizer.backward(loss)
            optimizer.step()
        """)
    assert 'scaler = torch.amp.GradScaler("cuda", init_scale=1.0, growth_interval=2**31 - 1)\n' in result.text
    assert Round.of("from apex.fp16_utils import FP16_Optimizer\noptimizer = FP16_Optimizer(opt)\n", {}).plans()


def test_a_fixed_loss_scale_chosen_at_run_time_keeps_either_schedule():
    keywords = "init_scale=2.0**16 if args.dynamic else float(args.scale), growth_interval=2000 if args.dynamic else " \
               "2**31 - 1"
    check_migrated(
        """\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, loss_scale="dynamic" if args.dynamic else args.scale)
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda", KEYWORDS)
        for x in loader:
            with torch.amp.autocast("cuda"):
                loss = model(x).sum()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """.replace("KEYWORDS", keywords))


def test_apex_s_ceiling_starts_the_scaler_there_and_says_there_is_none_after():
    result = migrate("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, max_loss_scale=512.0, min_loss_scale=1.0)
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """)
    assert 'scaler = torch.amp.GradScaler("cuda", init_scale=512.0)\n' in result.text
    notes = " ".join(note for _, note in result.notes)
    assert "grow past 512.0; GradScaler has no ceiling" in notes and "below 1.0; GradScaler has no floor" in notes


def test_the_scaler_is_created_before_an_if_that_does_more_than_initialize():
    check_migrated(
        """\
        from apex import amp

        if args.fp16:
            model, optimizer = amp.initialize(model, optimizer)
            model = DataParallel(model)
        else:
            model = DataParallel(model)
        for x in loader:
            loss = model(x).sum()
            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda", enabled=bool(args.fp16))
        if args.fp16:
            model = DataParallel(model)
        else:
            model = DataParallel(model)
        for x in loader:
            with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                loss = model(x).sum()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """)


def test_a_forward_pass_outside_the_fp16_branch_and_one_update_after_the_last_step():
    check_migrated(
        """\
        from apex import amp

        [netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], num_losses=2)
        for x in loader:
            errD = netD(x).mean() - netD(netG(x).detach()).mean()
            if use_amp:
                errD *= 0.5
                with amp.scale_loss(errD, optD, loss_id=0) as scaled:
                    scaled.backward()
            optD.step()
            errG = -netD(netG(x)).mean()
            with amp.scale_loss(errG, [optG], loss_id=1) as scaled:
                scaled.backward()
            optG.step()
        """,
        """\
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for x in loader:
            with torch.amp.autocast("cuda"):
                errD = netD(x).mean() - netD(netG(x).detach()).mean()
            if use_amp:
                errD *= 0.5
                scaler.scale(errD).backward()
            scaler.step(optD)
            with torch.amp.autocast("cuda"):
                errG = -netD(netG(x)).mean()
            scaler.scale(errG).backward()
            scaler.step(optG)
            scaler.update()
        """)


def test_to_python_float_is_item():
    check_migrated(
        """\
        from apex.fp16_utils import to_python_float

        print(to_python_float(loss.data), to_python_float(a + b))
        """,
        """\
        print(loss.data.item(), (a + b).item())
        """)


def test_torch_clipping_on_every_micro_batch_stays_there_given_the_scale():
    """Between micro-batches the gradients stay scaled by the scale the step will unscale them
    by: torch's clipping keeps its place (apex clipped there) with its threshold times the
    scale, and a norm it returns is divided by it; value clipping returns nothing to divide."""
    result = migrate("""\
        import torch
        from torch.nn.utils import clip_grad_norm_ as clip
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if max_norm > 0:
                n = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm=m / 2)
            clip(amp.master_params(optimizer), max_norm)
            value = torch.nn.utils.clip_grad_value_(model.parameters(), 1)
            if (step + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
        """)
    params = '(p for group in optimizer.param_groups for p in group["params"])'
    assert result.text == textwrap.dedent(f"""\
        import torch
        from torch.nn.utils import clip_grad_norm_ as clip

        scaler = torch.amp.GradScaler("cuda")
        for step, x in enumerate(loader):
            with torch.amp.autocast("cuda"):
                loss = model(x).sum() / accumulation
            scaler.scale(loss).backward()
            if max_norm > 0:
                n = torch.nn.utils.clip_grad_norm_({params}, max_norm=(m / 2) * scaler.get_scale()) / scaler.get_scale()
            clip({params}, max_norm * scaler.get_scale())
            value = torch.nn.utils.clip_grad_value_(model.parameters(), 1 * scaler.get_scale())
            if (step + 1) % accumulation == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """)
    assert [note for _, note in result.notes if "clipping" in note] == [
        "the gradient clipping of lines 11, 12 and 13 runs after every micro-batch, as with apex; there the "
        "gradients are still scaled, so it clips them at its threshold times the scale and divides the norm it "
        "returns by it (scaler.get_scale() waits for the GPU)"]
    assert "unscale_" not in result.text  # nothing reads the gradients unscaled


def test_clipping_of_its_own_on_every_micro_batch_moves_to_the_step_with_its_condition():
    """apex unscaled on every backward, so a script could clip after each micro-batch; the
    scaler unscales once, at the step: clipping the fix cannot give the scale (a project's
    own function) moves there, under the `if` it ran in, with a note that it now clips once."""
    result = migrate("""\
        from apex import amp
        from utils import clip_grad_norm_

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                if max_norm > 0:
                    clip_grad_norm_(
                        amp.master_params(optimizer), max_norm)
            else:
                loss.backward()
            if (step + 1) % accumulation == 0:
                optimizer.step()
        """)
    assert result.text == textwrap.dedent("""\
        import torch
        from utils import clip_grad_norm_

        scaler = torch.amp.GradScaler("cuda")
        for step, x in enumerate(loader):
            with torch.amp.autocast("cuda"):
                loss = model(x).sum() / accumulation
            if fp16:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            if (step + 1) % accumulation == 0:
                scaler.unscale_(optimizer)
                if fp16:
                    if max_norm > 0:
                        clip_grad_norm_(
                            (p for group in optimizer.param_groups for p in group["params"]), max_norm)
                scaler.step(optimizer)
                scaler.update()
        """)
    assert any("the gradient clipping of line 10 ran after every backward" in note
               and "clips the accumulated gradients once per step instead of their running sum" in note
               for _, note in result.notes), result.notes


@pytest.mark.parametrize("source, reason", [
    ("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for x in loader:
            for chunk in x.split(2):
                loss = model(chunk).sum()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            optimizer.step()
        """, "the gradient clipping of line 9 runs after every scaled backward, and the `for` around it (line 5)"),
    ("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
            max_norm = schedule(step)
            if (step + 1) % accumulation == 0:
                optimizer.step()
        """, "the gradient clipping of line 8 reads names assigned before the optimizer step (line 11)"),
])
def test_clipping_that_cannot_move_to_the_step_unchanged_is_refused_with_that_reason(source, reason):
    check_refused(source, reason)


def test_gradients_read_for_another_purpose_away_from_the_step_are_refused_with_that_reason():
    check_refused(
        """\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            norms.append(model.weight.grad.norm())
            if (step + 1) % accumulation == 0:
                optimizer.step()
        """, "gradients are read on line 8, between the scaled backward and the optimizer step (line 10)")


def test_a_flag_that_said_whether_apex_is_installed_keeps_its_value_without_the_probe():
    result = migrate("""\
        mixed_precision = True
        try:  # faster training with apex
            from apex import amp
        except:
            print("apex recommended")
            mixed_precision = False

        if mixed_precision:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
        for x in loader:
            loss = model(x).sum()
            if mixed_precision:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
        """)
    assert "apex" not in result.text and "try:" not in result.text
    assert 'mixed_precision = True\n' in result.text
    assert 'scaler = torch.amp.GradScaler("cuda", enabled=mixed_precision)' in result.text
    assert any("mixed_precision no longer turns off where apex is not installed" in n for _, n in result.notes)


def test_changes_of_apex_op_lists_go_with_a_note_that_autocast_has_its_own():
    result = migrate("""\
        import sys
        import torch
        from apex import amp

        amp.lists.functional_overrides.FP32_FUNCS.remove("softmax")


        def main():
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()


        if __name__ == "__main__":
            if "apex" in sys.modules:
                amp.register_half_function(torch, "einsum")
            main()
        """)
    assert result.text == textwrap.dedent("""\
        import sys
        import torch


        def main():
            scaler = torch.amp.GradScaler("cuda")
            with torch.amp.autocast("cuda"):
                loss = model(x).sum()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


        if __name__ == "__main__":
            main()
        """)
    assert any("the changes of apex's op lists on lines 5, 18 went: autocast has op lists of its own" in note
               for _, note in result.notes), result.notes


def test_a_registration_whose_result_is_used_is_refused():
    check_refused("""\
        import torch
        from apex import amp

        einsum = amp.register_half_function(torch, "einsum")
        model, optimizer = amp.initialize(model, optimizer)
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, "the change of apex's op lists on line 4 is not a statement of its own")


@pytest.mark.parametrize("source, reason", [
    ("""\
        from apex import amp

        if fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O0")
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, "other than in the two branches of an `if` that chooses its loss scale"),
    ("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        teacher, unused = amp.initialize(teacher, [])
        loss = model(x).sum() + teacher(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, "the empty optimizer list amp.initialize returns (line 4) is used"),
    ("""\
        from apex import amp

        teacher = amp.initialize(teacher, opt_level="O2")
        print(teacher(x))
        """, "amp.initialize is given no optimizer in this module, so there is no training to migrate"),
])
def test_initializations_other_than_one_training_one_and_models_alone_are_refused(source, reason):
    check_refused(source, reason)


def test_a_clipping_result_is_not_moved_to_an_accumulation_step():
    check_refused("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            if (step + 1) % accumulation == 0:
                optimizer.step()
            print(norm)
        """, "the gradient clipping of line 8 assigns a name, which would keep its old value")


SETUP_FUNCTION = """\
    from apex import amp


    def setup(model, optimizer):
        model, optimizer = amp.initialize(model, optimizer)
        return model, optimizer


    def main():
        {call}
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    """


def test_a_setup_function_that_initializes_apex_returns_the_scaler_to_the_loop():
    result = migrate(SETUP_FUNCTION.format(call="model, optimizer = setup(model, optimizer)"))
    assert "    return model, optimizer, scaler\n" in result.text
    assert "    model, optimizer, scaler = setup(model, optimizer)\n" in result.text
    assert "    scaler.step(optimizer)\n" in result.text


def test_the_scaler_is_not_returned_where_the_result_is_not_unpacked_or_another_module_calls_it():
    check_refused(SETUP_FUNCTION.format(call="pair = setup(model, optimizer)"),
                  "the call of setup() on line 10 does not unpack its result")
    source = textwrap.dedent(SETUP_FUNCTION.format(call="model, optimizer = setup(model, optimizer)"))
    result = fix_text(source, unsafe=True, exported=lambda name: name == "setup")
    assert result.text == source
    assert any("setup() would have to return the scaler, and is used outside this module" in note
               for _, note in result.notes), result.notes


PROJECT = SCRIPTS / "project"


def fix_project(directory: Path, *names: str):
    """The real `fix --unsafe-fixes` over a copy of the project (or the named files of it)."""
    completed = run_command([*COMMAND, "fix", "--unsafe-fixes", "--output-format", "json", *(names or ["."])],
                            cwd=directory, capture_output=True, text=True, check=False)
    report = json.loads(completed.stdout)
    return {Path(entry["file"]).name: entry for entry in report["migration"]}


def test_a_project_whose_loop_and_checkpoints_live_in_other_modules_migrates_as_one(tmp_path):
    """main initializes apex; engine.py scales the losses, checkpoints.py saves apex's state:
    the functions of both take the scaler, main's calls pass it."""
    shutil.copytree(PROJECT, tmp_path / "project")
    migration = fix_project(tmp_path / "project")
    assert {name: entry["status"] for name, entry in migration.items()} == dict.fromkeys(
        ["checkpoints.py", "engine.py", "train.py"], "migrated")
    for path in sorted(PROJECT.glob("*.py")):
        fixed = (tmp_path / "project" / path.name).read_text()
        assert fixed == (SCRIPTS / "fixed" / "project" / path.name).read_text(), path.name
        assert pyflakes(fixed) <= pyflakes(path.read_text())
    assert fix_project(tmp_path / "project") == {}, "a second run changes nothing"


@pytest.mark.parametrize("names, refused", [
    (["engine.py", "checkpoints.py"], {"engine.py": "nor in a module of the run that imports do_train()",
                                       "checkpoints.py": "nor in a module of the run that imports"}),
    (["train.py"], {"train.py": "do_train() of engine.py uses apex AMP, and that module is not in this run"}),
    (["train.py", "engine.py"], {
        "train.py": "of checkpoints.py uses apex AMP, and that module is not in this run: fix the modules of the "
                    "project together",
        "engine.py": "do_train() is called from train.py, which cannot migrate"}),
])
def test_a_project_migrates_only_with_every_module_the_scaler_must_reach(tmp_path, names, refused):
    """A module of the project left out of the run cannot take the scaler: every module it
    should reach is left as it was, with the reason."""
    shutil.copytree(PROJECT, tmp_path / "project")
    migration = fix_project(tmp_path / "project", *names)
    for name, reason in refused.items():
        assert migration[name]["status"] == "refused" and reason in migration[name]["reason"], migration[name]
    for path in PROJECT.glob("*.py"):
        assert (tmp_path / "project" / path.name).read_text() == path.read_text(), path.name


def test_a_project_whose_main_module_star_imports_the_loop_keeps_every_module_on_apex(tmp_path):
    """`from engine import *`: which of engine's functions main calls, and so which must take the
    scaler, is not said by name; migrating main alone would leave engine scaling with apex
    that nothing initializes."""
    shutil.copytree(PROJECT, tmp_path / "project")
    train = tmp_path / "project" / "train.py"
    train.write_text(train.read_text().replace("from engine import do_train\n", "from engine import *\n"))
    migration = fix_project(tmp_path / "project")
    assert migration["train.py"]["status"] == "refused"
    assert "do_train() of engine.py uses apex AMP and this module takes that module's names through `import *` " \
           "(line 10): import the names it uses by name" in migration["train.py"]["reason"], migration
    assert all(entry["status"] == "refused" for entry in migration.values()), migration


def test_a_helper_that_cannot_migrate_keeps_the_whole_project_on_apex(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "project")
    engine = tmp_path / "project" / "engine.py"
    engine.write_text(engine.read_text().replace("    losses = []\n", "    losses = []\n    print(amp._amp_state)\n",
                                                 1))
    migration = fix_project(tmp_path / "project")
    assert migration["engine.py"]["status"] == "refused"
    assert "engine.py would take the scaler and cannot migrate: amp._amp_state (line 12) is apex's own state" in \
        migration["train.py"]["reason"]
    assert "train.py also hands the scaler to engine.py, which cannot migrate" in migration["checkpoints.py"]["reason"]
    assert (tmp_path / "project" / "train.py").read_text() == (PROJECT / "train.py").read_text()


def test_a_helper_passed_around_as_a_value_keeps_the_project_on_apex(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "project")
    train = tmp_path / "project" / "train.py"
    looped = "            loop = do_train\n            losses += loop("
    train.write_text(train.read_text().replace("            losses += do_train(", looped, 1))
    migration = fix_project(tmp_path / "project")
    assert "do_train() of engine.py uses apex AMP and is used on line 33 other than called" in \
        migration["train.py"]["reason"]
    assert migration["engine.py"]["status"] == "refused"


TRAINER_PROJECT = SCRIPTS / "trainer_project"


def test_a_trainer_class_scaling_for_another_module_s_initialize_creates_its_own_scaler(tmp_path):
    """A library's optimizer helper initializes apex and returns the model and optimizer to the
    user, who hands them to the library's Trainer, which scales (FARM's shape): the Trainer
    creates its scaler in __init__, enabled by the attribute its apex branches test; the
    helper's amp.initialize goes, with a note naming the class."""
    shutil.copytree(TRAINER_PROJECT, tmp_path / "project")
    migration = fix_project(tmp_path / "project")
    assert {name: entry["status"] for name, entry in migration.items()} == dict.fromkeys(
        ["optimization.py", "trainer.py"], "migrated")
    assert any("goes without a scaler in its place: Trainer of trainer.py, which scales the losses, creates its own"
               in note for note in migration["optimization.py"]["notes"]), migration
    for path in sorted(TRAINER_PROJECT.glob("*.py")):
        fixed = (tmp_path / "project" / path.name).read_text()
        assert fixed == (SCRIPTS / "fixed" / "trainer_project" / path.name).read_text(), path.name
        assert pyflakes(fixed) <= pyflakes(path.read_text())
        assert "amp." not in fixed.replace("torch.amp.", "")
    assert fix_project(tmp_path / "project") == {}, "a second run changes nothing"


@pytest.mark.parametrize("names, file, old, new, reason", [
    (["trainer.py"], "trainer.py", "", "",
     "amp.initialize is not called in this module, and Trainer scales losses with apex: fix it together with the "
     "module that calls amp.initialize"),
    (["optimization.py"], "optimization.py", "", "", "amp.scale_loss is not used in the module that calls "
                                                     "amp.initialize"),
    ([], "trainer.py", "        self.global_step = 0\n", "        self.global_step = 0\n\n    def half(self):\n"
     "        self.use_amp = \"O1\"\n",
     "Trainer scales its losses under self.use_amp, which its __init__ does not set once"),
    ([], "trainer.py", "        self.model = model\n", "        self.model = model\n        self.log()\n",
     "Trainer.__init__ calls a method (line 15) before it sets self.use_amp"),
    ([], "trainer.py", "        if self.use_amp:\n            with amp", "        if self.use_amp or step:\n"
     "            with amp", "Trainer scales its losses under other conditions than one attribute"),
    ([], "optimization.py", "    model, optimizer = _init_amp(model, optimizer, use_amp)\n",
     "    model, optimizer = _init_amp(model, optimizer, use_amp)\n    print(amp.state_dict())\n",
     "amp.scale_loss is not used in the module that calls amp.initialize"),
])
def test_a_trainer_class_keeps_apex_without_its_initializing_module_or_an_exact_switch(
        tmp_path, names, file, old, new, reason):
    """The class's own scaler is exact only with the other module's amp.initialize gone, and
    enabled by what its apex branches test, set once before any method could scale."""
    shutil.copytree(TRAINER_PROJECT, tmp_path / "project")
    changed = tmp_path / "project" / file
    assert old in changed.read_text()
    changed.write_text(changed.read_text().replace(old, new, 1))
    migration = fix_project(tmp_path / "project", *names)
    assert migration[file]["status"] == "refused" and reason in migration[file]["reason"], migration[file]
    assert all(entry["status"] == "refused" for entry in migration.values()), migration
    for path in TRAINER_PROJECT.glob("*.py"):
        if path.name != file:
            assert (tmp_path / "project" / path.name).read_text() == path.read_text(), path.name


def test_a_probe_of_apex_holding_a_probe_of_another_part_loses_only_the_import_of_amp():
    """FARM's `try: from apex import amp / try: from apex.parallel import ... except
    AttributeError: ...`: without the import of amp, an ImportError still reaches the outer
    handler, so its flag still says whether apex is installed."""
    probe = """\
        try:
            from apex import amp
            try:
                from apex.parallel import convert_syncbn_model
                HAS_PARALLEL = True
            except {caught}:
                HAS_PARALLEL = False
            AMP_AVAILABLE = True
        except ImportError:
            AMP_AVAILABLE = False
            HAS_PARALLEL = False

        model, optimizer = amp.initialize(model, optimizer)
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """
    result = migrate(probe.format(caught="AttributeError"))
    assert "from apex import amp" not in result.text and "from apex.parallel import convert_syncbn_model" in result.text
    assert "except AttributeError:" in result.text and "AMP_AVAILABLE = True" in result.text
    check_refused(probe.format(caught="ImportError"), "the import of apex on line 2 is in a `try` that does more")


def test_a_method_that_scales_for_another_runs_only_after_it_creates_the_scaler():
    source = (SCRIPTS / "training_step.py").read_text()
    reused = source.replace("        return losses, optimizer\n",
                            "        return losses, optimizer\n\n    def probe(self, model, inputs, optimizer):\n"
                            "        return self._training_step(model, inputs, optimizer)\n", 1)
    result = fix_text(reused, unsafe=True)
    assert "amp.initialize" in result.text
    assert any("is in _training_step(), which runs elsewhere than after amp.initialize in train()" in note
               for _, note in result.notes), result.notes


def test_a_transformers_trainer_subclass_loses_its_apex_branch_and_keeps_the_native_one():
    script = SCRIPTS / "transformers" / "trainer_subclass.py"
    result = fix_text(script.read_text(), unsafe=True)
    assert result.text == (SCRIPTS / "fixed" / "transformers" / "trainer_subclass.py").read_text()
    assert not result.remaining
    assert pyflakes(result.text) <= pyflakes(script.read_text())
    assert any("transformers 5.0 removed Trainer.use_apex" in note for _, note in result.notes)


TRAINER_4_1X = """\
    from apex import amp
    from transformers import Trainer as HFTrainer


    class MyTrainer(HFTrainer):
        def training_step(self, model, inputs):
            loss = self.compute_loss(model, inputs)
            {branches}
            return loss.detach()
    """


@pytest.mark.parametrize("branches, kept", [
    ("""if self.do_grad_scaling:
                self.scaler.scale(loss).backward()
            elif self.use_apex:
                # apex's scaled backward
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            elif self.deepspeed:
                loss = self.deepspeed.backward(loss)
            else:
                loss.backward()""",
     """if self.do_grad_scaling:
                self.scaler.scale(loss).backward()
            elif self.deepspeed:
                loss = self.deepspeed.backward(loss)
            else:
                loss.backward()"""),
    ("""if self.use_apex:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            elif self.deepspeed:
                self.deepspeed.backward(loss)
            else:
                loss.backward()""",
     """if self.deepspeed:
                self.deepspeed.backward(loss)
            else:
                loss.backward()"""),
    ("""if self.args.fp16 and self.use_amp:
                self.scaler.scale(loss).backward()
            elif self.use_apex:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()""",
     """if self.args.fp16 and self.use_amp:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()"""),
])
def test_every_shape_of_the_trainer_s_apex_branch_goes_with_the_branches_around_it_kept(branches, kept):
    check_migrated(TRAINER_4_1X.format(branches=branches),
                   TRAINER_4_1X.format(branches=kept).replace("    from apex import amp\n", ""))


def test_a_use_apex_branch_outside_a_transformers_trainer_is_not_dropped():
    check_refused(TRAINER_4_1X.replace("from transformers import Trainer as HFTrainer", "HFTrainer = object").format(
        branches="""if self.use_apex:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()"""), "amp.initialize is not called in this module")


TWO_BACK_ENDS = """\
    import torch
    try:
        from apex import amp
        from apex.contrib.sparsity import ASP
        has_apex = True
    except ImportError:
        has_apex = False

    use_amp = "apex" if args.apex_amp and has_apex else "native" if args.native_amp else None
    scaler = None
    if use_amp == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    elif use_amp == "native":
        scaler = torch.amp.GradScaler("cuda")
    if has_apex and use_amp != "native":
        ASP.prune_trained_model(model, optimizer)
    for x in loader:
        with torch.autocast("cuda", enabled=use_amp == "native"):
            loss = model(x).sum()
        if use_amp == "apex":
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        elif use_amp == "native":
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if use_amp == "native":
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
    """


def test_two_back_ends_chosen_by_one_option_leave_apex_s_value_to_the_native_branches():
    """Every branch that runs only with apex's value goes; every test of the native value admits
    apex's: with it the code does what it did with "native", with any other value what it did.
    The probe stays for the rest of apex it imports."""
    check_migrated(TWO_BACK_ENDS, """\
        import torch
        try:
            from apex.contrib.sparsity import ASP
            has_apex = True
        except ImportError:
            has_apex = False

        use_amp = "apex" if args.apex_amp and has_apex else "native" if args.native_amp else None
        scaler = None
        if use_amp in ("native", "apex"):
            scaler = torch.amp.GradScaler("cuda")
        if has_apex and use_amp not in ("native", "apex"):
            ASP.prune_trained_model(model, optimizer)
        for x in loader:
            with torch.autocast("cuda", enabled=use_amp in ("native", "apex")):
                loss = model(x).sum()
            if use_amp in ("native", "apex"):
                scaler.scale(loss).backward()
            else:
                loss.backward()
            if use_amp in ("native", "apex"):
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
        """)
    notes = [note for _, note in migrate(TWO_BACK_ENDS).notes]
    assert any('use_amp == "apex" now takes the native AMP branches of use_amp == "native" (apex\'s branches, '
               "lines 11, 20, went)" in note for note in notes), notes


@pytest.mark.parametrize("old, new, reason", [
    ("scaler = None\n", "scaler = None\nprint(use_amp)\n",
     "use_amp is read on line 11 other than compared with a string, so its value 'apex' cannot be made to "
     "choose the native path"),
    ('    scaler = torch.amp.GradScaler("cuda")\n', '    scaler = torch.amp.GradScaler("cuda")\n'
     'elif use_amp == "bf16":\n    scaler = torch.amp.GradScaler("cuda", enabled=False)\n',
     "its scaler is created for use_amp == 'bf16' and 'native', so which value apex's choice should take is "
     "not clear"),
    ('    scaler = torch.amp.GradScaler("cuda")\n', '    pass\nscaler = torch.amp.GradScaler("cuda")\n',
     "no native scaler is created in a branch chosen by use_amp == a value"),
    ("        scaler.step(optimizer)\n", "        optimizer.step()\n",
     "the native path's GradScaler (scaler) is never given .step(), so apex's choice would not train "
     "correctly on it either"),
    ("for x in loader:\n", "print(amp.master_params(optimizer))\nfor x in loader:\n",
     "apex AMP on line 17 is not in a branch chosen by comparing one option with a string"),
    ('use_amp == "apex"', 'use_amp == "mixed"',
     "apex's branches are chosen by use_amp == 'mixed', a value that does not name apex"),
    ("scaler = None\n", 'scaler = None\napex_chosen = use_amp == "apex"\n',
     "use_amp is compared with 'apex' on line 11 other than to choose apex's branches"),
])
def test_two_back_ends_are_refused_where_apex_s_value_cannot_take_the_native_path(old, new, reason):
    """Where the option is read other than compared, the native value is not one, the native
    path does not train through its scaler, or apex is used outside apex's branches."""
    before = textwrap.dedent(TWO_BACK_ENDS)
    assert old in before
    check_refused(before.replace(old, new), reason)


def test_two_back_ends_are_refused_where_another_module_of_the_run_compares_the_option(tmp_path):
    """`args.amp` may be read by a module of the run this one passes `args` to: its tests of
    apex's value would still see apex's."""
    (tmp_path / "train.py").write_text(textwrap.dedent(TWO_BACK_ENDS).replace("use_amp", "args.amp").replace(
        'args.amp = "apex" if args.apex_amp and has_apex else "native" if args.native_amp else None\n', ""))
    (tmp_path / "report.py").write_text('def report(args):\n    return "apex" if args.amp == "apex" else "torch"\n')
    migration = fix_project(tmp_path)
    assert migration["train.py"]["status"] == "refused"
    assert "report.py compares args.amp with 'apex' (line 2): fix it with this module" in migration["train.py"][
        "reason"], migration


PARAMETERS = '(p for group in optimizer.param_groups for p in group["params"])'


def test_a_gradient_read_right_before_an_every_iteration_step_moves_after_unscaling_without_a_note():
    result = migrate("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for x in loader:
            loss = model(x).sum()
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                if clip:
                    norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
                else:
                    norm = grad_norm(amp.master_params(optimizer))
            else:
                loss.backward()
                norm = grad_norm(model.parameters())
            optimizer.step()
            log(norm)
        """)
    assert result.text.endswith(textwrap.indent(textwrap.dedent("""\
            if fp16:
                scaler.scale(loss).backward()
            else:
                loss.backward()
                norm = grad_norm(model.parameters())
            scaler.unscale_(optimizer)
            if fp16:
                if clip:
                    norm = torch.nn.utils.clip_grad_norm_({PARAMETERS}, clip)
                else:
                    norm = grad_norm({PARAMETERS})
            scaler.step(optimizer)
            scaler.update()
            log(norm)
        """).replace("{PARAMETERS}", PARAMETERS), "    ")), result.text
    assert not any("micro-batch" in note for _, note in result.notes)


def test_notes_name_the_lines_of_the_file_as_the_run_found_it_after_other_fixes_moved_them():
    result = migrate("""\
        import torch
        try:
            from apex.parallel import DistributedDataParallel as DDP
        except ImportError:
            raise ImportError("Please install apex")
        from apex import amp

        model = DDP(model)
        model, optimizer = amp.initialize(model, optimizer)
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        print(amp._amp_state)
        optimizer.step()
        """)
    assert "try:" not in result.text, "the apex DDP fix ran in an earlier round"
    assert (9, "apex AMP not migrated: amp._amp_state (line 13) is apex's own state or API, which has no native "
               "counterpart the fix can write") in result.notes, result.notes


def test_apex_s_cast_decorators_are_refused_with_what_they_did():
    check_refused("""\
        from apex import amp

        @amp.float_function
        def penalty(x):
            return x.pow(2).sum()

        model, optimizer = amp.initialize(model, optimizer)
        loss = model(x).sum() + penalty(x)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        """, "@apex.amp.float_function (line 3): under O1 apex cast the function's float16 CUDA inputs")


def test_a_helper_also_called_in_its_own_module_keeps_the_project_on_apex(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "project")
    engine = tmp_path / "project" / "engine.py"
    engine.write_text(engine.read_text() + "\n\nif __name__ == '__main__':\n    do_train(None, [], None, False)\n")
    migration = fix_project(tmp_path / "project")
    assert "do_train() is also used in this module (line 32), where no scaler would be given" in \
        migration["engine.py"]["reason"]
    assert migration["train.py"]["status"] == "refused"


def test_another_module_s_lines_in_a_refusal_stay_that_module_s(tmp_path):
    """train.py's own fixes move its lines; the line of engine.py its refusal quotes stays."""
    shutil.copytree(PROJECT, tmp_path / "project")
    train, engine = tmp_path / "project" / "train.py", tmp_path / "project" / "engine.py"
    wrapped = "    model = DistributedDataParallel(model)\n    batches = ["
    train.write_text("try:\n    from apex.parallel import DistributedDataParallel\nexcept ImportError:\n"
                     "    raise\n" + train.read_text().replace("    batches = [", wrapped, 1))
    engine.write_text(engine.read_text().replace("    losses = []\n", "    losses = []\n    print(amp._amp_state)\n",
                                                 1))
    migration = fix_project(tmp_path / "project")
    assert "engine.py would take the scaler and cannot migrate: amp._amp_state (line 12)" in \
        migration["train.py"]["reason"]
    assert migration["train.py"]["line"] == 31  # the initialization, in train.py as the run found it


def test_a_plan_of_one_module_offered_by_check_or_an_editor_never_leaves_its_helpers_on_apex(tmp_path):
    """check and the editor plan one module: where a module beside it would have to take the
    scaler, no migration is offered there (fix over the project migrates them together)."""
    from flake8_no_apex.engine import Document, Session

    shutil.copytree(PROJECT, tmp_path / "project")
    train = tmp_path / "project" / "train.py"
    analysis = Session().analyse(Document(train, train.read_text()))
    planned = {f.code: p for f, p in zip(analysis.findings, analysis.plans) if f.code in MIGRATED_CODES}
    assert planned and all(p is None for p in planned.values()), planned


def test_a_helper_module_is_found_by_what_its_names_resolve_to(tmp_path):
    """checkpoints.py imports amp under another name: it still takes the scaler."""
    shutil.copytree(PROJECT, tmp_path / "project")
    checkpoints = tmp_path / "project" / "checkpoints.py"
    text = checkpoints.read_text().replace("from apex import amp", "from apex import amp as mixed")
    checkpoints.write_text(text.replace("amp.state_dict()", "mixed.state_dict()").replace(
        "amp.load_state_dict(", "mixed.load_state_dict("))
    migration = fix_project(tmp_path / "project")
    assert {name: entry["status"] for name, entry in migration.items()} == dict.fromkeys(
        ["checkpoints.py", "engine.py", "train.py"], "migrated")
    train = (tmp_path / "project" / "train.py").read_text()
    assert "save_checkpoint(path, model, optimizer, epoch, scaler=scaler)" in train


def test_a_noqa_left_use_through_import_apex_is_said_to_be_left():
    check_refused("""\
        import apex

        model, optimizer = apex.amp.initialize(model, optimizer)
        loss = model(x).sum()
        with apex.amp.scale_loss(loss, optimizer) as scaled_loss:  # noqa: APX102
            scaled_loss.backward()
        optimizer.step()
        """, "apex.amp.scale_loss (line 5) is left as it is (a noqa comment or an unselected code)")


def test_the_forward_passes_of_a_function_that_makes_inputs_float16_go_under_autocast():
    """apex ran the model on float16 inputs everywhere (O2's float16 weights, O1's patched
    functions): an evaluation loop that halves its inputs would raise on the float32 model, so
    its forward passes run under autocast too, the scaler handed on by the function that took it."""
    before = """\
        import torch
        from apex import amp


        def evaluate(model, loader):
            with torch.no_grad():
                for x, y in loader:
                    if fp16:
                        x = x.half()
                    print((model(x) - y).abs().mean())
            model.train()


        def train(model, optimizer, loader):
            for x, y in loader:
                loss = (model(x) - y).pow(2).mean()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
                evaluate(model, loader)


        def main(model, optimizer, loader):
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2", enabled=fp16)
            train(model, optimizer, loader)
        """
    check_migrated(before, """\
        import torch


        def evaluate(model, loader, scaler):
            with torch.no_grad():
                for x, y in loader:
                    if fp16:
                        x = x.half()
                    with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                        print((model(x) - y).abs().mean())
            model.train()


        def train(model, optimizer, loader, scaler):
            for x, y in loader:
                with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                    loss = (model(x) - y).pow(2).mean()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                evaluate(model, loader, scaler=scaler)


        def main(model, optimizer, loader):
            scaler = torch.amp.GradScaler("cuda", enabled=bool(fp16))
            train(model, optimizer, loader, scaler=scaler)
        """)
    assert any("the forward passes of evaluate() (line 10) take tensors made float16 (line 9)" in note
               for _, note in migrate(before).notes)


def test_module_level_forward_passes_on_float16_inputs_go_under_autocast():
    check_migrated("""\
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
        x = x.half()
        print(model(x))
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """, """\
        import torch
        scaler = torch.amp.GradScaler("cuda")
        x = x.half()
        with torch.amp.autocast("cuda"):
            print(model(x))
        for x, y in loader:
            with torch.amp.autocast("cuda"):
                loss = (model(x) - y).pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """)


@pytest.mark.parametrize("evaluation, reason", [
    ("def evaluate(net, x):\n    return net(x.half())",
     "a tensor is made float16 on line 4 (x.half()) for a model evaluate() does not call by name"),
    ("def evaluate(model, x):\n    x = x.half()\n    for y in model(x):\n        print(y)",
     "a tensor is made float16 on line 4 for the model, which line 5 runs in a statement that cannot be put "
     "under autocast alone"),
])
def test_float16_inputs_the_fix_cannot_put_under_autocast_are_refused(evaluation, reason):
    check_refused(f"""\
from apex import amp
model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
{evaluation}
for x, y in loader:
    loss = (model(x) - y).pow(2).mean()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""", reason)


def test_inputs_made_float16_before_a_forward_pass_under_autocast_and_a_model_made_float16_migrate():
    """Under autocast a float16 input is what the op casts to anyway; a model the program makes
    float16 itself (pure float16 inference) keeps its float16 inputs."""
    result = migrate("""\
        from apex import amp


        def main(model, optimizer, loader, infer):
            if infer:
                model = model.half()
                return model(loader[0].half())
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
            for x, y in loader:
                x = x.half()
                loss = (model(x) - y).pow(2).mean()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
        """)
    assert "scaler.scale(loss).backward()" in result.text, result.notes


GAN_UPDATE = """\
    from apex import amp


    def update(loss, optimizer):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


    [netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], num_losses=2)
    for real, noise in loader:
        fake = netG(noise)
        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        update(errD, optD)
        errG = criterion(netD(fake), ones)
        update(errG, optG)
    """


def test_an_optimizer_given_as_a_parameter_is_amp_s_when_every_call_gives_one_of_its_optimizers():
    """A GAN's `update(loss, optimizer)` called for D and G: the parameter stands for both, each
    call's forward pass goes under autocast, and the scaler steps and updates for each."""
    check_migrated(GAN_UPDATE, """\
        import torch


        def update(loss, optimizer):
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


        scaler = torch.amp.GradScaler("cuda")
        for real, noise in loader:
            with torch.amp.autocast("cuda"):
                fake = netG(noise)
                errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
            update(errD, optD)
            with torch.amp.autocast("cuda"):
                errG = criterion(netD(fake), ones)
            update(errG, optG)
        """)


def test_an_optimizer_given_as_a_parameter_is_refused_where_a_call_gives_another():
    check_refused(textwrap.dedent(GAN_UPDATE) + "update(extra_loss, other_optimizer)\n",
                  "amp.scale_loss (line 5) scales for optimizer, a parameter of update(), and the call on line 17 "
                  "gives it another optimizer than amp.initialize's")


LOSS_TO_A_METHOD = """\
    from apex import amp


    class Trainer:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = amp.initialize(model, optimizer)

        def optimize(self, loss):
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()

        def step(self, x, y):
            loss = (self.model(x) - y).pow(2).mean()
            self.optimize(loss)
    """


def test_a_loss_handed_to_the_method_that_scales_it_has_its_forward_pass_in_the_caller():
    check_migrated(LOSS_TO_A_METHOD, """\
        import torch


        class Trainer:
            def __init__(self, model, optimizer):
                self.scaler = torch.amp.GradScaler("cuda")
                self.model, self.optimizer = model, optimizer

            def optimize(self, loss):
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()

            def step(self, x, y):
                with torch.amp.autocast("cuda"):
                    loss = (self.model(x) - y).pow(2).mean()
                self.optimize(loss)
        """)


@pytest.mark.parametrize("old, new, reason", [
    ("        self.optimize(loss)\n", "        self.optimize(loss)\n        hook = self.optimize\n",
     "the loss scaled on line 9 is optimize()'s parameter, and optimize() is used on line 16 other than called"),
    ("        self.optimize(loss)\n", "        self.optimize(loss=loss)\n        self.optimize(None)\n",
     "the call of optimize() on line 16 does not give it the loss by name"),
    ("        self.optimize(loss)\n", "        self.optimize(loss)\n        self.optimize(x)\n",
     "the loss optimize() scales (line 9) is computed before the call on line 16 where the fix cannot see its "
     "forward pass"),
    ("        with amp.scale_loss(loss, self.optimizer)", "        loss = loss + penalty(self)\n"
     "        with amp.scale_loss(loss, self.optimizer)",
     "the loss scaled on line 10 is computed where the fix cannot see which statements are its forward pass"),
])
def test_a_loss_handed_to_a_method_is_refused_where_its_callers_are_not_all_seen(old, new, reason):
    before = textwrap.dedent(LOSS_TO_A_METHOD)
    assert old in before
    check_refused(before.replace(old, new), reason)


def test_a_loss_handed_to_a_module_level_function_that_scales_it_migrates_at_each_call():
    result = migrate("""\
        from apex import amp


        def backward(loss):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()


        model, optimizer = amp.initialize(model, optimizer)
        for x, y in loader:
            out = model(x)
            error = (out - y).pow(2).mean()
            size = out.abs().mean()
            backward(error)
            backward(size)
        """)
    assert result.text.endswith("""\
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.amp.autocast("cuda"):
                out = model(x)
                error = (out - y).pow(2).mean()
                size = out.abs().mean()
            backward(error)
            backward(size)
        """.replace("        ", "", 1).replace("\n        ", "\n")), result.text


def test_a_loss_computed_in_the_call_of_the_function_that_scales_it_is_refused():
    check_refused("""\
        from apex import amp


        def backward(loss):
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()


        model, optimizer = amp.initialize(model, optimizer)
        for x, y in loader:
            backward((model(x) - y).pow(2).mean())
        """, "the call of backward() on line 12 does not give it the loss by name")


@pytest.mark.parametrize("flag, enabled", [
    ('parser.add_argument("--fp16", action="store_true")', "args.fp16"),
    ('parser.add_argument("--fp16", type=int, default=0)', "bool(args.fp16)"),
    ('parser.add_argument("--half-precision", dest="fp16", action="store_true")', "args.fp16"),
])
def test_the_scaler_is_enabled_by_a_bool_as_autocast_requires(flag, enabled):
    """autocast(enabled=scaler.is_enabled()) raises on anything but a bool (`--fp16 1` is an
    int): a condition the module does not show to be a bool is written bool(...)."""
    result = migrate(f"""\
        import argparse
        from apex import amp

        parser = argparse.ArgumentParser()
        {flag}
        args = parser.parse_args()
        if args.fp16:
            model, optimizer = amp.initialize(model, optimizer)
        loss = model(x).sum()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        """)
    assert f'scaler = torch.amp.GradScaler("cuda", enabled={enabled})\n' in result.text, result.text


@pytest.mark.parametrize("signature, enabled", [
    ("fp16: bool", "fp16"), ("fp16=False", "fp16"), ("fp16", "bool(fp16)"), ("fp16: int = 0", "bool(fp16)"),
])
def test_a_parameter_enables_the_scaler_bare_only_when_declared_a_bool(signature, enabled):
    result = migrate(f"""\
        from apex import amp


        def train(model, optimizer, x, {signature}):
            model, optimizer = amp.initialize(model, optimizer, enabled={signature.split(":")[0].split("=")[0]})
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        """)
    assert f'scaler = torch.amp.GradScaler("cuda", enabled={enabled})\n' in result.text, result.text


def _norm_in_another_module(directory: Path, root: str = "    return total ** (1.0 / norm_type)\n") -> Path:
    """norm_after_micro_batches.py with its gradient_norm() in utils.py (Swin's get_grad_norm)."""
    directory.mkdir()
    text = (SCRIPTS / "norm_after_micro_batches.py").read_text()
    start, end = text.index("def gradient_norm("), text.index("def train_one_epoch(")
    function = text[start:end].replace("    return total ** (1.0 / norm_type)\n", root)
    (directory / "utils.py").write_text(f"import torch\n\n\n{function}")
    train = text[:start] + text[end:]
    (directory / "train.py").write_text(train.replace("from torch import nn\n", "from torch import nn\n\n"
                                                      "from utils import gradient_norm\n"))
    return directory


def test_a_norm_of_the_gradients_from_another_module_is_divided_by_the_scale_between_micro_batches(tmp_path):
    directory = _norm_in_another_module(tmp_path / "project")
    migration = fix_project(directory)
    assert migration["train.py"]["status"] == "migrated", migration
    assert f"norm = gradient_norm({PARAMETERS}) / scaler.get_scale()\n" in (directory / "train.py").read_text()
    assert any("the gradient norm of line 30 is read after every micro-batch" in note
               for note in migration["train.py"]["notes"]), migration
    assert "utils.py" not in migration  # it reads gradients and knows nothing of apex: it stays as it was


def test_a_function_of_the_gradients_that_is_not_a_norm_keeps_the_script_on_apex(tmp_path):
    directory = _norm_in_another_module(tmp_path / "project", root="    return total\n")
    migration = fix_project(directory)
    assert migration["train.py"]["status"] == "refused"
    assert "gradients are read on line 27, between the scaled backward and the optimizer step" in \
        migration["train.py"]["reason"], migration


def test_norms_and_clipping_in_every_branch_of_an_elif_chain_are_given_the_scale():
    check_migrated("""\
        import torch
        from apex import amp

        def norm_of(parameters):
            return sum([p.grad.norm() for p in parameters])

        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if mode == 1:
                n = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            elif mode == 2:
                n = norm_of(amp.master_params(optimizer))
            if (step + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
        """, f"""\
        import torch

        def norm_of(parameters):
            return sum([p.grad.norm() for p in parameters])

        scaler = torch.amp.GradScaler("cuda")
        for step, x in enumerate(loader):
            with torch.amp.autocast("cuda"):
                loss = model(x).sum() / accumulation
            scaler.scale(loss).backward()
            if mode == 1:
                n = torch.nn.utils.clip_grad_norm_({PARAMETERS}, 1.0 * scaler.get_scale()) / scaler.get_scale()
            elif mode == 2:
                n = norm_of({PARAMETERS}) / scaler.get_scale()
            if (step + 1) % accumulation == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """)


@pytest.mark.parametrize("rebinding", [
    "def train(norm_of):\n            pass\n",  # a parameter of that name somewhere (indented as the source)
    "norm_of = other\n",
])
def test_a_norm_function_bound_again_is_not_trusted(rebinding):
    check_refused(f"""\
        from apex import amp

        def norm_of(parameters):
            return sum([p.grad.norm() for p in parameters])

        {rebinding}
        model, optimizer = amp.initialize(model, optimizer)
        for step, x in enumerate(loader):
            loss = model(x).sum() / accumulation
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            n = norm_of(amp.master_params(optimizer))
            if (step + 1) % accumulation == 0:
                optimizer.step()
        """, "gradients are read on line")


def test_a_loss_computed_from_the_outputs_in_a_branch_runs_under_autocast_too():
    """apex O1 cast the criterion's functions wherever it ran: computed in an `if` after the
    forward pass, the loss goes under autocast of its own there (operators alone stay)."""
    check_migrated("""\
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer)
        for step, (x, y) in enumerate(loader):
            outputs = model(x)
            if accumulation > 1:
                loss = criterion(outputs, y)
                loss = loss / accumulation
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss = criterion(outputs, y) * 2
                log(step)
                loss *= 0.5
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            optimizer.step()
        """, """\
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for step, (x, y) in enumerate(loader):
            with torch.amp.autocast("cuda"):
                outputs = model(x)
            if accumulation > 1:
                with torch.amp.autocast("cuda"):
                    loss = criterion(outputs, y)
                    loss = loss / accumulation
                scaler.scale(loss).backward()
            else:
                with torch.amp.autocast("cuda"):
                    loss = criterion(outputs, y) * 2
                    log(step)
                    loss *= 0.5
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """)
