"""A detection-style project: main initializes apex, the training loop lives in engine.py and
the checkpoint helpers in checkpoints.py (their functions take the scaler once migrated)."""
import argparse
import os
import tempfile

import torch
from torch import nn

from engine import do_train
from checkpoints import load_checkpoint, save_checkpoint

use_amp = True


def train(fp16, epochs=2):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    if use_amp:
        amp_opt_level = "O1" if fp16 else "O0"
        scaler = torch.amp.GradScaler("cuda", enabled=amp_opt_level != "O0")
    batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(4)]
    losses = []
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "last.pt")
        for epoch in range(epochs):
            losses += do_train(model, batches, optimizer, use_amp, accumulate_steps=2, scaler=scaler)
            save_checkpoint(path, model, optimizer, epoch, scaler=scaler)
            epoch = load_checkpoint(path, model, optimizer, scaler=scaler)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": epochs * len(batches),
            "forward_passes": epochs * len(batches)}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args(argv)
    return train(args.fp16)


if __name__ == "__main__":
    main()
