"""One forward pass gives the generator's and the discriminator's losses (pix2pixHD style): the
optimizers come from the model, amp.initialize renames them, and each backward keeps its fp32
fallback. The loss scale is chosen on the command line, as apex's examples did."""
import argparse

import torch
from torch import nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = nn.Linear(5, 5)
        self.netD = nn.Linear(5, 1)
        self.optimizer_G = torch.optim.SGD(self.netG.parameters(), lr=0.05)
        self.optimizer_D = torch.optim.SGD(self.netD.parameters(), lr=0.05)

    def forward(self, x):
        fake = self.netG(x)
        loss_G = -self.netD(fake).mean()
        loss_D = self.netD(fake.detach()).mean() - self.netD(x).mean()
        return loss_G, loss_D


def parse(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--loss-scale", type=str, default=None)
    return parser.parse_args(argv)


def main(argv=None):
    opt = parse(argv)
    torch.manual_seed(0)
    model = Pair()
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**16 if opt.loss_scale in (None, "dynamic") else float(opt.loss_scale), growth_interval=2000 if opt.loss_scale in (None, "dynamic") else 2**31 - 1, enabled=opt.fp16)
    if opt.fp16:
        model, [optimizer_G, optimizer_D] = model, [model.optimizer_G, model.optimizer_D]
        print("mixed precision")
    else:
        optimizer_G, optimizer_D = model.optimizer_G, model.optimizer_D

    losses = []
    for step in range(5):
        x = torch.randn(8, 5)
        with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
            loss_G, loss_D = model(x)

        optimizer_G.zero_grad()
        scaler.scale(loss_G).backward(retain_graph=True)
        scaler.step(optimizer_G)

        optimizer_D.zero_grad()
        scaler.scale(loss_D).backward()
        scaler.step(optimizer_D)
        scaler.update()
        losses.append(loss_G.item() + loss_D.item())
    return {"losses": losses, "model": model.netG, "optimizer": optimizer_G, "steps": 5,
            "models": [model.netG, model.netD]}


if __name__ == "__main__":
    main()
