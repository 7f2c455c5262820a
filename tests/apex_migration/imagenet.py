"""ImageNet-style training with apex AMP, after NVIDIA's examples/imagenet/main_amp.py."""
import argparse

import torch
import torch.nn as nn
from apex import amp


def parse(argv=None):
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--opt-level", type=str, default="O1")
    parser.add_argument("--keep-batchnorm-fp32", type=str, default=None)
    parser.add_argument("--seed", default=0, type=int, help="seed for initializing training")
    return parser.parse_args(argv)


def build_model():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))


def synthetic_loader(batches, device):
    generator = torch.Generator().manual_seed(0)
    for _ in range(batches):
        images = torch.randn(4, 3, 8, 8, generator=generator)
        target = torch.randint(0, 10, (4,), generator=generator)
        yield images, target


def train(train_loader, model, criterion, optimizer, epoch, device):
    # switch to train mode
    model.train()
    losses = []
    for i, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        # compute output
        output = model(images)
        loss = criterion(output, target)

        # compute gradient and do SGD step
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

        losses.append(loss.item())
    return losses


def main(argv=None):
    args = parse(argv)
    if args.seed is not None:
        torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = build_model().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    # Initialize Amp.  Amp accepts either values or strings for the optional override arguments,
    # for convenient interoperation with argparse.
    model, optimizer = amp.initialize(model, optimizer,
                                      opt_level=args.opt_level,
                                      keep_batchnorm_fp32=args.keep_batchnorm_fp32,
                                      loss_scale="dynamic")

    losses = []
    for epoch in range(args.epochs):
        losses += train(synthetic_loader(3, device), model, criterion, optimizer, epoch, device)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": 3 * args.epochs}


if __name__ == "__main__":
    main()
