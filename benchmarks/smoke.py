"""One benchmark command for ``make bench-smoke``: run it, time it, and fail if it left
anything behind.

    python benchmarks/smoke.py [--timeout 300] [--grace 10] -- COMMAND...

The command runs with a fresh ``TMPDIR`` of its own and under this process as a child
subreaper (``PR_SET_CHILD_SUBREAPER``: whatever it starts and orphans, daemons included,
stays our descendant). It fails (exit 1) if it fails or outlives ``--timeout``, if a process
it started is still alive once it has exited (after a short grace for ones already
stopping), or if it left a file in its ``TMPDIR``; the leftovers are named, then killed and
removed. Prints its wall time and the CPU time of everything it ran.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

PR_SET_CHILD_SUBREAPER = 36


def left_files(tmp: Path) -> list[str]:
    """What is left in ``tmp``, less what other programs keep there on purpose: torch's
    compile cache (``torchinductor_<user>``, made by the jobs' torch) and TensorBoard's
    directory of running instances (``.tensorboard-info``: each removes its own file on
    exit, the directory stays for the next one)."""
    left = []
    for path in tmp.iterdir():
        if path.name == ".tensorboard-info":
            left += [f"{path.name}/{info.name}" for info in path.iterdir()]
        elif not path.name.startswith("torchinductor_"):
            left.append(path.name)
    return sorted(left)


def reap() -> None:
    """Collect the orphans that were reparented to us and have exited."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def leftovers() -> list[psutil.Process]:
    reap()
    alive = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            pass
    return alive


def describe(proc: psutil.Process) -> str:
    try:
        return f"{proc.pid} {' '.join(proc.cmdline())[:200]}"
    except psutil.Error:
        return str(proc.pid)


def kill_all(procs: list[psutil.Process]) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)
    reap()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--grace",
        type=float,
        default=10.0,
        help="seconds given to descendants already on their way out (a deleted job's supervisor)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    scripts = [a for a in command if a.endswith((".py", ".js"))]  # the last: the benchmark
    name = scripts[-1].removeprefix("benchmarks/") if scripts else command[0]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"{name}: cannot become a subreaper; leftover processes go unseen")
    tmp = Path(tempfile.mkdtemp(prefix="bench-smoke-"))
    problems = []
    start = time.perf_counter()
    child = subprocess.Popen(command, env={**os.environ, "TMPDIR": str(tmp)})
    try:
        code = child.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        code = None
        problems.append(f"still running after {args.timeout:.0f} s: killed")
        kill_all([psutil.Process(child.pid), *leftovers()])
        child.wait()
    wall = time.perf_counter() - start
    if code:
        problems.append(f"exited with {code}")
    left = leftovers()
    if left:
        psutil.wait_procs(left, timeout=args.grace)
        left = leftovers()
    if left:
        problems.append("left processes running (killed): " + "; ".join(map(describe, left)))
        kill_all(left)
    files = left_files(tmp)
    if files:
        problems.append(f"left files in its TMPDIR (removed): {', '.join(files[:10])}")
    shutil.rmtree(tmp, ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    print(f"[bench-smoke] {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    for problem in problems:
        print(f"[bench-smoke] {name} FAILED: {problem}", file=sys.stderr, flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
