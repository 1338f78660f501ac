"""A CNN on synthetic FashionMNIST-shaped data, logging to TensorBoard on the PVC.

In the style of the Kubeflow mnist example, without any download: images are
random 1x28x28 tensors whose class decides a bright patch, so the model can learn.
Rank 0 writes ``loss`` and ``accuracy`` scalars with ``SummaryWriter`` to
``--logdir`` (default: ``$PTJOB_LOGDIR``, which the job's ``--logdir`` sets).

    ptjob submit --nodes 2 --pvc workspace:/home/jovyan --logdir /home/jovyan/runs/cnn \\
        -- python mnist_cnn.py --epochs 2
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def synthetic_fashion(n: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 10, (n,), generator=g)
    images = torch.rand(n, 1, 28, 28, generator=g) * 0.3
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 5)
        images[i, 0, 4 + row * 10 : 10 + row * 10, 2 + col * 5 : 6 + col * 5] += 0.7
    return TensorDataset(images, labels)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--logdir", default=os.environ.get("PTJOB_LOGDIR", "runs/cnn"))
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    if distributed:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank() if distributed else 0

    data = synthetic_fashion(args.samples, seed=0)
    sampler = DistributedSampler(data) if distributed else None
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
    model: nn.Module = Net()
    if distributed:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    writer = None
    if rank == 0:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.logdir)
        print(f"writing TensorBoard events to {args.logdir}", flush=True)
    step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for images, labels in loader:
            logits = model(images)
            loss = nn.functional.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if writer is not None and step % 5 == 0:
                accuracy = (logits.argmax(1) == labels).float().mean().item()
                writer.add_scalar("loss", loss.item(), step)
                writer.add_scalar("accuracy", accuracy, step)
                writer.flush()
            step += 1
        print(f"rank {rank} epoch {epoch} loss {loss.item():.4f}", flush=True)
    if writer is not None:
        writer.close()
    if distributed:
        # Every rank done before any tears down: a gloo peer that exits while another is
        # still in a collective or its teardown can abort that one (SIGABRT); then out
        # without the interpreter's teardown, where gloo can abort too (train_ddp.py).
        dist.barrier()
        dist.destroy_process_group()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
