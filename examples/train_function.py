"""Ray Train's PyTorch quick start - a DDP model on synthetic data - as a function job.

With Ray Train the training function runs on Ray workers::

    trainer = TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers=2))
    result = trainer.fit()

Here the same function runs once in every process of a PyTorchJob (or a TrainJob, or
local processes), with the process group already initialised::

    job = submit(train_func, nodes=2, pvc=["data:/mnt/data"], args={"epochs": 3})
    job.wait()
    job.result()  # what rank 0 returned

What changes in the function: ``ray.train.torch.prepare_model`` becomes plain
``DistributedDataParallel`` (the process group is there already), and the function
returns what it wants back instead of ``ray.train.report``.

Run it (local processes by default; ``--backend kubernetes`` in a cluster)::

    python examples/train_function.py --nodes 2
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

NUM_SAMPLES = 20
INPUT_SIZE = 10
LAYER_SIZE = 15
OUTPUT_SIZE = 5


class NeuralNetwork(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer1 = nn.Linear(INPUT_SIZE, LAYER_SIZE)
        self.relu = nn.ReLU()
        self.layer2 = nn.Linear(LAYER_SIZE, OUTPUT_SIZE)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self.layer2(self.relu(self.layer1(input)))


def train_func(epochs: int = 3, lr: float = 0.1) -> dict[str, object]:
    """One DDP process: a small model on random data; rank 0's losses come back."""
    import torch.distributed as dist

    if torch.cuda.is_available():  # the bootstrap has set this process's device
        device = torch.device("cuda", torch.cuda.current_device())
        model = DistributedDataParallel(NeuralNetwork().to(device), device_ids=[device.index])
    else:
        device = torch.device("cpu")
        model = DistributedDataParallel(NeuralNetwork())
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    torch.manual_seed(dist.get_rank())  # each rank its own data, as a sampler would give
    losses = []
    for epoch in range(epochs):
        inputs = torch.randn(NUM_SAMPLES, INPUT_SIZE, device=device)
        labels = torch.randn(NUM_SAMPLES, OUTPUT_SIZE, device=device)
        loss = loss_fn(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch: {epoch}, loss: {loss.item():.4f}", flush=True)
        losses.append(round(loss.item(), 6))
    return {"world_size": dist.get_world_size(), "losses": losses}


def main() -> None:
    from jupyter_pytorchjob import submit

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs per node")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--backend", default=None, help="local or kubernetes")
    parser.add_argument("--pvc", default="data:/mnt/data", help="CLAIM:MOUNT for the result")
    options = parser.parse_args()
    job = submit(
        train_func,
        nodes=options.nodes,
        gpus=options.gpus,
        pvc=[options.pvc],
        args={"epochs": options.epochs},
        backend=options.backend,
    )
    job.logs(follow=True)
    job.wait()
    print("rank 0 returned:", job.result())


if __name__ == "__main__":
    main()
