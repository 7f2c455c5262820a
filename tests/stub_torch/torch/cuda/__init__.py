from torch.cuda import amp

__all__ = ["amp"]
