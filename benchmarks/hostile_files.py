"""Hostile files on a job's volume, read by a baseline revision and by this tree, side by
side: wall time, peak memory and outcome of one read each (#25 item 2).

Scenarios (each in a fresh child process, its address space capped at ``--cap-mib``,
killed after ``--timeout`` s: a hang):

* ``zero-archive``: the chief's archived log ``master-0.log`` a link to ``/dev/zero``,
  read as the progress watcher reads a job whose pods are gone (``chief_tail``);
* ``fifo-archive``: the same file a FIFO;
* ``fifo-event``:  a FIFO named like an event file in the log directory, next to a real
  one, scanned and read as the progress parser does (``LogdirScalars.read``);
* ``linked-logdir``: the log directory a link to another project's runs.

    python benchmarks/hostile_files.py [--baseline REV] [--timeout 20] [--cap-mib 3072]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import os, resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
scenario, where = sys.argv[1], Path(sys.argv[2])
from jupyter_pytorchjob.backends.archive import ArchiveLocation, chief_tail
from jupyter_pytorchjob.backends.tfevents import LogdirScalars
start = time.perf_counter()
try:
    if scenario.endswith("archive"):
        got = len(chief_tail(ArchiveLocation("data", where), 200, 4 << 20))
    else:
        got = sorted({{s.tag for s in LogdirScalars(where).read()}})
    outcome = f"ok {{got}}"
except MemoryError:
    outcome = "MemoryError"
print(outcome, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def plant(scenario: str, where: Path) -> Path:
    """The directory the reader is pointed at, with the hostile file in it."""
    if scenario.endswith("archive"):
        where.mkdir()
        if scenario == "zero-archive":
            (where / "master-0.log").symlink_to("/dev/zero")
        else:
            os.mkfifo(where / "master-0.log")
        return where
    from torch.utils.tensorboard import SummaryWriter

    other = where / "other-project"
    logdir = where / "logdir"
    if scenario == "fifo-event":
        logdir.mkdir(parents=True)
        os.mkfifo(logdir / "events.out.tfevents.0.fifo")
        writer = SummaryWriter(str(logdir / "run"))
    else:
        other.mkdir(parents=True)
        logdir.symlink_to(other, target_is_directory=True)
        writer = SummaryWriter(str(other))
    writer.add_scalar("secret" if scenario == "linked-logdir" else "loss", 0.5, 1)
    writer.close()
    return logdir


def run(tree: Path, scenario: str, timeout: float, cap: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        where = plant(scenario, Path(tmp) / "x")
        env = {**os.environ, "PYTHONPATH": str(tree)}
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(cap=cap), scenario, str(where)],
            env=env,
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            out, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            rss = psutil.Process(child.pid).memory_info().rss >> 20
            child.kill()
            child.wait()
            return f"HANG (killed after {time.perf_counter() - start:.1f} s, at {rss} MiB)"
        if not out.strip():
            return f"died (exit {child.returncode})"
        *outcome, seconds, peak = out.split()
        return f"{' '.join(outcome):<26} {float(seconds):7.3f} s  peak {int(peak) // 1024:5d} MiB"


def export(revision: str, into: Path) -> Path:
    """The package as it was at ``revision``."""
    archive = into / "baseline.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, "jupyter_pytorchjob"],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    version = ROOT / "jupyter_pytorchjob" / "_version.py"
    if version.exists():
        (into / "tree" / "jupyter_pytorchjob" / "_version.py").write_text(version.read_text())
    return into / "tree"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="c7ce4f8", help="revision to compare with")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--cap-mib", type=int, default=3072)
    args = parser.parse_args()
    cap = args.cap_mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        baseline = export(args.baseline, Path(tmp))
        print(f"{'scenario':<14} {'tree':<9} outcome")
        for scenario in ("zero-archive", "fifo-archive", "fifo-event", "linked-logdir"):
            for label, tree in ((args.baseline, baseline), ("this", ROOT)):
                print(f"{scenario:<14} {label:<9} {run(tree, scenario, args.timeout, cap)}")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
