"""A training script written for apex, Lightning 1.x and transformers 4.x.

Run `flake8 --select APX examples/legacy_train.py` to see what must change.
"""
import argparse

import pytorch_lightning as pl
import torch
from apex import amp
from apex.parallel import DistributedDataParallel
from torch.cuda.amp import GradScaler, autocast
from transformers import TrainingArguments


def apex_loop(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    model = DistributedDataParallel(model)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def torch_loop(model, optimizer, loader, use_amp):
    scaler = GradScaler(enabled=use_amp)
    for x, y in loader:
        with autocast(use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def lightning_trainer(args):
    return pl.Trainer(max_epochs=args.epochs, precision=16, amp_backend="apex", amp_level="O2")


def hf_arguments():
    return TrainingArguments("out", fp16=True, fp16_backend="apex", fp16_opt_level="O1")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    lightning_trainer(parser.parse_args())
