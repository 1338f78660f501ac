"""Training that reports its progress in Kubeflow Trainer's status protocol.

Locally (``ptjob submit``) the job's supervisor serves the protocol; in a cluster with
Kubeflow Trainer v2.3 (gate ``TrainJobStatus``) its status server does; anywhere else
``report`` does nothing. The percent, ETA, step and loss show in ``ptjob list``, the
panel and the job view.

ptjob submit --name reported -- python progress_report.py --steps 200
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

try:
    from jupyter_pytorchjob import report
except ImportError:  # an image without the package: copy jupyter_pytorchjob/report.py here
    try:
        from report import report  # type: ignore[no-redef]
    except ImportError:

        def report(
            progress: float | None = None, eta: float | None = None, **metrics: float
        ) -> bool:  # type: ignore[misc]
            return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds per step")
    args = parser.parse_args()
    # What the run was: `ptjob run NAME`, the job view's Run section, compare's first rows.
    report(hparams={**vars(args), "lr": 0.05, "optimizer": "sgd"})

    torch.manual_seed(0)
    true_w = torch.randn(10, 1)
    model = nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    start = time.monotonic()
    for step in range(1, args.steps + 1):
        x = torch.randn(64, 10)
        loss = nn.functional.mse_loss(model(x), x @ true_w)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        time.sleep(args.delay)
        elapsed = time.monotonic() - start
        report(
            progress=100 * step / args.steps,
            eta=elapsed / step * (args.steps - step),
            loss=loss.item(),
            step=step,
            total_steps=args.steps,
        )
    print(f"done: loss {loss.item():.5f}", flush=True)


if __name__ == "__main__":
    main()
