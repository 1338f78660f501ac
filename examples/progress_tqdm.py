"""Training whose only progress output is a tqdm bar (with the loss as its postfix):
nothing in it knows about jupyter-pytorchjob, yet its percent, ETA, step and loss show
in ``ptjob list``, the panel and the job view (read from the master's log).

ptjob submit --name bar -- python progress_tqdm.py --steps 200
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
from torch import nn
from tqdm import tqdm


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds per step")
    args = parser.parse_args()

    torch.manual_seed(0)
    true_w = torch.randn(10, 1)
    model = nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    # A pipe is no terminal: tqdm redraws with \r at most every mininterval seconds.
    bar = tqdm(range(args.steps), file=sys.stdout, mininterval=0.2)
    for _ in bar:
        x = torch.randn(64, 10)
        loss = nn.functional.mse_loss(model(x), x @ true_w)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.set_postfix(loss=f"{loss.item():.4f}", refresh=False)
        time.sleep(args.delay)


if __name__ == "__main__":
    main()
