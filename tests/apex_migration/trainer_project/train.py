"""The user's script: the library's helper initializes apex, its Trainer trains."""
import argparse

import torch
from torch import nn

from optimization import initialize_optimizer
from trainer import Trainer


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", default=None, help="apex opt level (O1)")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    model, optimizer = initialize_optimizer(model, 0.05, use_amp=args.amp)
    batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(4)]
    trainer = Trainer(model, optimizer, batches, epochs=2, use_amp=args.amp, grad_acc_steps=2, max_grad_norm=1.0)
    losses = trainer.train()
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": 8, "forward_passes": 8,
            "optimizer_steps": trainer.global_step}


if __name__ == "__main__":
    main()
