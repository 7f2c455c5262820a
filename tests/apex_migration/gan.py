"""A small GAN in the style of apex's DCGAN example: two models, two optimizers, three losses
with loss ids, one amp.initialize for all of them."""
import argparse

import torch
from torch import nn, optim
from apex import amp


def parse(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt_level", default="O1")
    parser.add_argument("--iterations", type=int, default=4)
    return parser.parse_args(argv)


def main(argv=None):
    opt = parse(argv)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8)).to(device)
    netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)).to(device)
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))

    [netD, netG], [optimizerD, optimizerG] = amp.initialize(
        [netD, netG], [optimizerD, optimizerG], opt_level=opt.opt_level, num_losses=3)

    losses = []
    for i in range(opt.iterations):
        # (1) the discriminator: real, then fake
        netD.zero_grad()
        real = torch.randn(6, 8, device=device)
        label = torch.ones(6, 1, device=device)
        output = netD(real)
        errD_real = criterion(output, label)
        with amp.scale_loss(errD_real, optimizerD, loss_id=0) as errD_real_scaled:
            errD_real_scaled.backward()

        noise = torch.randn(6, 4, device=device)
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        with amp.scale_loss(errD_fake, optimizerD, loss_id=1) as errD_fake_scaled:
            errD_fake_scaled.backward()
        optimizerD.step()

        # (2) the generator
        netG.zero_grad()
        label.fill_(1.0)  # fake labels are real for the generator
        output = netD(fake)
        errG = criterion(output, label)
        with amp.scale_loss(errG, optimizerG, loss_id=2) as errG_scaled:
            errG_scaled.backward()
        optimizerG.step()
        losses.append((errD_real + errD_fake + errG).item())
    return {"losses": losses, "model": netG, "optimizer": optimizerG, "steps": opt.iterations,
            "forward_passes": 3 * opt.iterations, "models": [netD, netG]}


if __name__ == "__main__":
    main()
