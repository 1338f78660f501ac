"""Single-node training on synthetic data: the smallest job that runs anywhere.

ptjob submit --name single -- python train_single.py --epochs 3
"""

from __future__ import annotations

import argparse

import torch
from torch import nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    torch.manual_seed(0)
    true_w = torch.randn(10, 1)
    model = nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        for _ in range(args.steps):
            x = torch.randn(64, 10)
            loss = nn.functional.mse_loss(model(x), x @ true_w)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.5f}", flush=True)


if __name__ == "__main__":
    main()
