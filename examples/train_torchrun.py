"""Several processes per node through torchrun, which reads the operator's PET_* vars.

    ptjob submit --nodes 2 --nproc-per-node 2 --name tr -- torchrun train_torchrun.py

``torchrun`` with no flags picks up ``PET_NNODES``, ``PET_NPROC_PER_NODE``,
``PET_NODE_RANK`` and ``PET_MASTER_ADDR/PORT``, then gives each process its own
``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE = nodes x processes``.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ["LOCAL_RANK"])
    value = torch.tensor([float(rank)])
    dist.all_reduce(value)
    print(
        f"rank {rank} local_rank {local} world_size {world} sum_of_ranks {value.item():.0f}",
        flush=True,
    )
    dist.barrier()  # every rank done before any tears down (see train_ddp.py)
    dist.destroy_process_group()
    # Then leave without the interpreter's teardown, where gloo can abort (train_ddp.py).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
