"""Checkpoint helpers that save and restore apex's loss scaler with the model."""
import torch
from apex import amp


def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": amp.state_dict(),
                "epoch": epoch}, path)


def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if "amp" in checkpoint:
        amp.load_state_dict(checkpoint["amp"])
    return checkpoint["epoch"]
