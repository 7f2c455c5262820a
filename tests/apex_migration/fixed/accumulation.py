"""Fine-tuning with gradient accumulation, in the style of the transformers examples of 2019
(run_glue.py): apex is imported where --fp16 asks for it."""
import argparse

import torch
from torch import nn


def parse(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", default=5e-3, type=float)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=2)
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--fp16", action="store_true", help="Whether to use 16-bit (mixed) precision through apex")
    parser.add_argument("--fp16_opt_level", type=str, default="O1",
                        help="For fp16: Apex AMP optimization level selected in ['O0', 'O1', 'O2', and 'O3'].")
    return parser.parse_args(argv)


def train(args, train_batches, model):
    """Train the model"""
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, eps=1e-8)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cuda", enabled=args.fp16 and (args.fp16_opt_level != "O0"))

    global_step = 0
    tr_loss = 0.0
    losses = []
    model.zero_grad()
    for step, batch in enumerate(train_batches):
        model.train()
        inputs, labels = batch
        with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
            outputs = model(inputs)
            loss = nn.functional.cross_entropy(outputs, labels)  # model outputs are logits
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps

        scaler.scale(loss).backward()

        tr_loss += loss.item()
        losses.append(loss.item())
        if (step + 1) % args.gradient_accumulation_steps == 0:
            scaler.unscale_(optimizer)
            if args.fp16:
                torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), args.max_grad_norm)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
    return global_step, losses, optimizer


def main(argv=None):
    args = parse(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(6)]
    global_step, losses, optimizer = train(args, batches, model)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(batches)}


if __name__ == "__main__":
    main()
