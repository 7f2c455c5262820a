"""Gradient clipping of apex's master parameters, with a static loss scale and O2."""
import torch
import torch.nn.functional as F

MAX_NORM = 0.5


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(10, 32)
        self.fc2 = torch.nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main(argv=None):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Net().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=2**31 - 1)
    losses = []
    for step in range(4):
        x = torch.randn(16, 10, device=device)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad()
        with torch.amp.autocast("cuda"):
            pred = net(x)
            loss = F.mse_loss(pred, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        grad_norm = torch.nn.utils.clip_grad_norm_((p for group in opt.param_groups for p in group["params"]), MAX_NORM)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        print(f"step {step}: loss {loss.item():.4f}, grad norm {grad_norm:.4f}")
    return {"losses": losses, "model": net, "optimizer": opt, "steps": 4}


if __name__ == "__main__":
    main()
