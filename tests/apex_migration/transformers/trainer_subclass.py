"""A transformers Trainer subclass that copied training_step from transformers 4.x, apex branch
included: transformers 5.0 removed Trainer.use_apex, so it fails with AttributeError there."""
import torch
from torch import nn
from transformers import Trainer, TrainingArguments
from transformers.utils import is_apex_available

if is_apex_available():
    from apex import amp


class RegressionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x, labels=None):
        prediction = self.linear(x).squeeze(-1)
        loss = nn.functional.mse_loss(prediction, labels) if labels is not None else None
        return {"loss": loss, "logits": prediction}


class WeightedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        if self.args.n_gpu > 1:
            loss = loss.mean()  # mean() to average on multi-gpu parallel training
        if self.use_apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps


def main(output_dir, steps=3):
    torch.manual_seed(0)
    data = [{"x": torch.randn(3), "labels": torch.randn(())} for _ in range(12)]
    args = TrainingArguments(output_dir=output_dir, max_steps=steps, per_device_train_batch_size=4,
                             report_to=[], use_cpu=True, save_strategy="no", logging_steps=1)
    trainer = WeightedTrainer(model=RegressionModel(), args=args, train_dataset=data)
    result = trainer.train()
    return {"loss": result.training_loss, "steps": trainer.state.global_step}
