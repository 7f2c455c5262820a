"""A recommender whose dense parts alone go to apex (the embeddings stay as they are), apex's op
lists edited at import, gradients clipped in the fp16 branch right before the step, and
checkpoint helpers that save and restore apex's state."""
import argparse
import os
import tempfile

import torch
from torch import nn


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.EmbeddingBag(20, 6, mode="sum")
        self.bottom = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, dense, sparse):
        features = torch.cat([self.bottom(dense), self.embedding(sparse)], dim=1)
        return self.top(features).squeeze(1)


def save_checkpoint(model, optimizer, amp_run, path, scaler):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp_run:
        checkpoint["amp"] = scaler.state_dict()
    torch.save(checkpoint, path)


def load_checkpoint(model, optimizer, amp_run, path, scaler):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if amp_run:
        scaler.load_state_dict(checkpoint["amp"])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--clip", type=float, default=0.5)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Recommender()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    loss_fn = nn.BCEWithLogitsLoss()
    losses = []
    steps = 6
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "checkpoint.pt")
        for step in range(steps):
            dense, sparse = torch.randn(5, 4), torch.randint(0, 20, (5, 3))
            clicks = torch.randint(0, 2, (5,)).float()
            optimizer.zero_grad()
            with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                output = model(dense, sparse)
                loss = loss_fn(output, clicks)
            if args.amp:
                scaler.scale(loss).backward()
            else:
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.unscale_(optimizer)
            if args.amp:
                grad_norm = torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), args.clip)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item() + 0 * grad_norm.item())
            if step == steps // 2:
                save_checkpoint(model, optimizer, args.amp, path, scaler=scaler)
                load_checkpoint(model, optimizer, args.amp, path, scaler=scaler)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": steps}


if __name__ == "__main__":
    main()
