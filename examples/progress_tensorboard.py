"""Training that writes TensorBoard scalars and prints nothing: the latest value of
each scalar shows in ``ptjob list``, the panel and the job view (read from the event
files in ``--logdir``, which the job gets as ``$PTJOB_LOGDIR``).

    ptjob submit --name board --pvc logs:/mnt/logs --logdir /mnt/logs/board \\
        -- python progress_tensorboard.py

then TensorBoard from the job view (or ``ptjob tensorboard board`` in the lab's terminal).

The log directory lies on a PVC (here ``logs``, mounted at ``/mnt/logs``): in a cluster
the notebook mounts the same claim, so TensorBoard reads what the job writes; locally the
claim is a directory under the server's volume root (``$PTJOB_HOME``'s ``volumes/logs``
for ``ptjob``), which TensorBoard may read. A ``--logdir`` on no PVC would be a path on
this machine (``/mnt/logs`` is not writable for most users) that TensorBoard may not open.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds per step")
    parser.add_argument("--logdir", default=os.environ.get("PTJOB_LOGDIR", "runs"))
    args = parser.parse_args()

    torch.manual_seed(0)
    true_w = torch.randn(10, 1)
    model = nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    writer = SummaryWriter(args.logdir, flush_secs=1)
    for step in range(1, args.steps + 1):
        x = torch.randn(64, 10)
        loss = nn.functional.mse_loss(model(x), x @ true_w)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        writer.add_scalar("loss", loss.item(), step)
        writer.add_scalar("lr", optimizer.param_groups[0]["lr"], step)
        time.sleep(args.delay)
    writer.close()


if __name__ == "__main__":
    main()
