# What runs the submitted function in every process of the job (jupyter_pytorchjob.submit).
# This file is shipped as text at the top of the job's script, so it uses nothing but the
# standard library and torch, imports inside the function (the captured code shares the
# script's globals) and names everything it defines _ptjob_*.

import typing as _ptjob_typing

if _ptjob_typing.TYPE_CHECKING:
    from collections.abc import Callable


def _ptjob_main(
    fn: "Callable[..., object]",
    kwargs: dict[str, object],
    result_stem: str,
    result_max_bytes: int,
) -> None:
    """Run ``fn(**kwargs)`` once in this process with the process group initialised
    (nccl with CUDA, else gloo) when the job is distributed, then destroy the group;
    rank 0 writes the return value to ``$PTJOB_LOGDIR/<result_stem>.json`` (or
    ``.pickle`` when it is not plain JSON). A failing function fails the process."""
    import json
    import os
    import pickle
    import sys
    from pathlib import Path

    import torch
    import torch.distributed as dist

    env = os.environ
    distributed = all(k in env for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))
    if not distributed and env.get("PET_NNODES", "1") not in ("1", "1:1"):
        raise RuntimeError(
            "ptjob: this process is one of several nodes but has no RANK/WORLD_SIZE (it was "
            "not started by torchrun): keep the Master, or set nproc_per_node >= 2"
        )
    owns_group = False
    if distributed and dist.is_available() and not dist.is_initialized():
        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.set_device(int(env.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if cuda else "gloo")
        owns_group = True
    rank = dist.get_rank() if owns_group else int(env.get("RANK", "0"))
    # A function written for torchrun alone (the Kubeflow SDK's) initialises the group
    # itself: that call finds ours and is skipped.
    init = dist.init_process_group

    def _ptjob_init_once(*args: object, **kwargs: object) -> None:
        if not dist.is_initialized():
            init(*args, **kwargs)  # type: ignore[arg-type]

    dist.init_process_group = _ptjob_init_once
    try:
        value = fn(**kwargs)
    finally:
        dist.init_process_group = init
    if owns_group and dist.is_initialized():  # the function may have destroyed it
        dist.barrier()
        dist.destroy_process_group()
    if rank != 0:
        return
    logdir = env.get("PTJOB_LOGDIR")
    if not logdir:
        if value is not None:
            print(
                "ptjob: the job has no log directory on a shared volume, so the return "
                "value of rank 0 is not kept (submit with pvc= and logdir=)",
                file=sys.stderr,
            )
        return
    try:
        data = json.dumps({"value": value}, allow_nan=False).encode()
        fmt = "json" if json.loads(data)["value"] == value else "pickle"
    except (TypeError, ValueError):
        fmt = "pickle"
    if fmt == "pickle":
        data = pickle.dumps(value, protocol=4)
    if len(data) > result_max_bytes:
        raise ValueError(
            f"the function returned {len(data)} bytes ({fmt}); at most {result_max_bytes} "
            "come back through result(): save large results to the PVC and return their path"
        )
    directory = Path(logdir)
    directory.mkdir(parents=True, exist_ok=True)
    for old in ("json", "pickle"):
        (directory / f"{result_stem}.{old}").unlink(missing_ok=True)
    path = directory / f"{result_stem}.{fmt}"
    partial = path.with_name(path.name + ".tmp")
    partial.write_bytes(data)
    partial.replace(path)
    print(f"ptjob: rank 0 returned a {type(value).__name__}, kept in {path}", flush=True)
