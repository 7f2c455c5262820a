"""A language-model trainer with two AMP back ends behind one option, `--amp apex|pytorch`
(apex the default), in the style of 2020's vendor examples: each step of apex's branch has a
native twin beside it, batches are split into chunks whose gradients accumulate, the checkpoint
helper saves the state of whichever back end runs, and apex's op lists are changed when it is
importable."""
import argparse
import sys
import warnings

import torch
from torch import nn

try:
    from apex import amp
except ModuleNotFoundError:
    warnings.warn("APEX AMP is unavailable")


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--amp", choices=["apex", "pytorch"], default="apex")
    parser.add_argument("--apex-amp-opt-level", default="O2")
    parser.add_argument("--batch-chunk", type=int, default=2)
    parser.add_argument("--clip", type=float, default=0.25)
    args = parser.parse_args(argv)
    if args.fp16 and args.amp == "apex" and "apex" not in sys.modules:
        raise RuntimeError("APEX AMP unavailable, install APEX or switch to pytorch AMP")
    return args


def save_checkpoint(args, model, optimizer, scaler):
    if args.fp16:
        if args.amp == "pytorch":
            amp_state = scaler.state_dict()
        elif args.amp == "apex":
            amp_state = amp.state_dict()
    else:
        amp_state = None
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp_state": amp_state}


def train_chunk(model, data, target, scaler, optimizer, delay_unscale, args):
    enable_autocast = args.fp16 and args.amp == "pytorch"
    with torch.cuda.amp.autocast(enable_autocast):
        loss = nn.functional.cross_entropy(model(data), target) / args.batch_chunk
    if args.fp16:
        if args.amp == "pytorch":
            scaler.scale(loss).backward()
        elif args.amp == "apex":
            with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
                scaled_loss.backward()
    else:
        loss.backward()
    return loss.item()


def train(model, optimizer, scaler, batches, args):
    losses = []
    for data, target in batches:
        optimizer.zero_grad()
        step_loss = 0.0
        chunks = list(zip(torch.chunk(data, args.batch_chunk), torch.chunk(target, args.batch_chunk)))
        for i, (data_i, target_i) in enumerate(chunks):
            step_loss += train_chunk(model, data_i, target_i, scaler, optimizer, i < len(chunks) - 1, args)
        if args.fp16:
            if args.amp == "pytorch":
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            elif args.amp == "apex":
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        if args.fp16 and args.amp == "pytorch":
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        losses.append(step_loss)
    return losses


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 8), nn.Flatten(), nn.Linear(24, 12))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = None
    if args.fp16:
        if args.amp == "pytorch":
            scaler = torch.cuda.amp.GradScaler()
        elif args.amp == "apex":
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.apex_amp_opt_level)
    batches = [(torch.randint(0, 12, (4, 3)), torch.randint(0, 12, (4,))) for _ in range(5)]
    losses = train(model, optimizer, scaler, batches, args)
    checkpoint = save_checkpoint(args, model, optimizer, scaler)
    if args.fp16:
        if args.amp == "pytorch":
            scaler.load_state_dict(checkpoint["amp_state"])
        elif args.amp == "apex":
            amp.load_state_dict(checkpoint["amp_state"])
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(batches),
            "forward_passes": len(batches) * args.batch_chunk}


if __name__ == "__main__":
    if "apex" in sys.modules:
        amp.register_half_function(torch, "einsum")
    main()
