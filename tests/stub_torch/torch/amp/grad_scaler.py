import torch


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        torch.CALLS.append(("GradScaler", device, init_scale, growth_factor, backoff_factor, growth_interval, enabled))
