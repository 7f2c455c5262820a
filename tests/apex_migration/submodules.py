"""A recommender whose dense parts alone go to apex (the embeddings stay as they are), apex's op
lists edited at import, gradients clipped in the fp16 branch right before the step, and
checkpoint helpers that save and restore apex's state."""
import argparse
import os
import tempfile

import torch
from torch import nn
from apex import amp
amp.lists.functional_overrides.FP32_FUNCS.remove("softmax")
amp.lists.functional_overrides.FP16_FUNCS.append("softmax")


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.EmbeddingBag(20, 6, mode="sum")
        self.bottom = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, dense, sparse):
        features = torch.cat([self.bottom(dense), self.embedding(sparse)], dim=1)
        return self.top(features).squeeze(1)


def save_checkpoint(model, optimizer, amp_run, path):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp_run:
        checkpoint["amp"] = amp.state_dict()
    torch.save(checkpoint, path)


def load_checkpoint(model, optimizer, amp_run, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if amp_run:
        amp.load_state_dict(checkpoint["amp"])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--clip", type=float, default=0.5)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Recommender()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.amp:
        (model.top, model.bottom), optimizer = amp.initialize([model.top, model.bottom], optimizer,
                                                              opt_level="O1")
    loss_fn = nn.BCEWithLogitsLoss()
    losses = []
    steps = 6
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "checkpoint.pt")
        for step in range(steps):
            dense, sparse = torch.randn(5, 4), torch.randint(0, 20, (5, 3))
            clicks = torch.randint(0, 2, (5,)).float()
            optimizer.zero_grad()
            output = model(dense, sparse)
            loss = loss_fn(output, clicks)
            if args.amp:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip)
            else:
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            losses.append(loss.item() + 0 * grad_norm.item())
            if step == steps // 2:
                save_checkpoint(model, optimizer, args.amp, path)
                load_checkpoint(model, optimizer, args.amp, path)
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": steps}


if __name__ == "__main__":
    main()
