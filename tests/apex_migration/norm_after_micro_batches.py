"""A vision training loop in the style of 2021's transformer repositories: with gradient
accumulation the fp16 branch clips after every micro-batch's backward or, without a threshold,
logs the gradient norm a function of the module computes (apex unscaled the gradients on each
backward, so both saw them unscaled)."""
import argparse

import torch
from torch import nn

try:
    from apex import amp
except ImportError:
    amp = None


def gradient_norm(parameters, norm_type=2):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    parameters = [p for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    total = 0.0
    for p in parameters:
        total += p.grad.detach().norm(norm_type).item() ** norm_type
    return total ** (1.0 / norm_type)


def train_one_epoch(model, criterion, batches, optimizer, opt_level, accumulation, clip):
    losses, norms = [], []
    optimizer.zero_grad()
    for index, (samples, targets) in enumerate(batches):
        outputs = model(samples)
        loss = criterion(outputs, targets) / accumulation
        if opt_level != "O0":
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if clip:
                norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
            else:
                norm = gradient_norm(amp.master_params(optimizer))
        else:
            loss.backward()
            if clip:
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            else:
                norm = gradient_norm(model.parameters())
        losses.append(loss.item())
        norms.append(float(norm))
        if (index + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
    return losses, norms


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O0")
    parser.add_argument("--accumulation", type=int, default=2)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    if args.opt_level != "O0":
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(6)]
    losses, norms = [], []
    for clip in (0.05, 0.0):  # an epoch that clips (below the norms), one that only logs them
        epoch_losses, epoch_norms = train_one_epoch(model, nn.CrossEntropyLoss(), batches, optimizer,
                                                    args.opt_level, args.accumulation, clip)
        losses += epoch_losses
        norms += epoch_norms
    return {"losses": losses, "norms": norms, "model": model, "optimizer": optimizer, "steps": len(losses)}


if __name__ == "__main__":
    main()
