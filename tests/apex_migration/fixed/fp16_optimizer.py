"""Word-language-model training with apex's FP16_Optimizer, after apex/examples (2018)."""
import argparse
import math

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, input):
        output, _ = self.rnn(self.encoder(input))
        return self.decoder(output)


def parse(argv=None):
    parser = argparse.ArgumentParser(description="PyTorch Wikitext-2 RNN/LSTM Language Model")
    parser.add_argument("--lr", type=float, default=0.5, help="initial learning rate")
    parser.add_argument("--clip", type=float, default=0.25, help="gradient clipping")
    parser.add_argument("--fp16", action="store_true", help="Run model in pseudo-fp16 mode (fp16 storage fp32 math).")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    torch.manual_seed(1111)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ntokens = 50
    model = RNNModel(ntokens, 16, 32).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)

    data = torch.randint(0, ntokens, (12, 4), device=device)
    losses = []
    for i in range(0, data.size(0) - 3, 3):
        source, targets = data[i:i + 3], data[i + 1:i + 4]
        optimizer.zero_grad()
        with torch.amp.autocast("cuda", enabled=scaler.is_enabled()):
            output = model(source)
            loss = criterion(output.view(-1, ntokens), targets.reshape(-1))
        scaler.scale(loss).backward()

        # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
        scaler.unscale_(optimizer)
        if args.fp16:
            torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), args.clip)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    print(f"ppl {math.exp(sum(losses) / len(losses)):8.2f}")
    return {"losses": losses, "model": model, "optimizer": optimizer, "steps": len(losses)}


if __name__ == "__main__":
    main()
