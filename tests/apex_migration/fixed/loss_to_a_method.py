"""A research trainer in the style of 2019's language-model repositories: each task's step
computes its loss and hands it to `optimize()`, which scales it, clips at the step of an
accumulation window and steps; apex is initialized in `__init__` when fp16 is asked for."""
import argparse

import torch
from torch import nn


class Trainer:
    def __init__(self, model, fp16, accumulate, clip=1.0):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.fp16 = fp16
        self.accumulate = accumulate
        self.clip = clip
        self.n_iter = 0
        self.scaler = torch.amp.GradScaler("cuda", enabled=bool(fp16))

    def optimize(self, loss):
        self.scaler.scale(loss).backward()
        self.n_iter += 1
        if self.n_iter % self.accumulate == 0:
            self.scaler.unscale_(self.optimizer)
            if self.fp16:
                torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.clip)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()

    def regression_step(self, x, y):
        with torch.amp.autocast("cuda", enabled=self.scaler.is_enabled()):
            prediction = self.model(x)
            loss = nn.functional.mse_loss(prediction[:, 0], y)
        self.optimize(loss)
        return loss.item()

    def classification_step(self, x, labels):
        with torch.amp.autocast("cuda", enabled=self.scaler.is_enabled()):
            logits = self.model(x)
            loss = nn.functional.cross_entropy(logits, labels) / self.accumulate
        self.optimize(loss)
        return loss.item()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--accumulate", type=int, default=2)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    trainer = Trainer(model, args.fp16, args.accumulate)
    losses = []
    for _ in range(4):
        x = torch.randn(8, 5)
        losses.append(trainer.regression_step(x, torch.randn(8)))
        losses.append(trainer.classification_step(x, torch.randint(0, 3, (8,))))
    return {"losses": losses, "model": trainer.model, "optimizer": trainer.optimizer, "steps": len(losses)}


if __name__ == "__main__":
    main()
