"""One forward pass gives the generator's and the discriminator's losses (pix2pixHD style): the
optimizers come from the model, amp.initialize renames them, and each backward keeps its fp32
fallback. The loss scale is chosen on the command line, as apex's examples did."""
import argparse

import torch
from torch import nn
from apex import amp


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
    if opt.fp16:
        model, [optimizer_G, optimizer_D] = amp.initialize(model, [model.optimizer_G, model.optimizer_D],
                                                           opt_level="O1", loss_scale=opt.loss_scale)
        print("mixed precision")
    else:
        optimizer_G, optimizer_D = model.optimizer_G, model.optimizer_D

    losses = []
    for step in range(5):
        x = torch.randn(8, 5)
        loss_G, loss_D = model(x)

        optimizer_G.zero_grad()
        if opt.fp16:
            with amp.scale_loss(loss_G, optimizer_G) as scaled_loss:
                scaled_loss.backward(retain_graph=True)
        else:
            loss_G.backward(retain_graph=True)
        optimizer_G.step()

        optimizer_D.zero_grad()
        if opt.fp16:
            with amp.scale_loss(loss_D, optimizer_D) as scaled_loss:
                scaled_loss.backward()
        else:
            loss_D.backward()
        optimizer_D.step()
        losses.append(loss_G.item() + loss_D.item())
    return {"losses": losses, "model": model.netG, "optimizer": optimizer_G, "steps": 5,
            "models": [model.netG, model.netD]}


if __name__ == "__main__":
    main()
