"""A GAN whose discriminator and generator share one update helper, given each its loss and
its optimizer (the shape of research GANs that wrap apex's scaled backward in a function)."""
import argparse

import torch
from torch import nn, optim
from apex import amp


def update(loss, optimizer):
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=4)
    opt = parser.parse_args(argv)
    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    criterion = nn.BCEWithLogitsLoss()
    optD = optim.SGD(netD.parameters(), lr=0.05)
    optG = optim.SGD(netG.parameters(), lr=0.05)
    [netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], opt_level="O1", num_losses=2)

    losses = []
    for _ in range(opt.iterations):
        real = torch.randn(6, 8)
        fake = netG(torch.randn(6, 4))
        errD = criterion(netD(real), torch.ones(6, 1)) + criterion(netD(fake.detach()), torch.zeros(6, 1))
        update(errD, optD)
        errG = criterion(netD(fake), torch.ones(6, 1))
        update(errG, optG)
        losses.append((errD + errG).item())
    return {"losses": losses, "model": netG, "optimizer": optG, "steps": opt.iterations,
            "forward_passes": 2 * opt.iterations, "models": [netD, netG]}


if __name__ == "__main__":
    main()
