"""The training loop of the project, scaling losses for the apex main initialized."""
import torch

try:
    from apex import amp
except ImportError:
    amp = None


def do_train(model, batches, optimizer, use_amp, accumulate_steps=1):
    losses = []
    model.train()
    for iteration, (inputs, targets) in enumerate(batches):
        prediction = model(inputs)
        loss = torch.nn.functional.mse_loss(prediction, targets)
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if (iteration + 1) % accumulate_steps == 0:
            for param in model.parameters():
                if param.grad is not None:
                    param.grad.data.div_(accumulate_steps)
            optimizer.step()
            optimizer.zero_grad()
        losses.append(loss.item())
    return losses
