from torch.amp.autocast_mode import autocast, custom_bwd, custom_fwd
from torch.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
