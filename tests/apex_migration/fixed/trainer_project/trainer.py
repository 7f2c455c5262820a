"""The library's Trainer: given a model and an optimizer apex initialized elsewhere, it scales
the losses and steps, with gradient accumulation and clipping."""
import torch

AMP_AVAILABLE = True


class Trainer:
    def __init__(self, model, optimizer, batches, epochs, use_amp=None, grad_acc_steps=1, max_grad_norm=None):
        self.model = model
        self.optimizer = optimizer
        self.batches = batches
        self.epochs = epochs
        self.use_amp = use_amp
        self.scaler = torch.amp.GradScaler("cuda", enabled=bool(self.use_amp))
        self.grad_acc_steps = grad_acc_steps
        self.max_grad_norm = max_grad_norm
        if use_amp and not AMP_AVAILABLE:
            raise ImportError(f"Got use_amp = {use_amp}, but cannot find apex.")
        self.global_step = 0

    def train(self):
        self.model.train()
        losses = []
        for epoch in range(self.epochs):
            for step, (x, y) in enumerate(self.batches):
                with torch.amp.autocast("cuda", enabled=self.scaler.is_enabled()):
                    prediction = self.model(x)
                    per_sample_loss = torch.nn.functional.mse_loss(prediction, y, reduction="none")
                loss = self.backward_propagate(per_sample_loss, step)
                losses.append(loss.item())
        return losses

    def backward_propagate(self, loss, step):
        loss = self.adjust_loss(loss)
        self.scaler.scale(loss).backward()

        if (step + 1) % self.grad_acc_steps == 0:
            self.scaler.unscale_(self.optimizer)
            if self.max_grad_norm is not None:
                if self.use_amp:
                    torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.max_grad_norm)
                else:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
            self.global_step += 1
        return loss

    def adjust_loss(self, loss):
        loss = loss.mean()
        if self.grad_acc_steps > 1:
            loss = loss / self.grad_acc_steps
        return loss
