"""Knowledge distillation in the style of the 2020 BERT question-answering scripts: the student
is initialized in one of two branches that choose the loss scale, the teacher with no optimizer,
and a clipper object clips apex's master parameters after every micro-batch."""
import argparse

import torch
from torch import nn
from apex import amp


class GradientClipper:
    def __init__(self, max_grad_norm):
        self.max_norm = max_grad_norm

    def step(self, parameters):
        return torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--loss_scale", type=float, default=0)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=2.0)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))
    teacher = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    if args.fp16:
        if args.loss_scale == 0:
            student, optimizer = amp.initialize(student, optimizer, opt_level="O1", loss_scale="dynamic")
        else:
            student, optimizer = amp.initialize(student, optimizer, opt_level="O1", loss_scale=args.loss_scale)
        teacher, _ = amp.initialize(teacher, [], opt_level="O1")
    teacher.eval()
    clipper = GradientClipper(max_grad_norm=0.5)
    losses = []
    steps = 6
    for step in range(steps):
        inputs, labels = torch.randn(5, 6), torch.randint(0, 4, (5,))
        logits = student(inputs)
        loss = nn.functional.cross_entropy(logits, labels)
        with torch.no_grad():
            teacher_logits = teacher(inputs)
        soft = nn.functional.kl_div(nn.functional.log_softmax(logits / args.temperature, dim=1),
                                    nn.functional.softmax(teacher_logits / args.temperature, dim=1),
                                    reduction="batchmean")
        loss = (loss + soft) / args.gradient_accumulation_steps
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clipper.step(amp.master_params(optimizer))
        losses.append(loss.item())
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    return {"losses": losses, "model": student, "optimizer": optimizer, "steps": steps}


if __name__ == "__main__":
    main()
