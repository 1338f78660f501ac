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
    job: str,
    result_key: str,
    limits: tuple[int, int],
) -> None:
    """Run ``fn(**kwargs)`` once in this process with the process group initialised
    (nccl with CUDA, else gloo) when the job is distributed, then destroy the group;
    rank 0 sends the return value back (``_ptjob_send_result``). A failing function
    fails the process. A distributed rank then leaves through ``_ptjob_leave``."""
    import os

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
    resume_from = env.get("PTJOB_RESUME_FROM")
    if resume_from and "resume_from" not in kwargs and _ptjob_takes_resume_from(fn):
        # A clone made to resume from a checkpoint (ptjob clone --from-checkpoint).
        kwargs = {**kwargs, "resume_from": resume_from}
    try:
        value = fn(**kwargs)
    except Exception:
        if not distributed:
            raise
        import sys

        sys.excepthook(*sys.exc_info())  # what the interpreter would print
        _ptjob_leave(1)
    finally:
        dist.init_process_group = init
    if owns_group and dist.is_initialized():  # the function may have destroyed it
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        _ptjob_send_result(value, job, result_key, limits)
    if distributed:
        _ptjob_leave(0)


def _ptjob_leave(code: int) -> "_ptjob_typing.NoReturn":
    """Exit as the interpreter would (non-daemon threads joined, atexit handlers run,
    output flushed) but without its teardown: that destroys C++ statics while gloo's
    threads may still be unwinding, and about one rank in ten then aborts (SIGABRT,
    exit 134) after its work is done; OnFailure restarts it with no peers left."""
    import atexit
    import os
    import sys
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    os._exit(code)


def _ptjob_takes_resume_from(fn: "Callable[..., object]") -> bool:
    """Whether ``fn`` has a parameter named ``resume_from`` (not ``**kwargs``: what it
    forwards elsewhere should not get a surprise keyword)."""
    import inspect

    try:
        parameter = inspect.signature(fn).parameters.get("resume_from")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (
        parameter.POSITIONAL_OR_KEYWORD,
        parameter.KEYWORD_ONLY,
    )


def _ptjob_send_result(value: object, job: str, key: str, limits: tuple[int, int]) -> None:
    """Send rank 0's return value back, signed with the job's result key (HMAC-SHA256 over
    the job's name, the format and the bytes), so the notebook decodes only what this
    job wrote: JSON when it round-trips, else a pickle. Up to ``limits[1]`` bytes travel
    in this process's own log, as marked base64 lines of under 4 KiB (one ``write(2)``
    each: atomic on a pipe, so other ranks' output never splits them); larger values, up
    to ``limits[0]``, go to ``$PTJOB_LOGDIR`` on the job's PVC after a header line with
    the same signature (the key never touches the volume), and the log says so."""
    import base64
    import hashlib
    import hmac
    import json
    import os
    import pickle
    import sys
    from pathlib import Path

    most, in_log = limits
    try:
        data = json.dumps({"value": value}, allow_nan=False).encode()
        fmt = "json" if json.loads(data)["value"] == value else "pickle"
    except (TypeError, ValueError):
        fmt = "pickle"
    if fmt == "pickle":
        data = pickle.dumps(value, protocol=4)
    if len(data) > most:
        raise ValueError(
            f"the function returned {len(data)} bytes ({fmt}); at most {most} come back "
            "through result(): save large results to the PVC and return their path"
        )
    signed = b"ptjob-result\0" + job.encode() + b"\0" + fmt.encode() + b"\0" + data
    tag = hmac.new(bytes.fromhex(key), signed, hashlib.sha256).hexdigest()
    mark = f"ptjob-result {job}"
    sys.stdout.flush()

    def say(line: str) -> None:
        os.write(1, (line + "\n").encode())

    if len(data) <= in_log:
        text = base64.b64encode(data).decode("ascii")
        parts = [text[i : i + 3000] for i in range(0, len(text), 3000)] or [""]
        say(f"{mark} begin {fmt} {len(data)} {len(parts)}")
        for index, part in enumerate(parts):
            say(f"{mark} {index} {part}")
        say(f"{mark} end {tag}")
        return
    logdir = os.environ.get("PTJOB_LOGDIR")
    if not logdir:
        raise ValueError(
            f"the function returned {len(data)} bytes ({fmt}); without a PVC at most "
            f"{in_log} come back through result(): submit with pvc= (then up to {most} "
            "travel through the job's log directory) or save the data to a volume and "
            "return its path"
        )
    directory = Path(logdir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"ptjob-result-{job}"
    partial = directory / f".ptjob-result-{job}.{os.getpid()}.tmp"
    partial.write_bytes(f"ptjob-result {fmt} {len(data)} {tag}\n".encode() + data)
    partial.replace(path)
    say(f"{mark} file {fmt} {len(data)} {tag}")
    print(f"ptjob: rank 0 returned a {type(value).__name__}, kept in {path}", flush=True)
