"""The training loop of the project, scaling losses for the apex main initialized."""
import torch


def do_train(model, batches, optimizer, use_amp, accumulate_steps=1, scaler=None):
    losses = []
    model.train()
    for iteration, (inputs, targets) in enumerate(batches):
        with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
            prediction = model(inputs)
            loss = torch.nn.functional.mse_loss(prediction, targets)
        scaler.scale(loss).backward()
        if (iteration + 1) % accumulate_steps == 0:
            scaler.unscale_(optimizer)
            for param in model.parameters():
                if param.grad is not None:
                    param.grad.data.div_(accumulate_steps)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        losses.append(loss.item())
    return losses
