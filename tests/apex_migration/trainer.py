"""A trainer class: apex is initialized in __init__, the loss scaled in train_step, gradients
accumulated over micro-batches with delay_unscale=, clipped at the step."""
import argparse

import torch
from torch import nn
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16, accumulation):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1", enabled=fp16)
        self.accumulation = accumulation
        self.losses = []

    def train_step(self, step, x, y):
        self.model.train()
        loss = nn.functional.mse_loss(self.model(x), y) / self.accumulation
        boundary = (step + 1) % self.accumulation == 0
        with amp.scale_loss(loss, self.optimizer, delay_unscale=not boundary) as scaled_loss:
            scaled_loss.backward()
        if boundary:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 0.5)
            self.optimizer.step()
            self.optimizer.zero_grad()
        self.losses.append(loss.item())

    def state_dict(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": amp.state_dict()}


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
