"""A trainer class in the style of 2020's research libraries: __init__ initializes apex, the
forward pass runs in a method of its own through a wrapper of the model, micro-batches of a
group are accumulated, a method clips apex's master parameters, the step is taken in either
branch of an `if`, and restoring a checkpoint initializes apex again before loading its state."""
import argparse
import os
import tempfile

import torch
from torch import nn

try:
    from apex import amp
except ImportError:
    amp = None


class Trainer:
    def __init__(self, model, optimizer, opt_level=None, grad_norm=0.5):
        self.model = model
        self.optimizer = optimizer
        self._grad_norm = grad_norm
        self._opt_level = opt_level
        if self._opt_level is not None:
            if amp is None:
                raise RuntimeError("Apex not installed but opt_level was provided.")
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self._opt_level)
        self._pytorch_model = self.model

    def batch_outputs(self, batch):
        prediction = self._pytorch_model(batch["x"])
        return {"loss": nn.functional.mse_loss(prediction, batch["y"])}

    def rescale_gradients(self):
        if self._opt_level is not None:
            parameters_to_clip = [p for p in amp.master_params(self.optimizer) if p.grad is not None]
        else:
            parameters_to_clip = [p for p in self.model.parameters() if p.grad is not None]
        return torch.nn.utils.clip_grad_norm_(parameters_to_clip, self._grad_norm)

    def train_epoch(self, batch_groups, log_every=2):
        losses = []
        for number, batch_group in enumerate(batch_groups):
            self.optimizer.zero_grad()
            for batch in batch_group:
                batch_outputs = self.batch_outputs(batch)
                loss = batch_outputs["loss"] / len(batch_group)
                if self._opt_level is not None:
                    with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()
                losses.append(loss.item())
            self.rescale_gradients()
            if number % log_every == 0:
                before = [p.detach().clone() for p in self.model.parameters()]
                self.optimizer.step()
                self.update_norm = sum((b - p.detach()).norm() for b, p in zip(before, self.model.parameters()))
            else:
                self.optimizer.step()
        return losses

    def save_checkpoint(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        if self._opt_level is not None:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def restore_checkpoint(self, path):
        state = torch.load(path)
        if self._opt_level is not None and "amp" in state:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self._opt_level)
            amp.load_state_dict(state["amp"])
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default=None)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
    trainer = Trainer(model, torch.optim.Adam(model.parameters(), lr=0.01), opt_level=args.opt_level)
    groups = [[{"x": torch.randn(4, 3), "y": torch.randn(4, 1)} for _ in range(2)] for _ in range(4)]
    losses = trainer.train_epoch(groups[:2])
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "model_state.th")
        trainer.save_checkpoint(path)
        trainer.restore_checkpoint(path)
    losses += trainer.train_epoch(groups[2:])
    return {"losses": losses, "model": trainer.model, "optimizer": trainer.optimizer, "steps": 8,
            "forward_passes": 8}


if __name__ == "__main__":
    main()
