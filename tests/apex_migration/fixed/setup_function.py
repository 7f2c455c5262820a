"""Fine-tuning in the style of 2020's BERT GLUE scripts: a setup function builds the optimizer,
initializes apex (its result kept under one name, unpacked after) and returns what main trains."""
import argparse

import torch
from torch import nn


def init_optimizer_and_amp(model, learning_rate, loss_scale, num_train_optimization_steps, use_fp16):
    optimizer, scheduler = None, None
    if num_train_optimization_steps is not None:
        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**16 if loss_scale == 0 else float(loss_scale), growth_interval=2000 if loss_scale == 0 else 2**31 - 1, enabled=bool(use_fp16))
    if use_fp16:
        amp_inits = model if optimizer is None else (model, optimizer)
        model, optimizer = (amp_inits
                            if num_train_optimization_steps is not None else
                            (amp_inits, None))
    if optimizer is not None:
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / 10)
    return model, optimizer, scheduler, scaler


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--loss_scale", type=float, default=0)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=2)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 2))
    batches = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(8)]
    model, optimizer, scheduler, scaler = init_optimizer_and_amp(model, 0.01, args.loss_scale, len(batches), args.fp16)
    loss_fct = nn.CrossEntropyLoss()
    losses = []
    for step, (inputs, labels) in enumerate(batches):
        with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
            logits = model(inputs)
            loss = loss_fct(logits, labels)
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps

        scaler.scale(loss).backward()
        losses.append(loss.item())
        if (step + 1) % args.gradient_accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad()
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(batches)}


if __name__ == "__main__":
    main()
