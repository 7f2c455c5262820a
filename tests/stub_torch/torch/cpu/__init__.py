from torch.cpu import amp

__all__ = ["amp"]
