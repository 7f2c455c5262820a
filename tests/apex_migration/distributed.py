"""apex DistributedDataParallel with apex AMP, one process (gloo) per device."""
import os
import tempfile

import torch
import torch.distributed as dist
from apex import amp
from apex.parallel import DistributedDataParallel as DDP


def setup():
    if not dist.is_initialized():
        init_method = "file://" + os.path.join(tempfile.mkdtemp(), "rendezvous")
        dist.init_process_group("gloo", init_method=init_method, rank=0, world_size=1)


def main(argv=None):
    setup()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    model = DDP(model, delay_allreduce=True)
    losses = []
    for _ in range(3):
        inputs = torch.randn(4, 8)
        loss = model(inputs).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": 3}


if __name__ == "__main__":
    main()
