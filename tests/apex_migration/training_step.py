"""A trainer class in the style of transformers 2.x: train() initializes apex on its local model
and optimizer, the loss is scaled in another method, _training_step(), and the step clips
apex's master parameters inside the accumulation branch, before a step taken one of two ways."""
import argparse
from types import SimpleNamespace

import torch
from torch import nn

try:
    from apex import amp

    _has_apex = True
except ImportError:
    _has_apex = False


def is_apex_available():
    return _has_apex


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args
        self.global_step = 0

    def train(self, batches):
        model = self.model
        optimizer = torch.optim.SGD(model.parameters(), lr=self.args.learning_rate)
        if self.args.fp16:
            if not is_apex_available():
                raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")
            model, optimizer = amp.initialize(model, optimizer, opt_level=self.args.fp16_opt_level)
        losses = []
        model.zero_grad()
        for step, inputs in enumerate(batches):
            losses.append(self._training_step(model, inputs, optimizer))
            if (step + 1) % self.args.gradient_accumulation_steps == 0:
                if self.args.fp16:
                    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), self.args.max_grad_norm)
                else:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)

                if self.args.use_xla:
                    raise NotImplementedError("no XLA device here")
                else:
                    optimizer.step()
                model.zero_grad()
                self.global_step += 1
        return losses, optimizer

    def _training_step(self, model, inputs, optimizer):
        model.train()
        outputs = model(inputs["x"])
        loss = nn.functional.mse_loss(outputs, inputs["y"])
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps

        if self.args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        return loss.item()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    options = parser.parse_args(argv)
    args = SimpleNamespace(fp16=options.fp16, fp16_opt_level="O1", learning_rate=0.05, max_grad_norm=0.5,
                           gradient_accumulation_steps=2, use_xla=False)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    batches = [{"x": torch.randn(5, 4), "y": torch.randn(5, 2)} for _ in range(6)]
    losses, optimizer = Trainer(model, args).train(batches)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(batches)}


if __name__ == "__main__":
    main()
