"""A trainer class: apex is initialized in __init__, the loss scaled in train_step, gradients
accumulated over micro-batches with delay_unscale=, clipped at the step."""
import argparse

import torch
from torch import nn


class Trainer:
    def __init__(self, model, optimizer, fp16, accumulation):
        self.scaler = torch.amp.GradScaler("cuda", enabled=bool(fp16))
        self.model, self.optimizer = model, optimizer
        self.accumulation = accumulation
        self.losses = []

    def train_step(self, step, x, y):
        self.model.train()
        with torch.amp.autocast("cuda", enabled=self.scaler.is_enabled()):
            loss = nn.functional.mse_loss(self.model(x), y) / self.accumulation
        boundary = (step + 1) % self.accumulation == 0
        self.scaler.scale(loss).backward()
        if boundary:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), 0.5)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
        self.losses.append(loss.item())

    def state_dict(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": self.scaler.state_dict()}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), args.fp16, accumulation=2)
    for step in range(6):
        trainer.train_step(step, torch.randn(4, 3), torch.randn(4, 2))
    trainer.state_dict()
    return {"losses": trainer.losses, "model": model, "optimizer": trainer.optimizer, "steps": 6}


if __name__ == "__main__":
    main()
