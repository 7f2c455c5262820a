"""A learner class in the style of 2019's fine-tuning libraries: apex is initialized in fit(),
and the fp16 branch clips the gradients after every micro-batch's backward, before the
accumulation check (apex unscaled them on each backward)."""
import argparse

import torch
from torch import nn


class Learner:
    def __init__(self, model, is_fp16, grad_accumulation_steps, max_grad_norm=0.5, fp16_opt_level="O1"):
        self.model = model
        self.is_fp16 = is_fp16
        self.grad_accumulation_steps = grad_accumulation_steps
        self.max_grad_norm = max_grad_norm
        self.fp16_opt_level = fp16_opt_level

    def fit(self, batches, lr=0.05):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        scaler = torch.amp.GradScaler("cuda", enabled=bool(self.is_fp16) and (self.fp16_opt_level != "O0"))

        losses = []
        self.model.zero_grad()
        for step, (inputs, labels) in enumerate(batches):
            self.model.train()
            with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
                outputs = self.model(inputs)
                loss = nn.functional.cross_entropy(outputs, labels)
                if self.grad_accumulation_steps > 1:
                    loss = loss / self.grad_accumulation_steps

            if self.is_fp16:
                scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), self.max_grad_norm * scaler.get_scale())
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)

            losses.append(loss.item())
            if (step + 1) % self.grad_accumulation_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                self.model.zero_grad()
        return losses, optimizer


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--accumulation", type=int, default=1)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(6)]
    losses, optimizer = Learner(model, args.fp16, args.accumulation).fit(batches)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(batches)}


if __name__ == "__main__":
    main()
