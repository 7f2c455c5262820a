"""A small trainer class that saves and resumes apex AMP checkpoints."""
import os
import tempfile

import torch


class Trainer:
    def __init__(self, model, lr=0.01, opt_level="O1"):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.scaler = torch.amp.GradScaler("cuda", enabled=opt_level != "O0")
        self.step_count = 0

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.amp.autocast("cuda", enabled=self.scaler.is_enabled()):
            prediction = self.model(x.to(self.device))
            loss = torch.nn.functional.mse_loss(prediction, y.to(self.device))
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.step_count += 1
        return loss.item()

    def save(self, path):
        torch.save({
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "amp": self.scaler.state_dict(),
            "step": self.step_count,
        }, path)

    def load(self, path):
        checkpoint = torch.load(path)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.scaler.load_state_dict(checkpoint["amp"])
        self.step_count = checkpoint["step"]


def main(argv=None):
    torch.manual_seed(0)
    data = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]
    trainer = Trainer(torch.nn.Linear(4, 2))
    losses = [trainer.training_step(x, y) for x, y in data[:3]]
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "checkpoint.pt")
        trainer.save(path)
        resumed = Trainer(torch.nn.Linear(4, 2))
        resumed.load(path)
    losses += [resumed.training_step(x, y) for x, y in data[3:]]
    return {"losses": losses, "model": resumed.model, "optimizer": resumed.optimizer, "steps": 5,
            "resumed_from": trainer.optimizer}


if __name__ == "__main__":
    main()
