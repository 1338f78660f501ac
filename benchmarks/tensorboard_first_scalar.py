"""TensorBoard time to first scalar: plain ``tensorboard`` vs our proxied instance.

A log directory with 100,000 scalar points (``--tags`` tags x steps, written by
``torch.utils.tensorboard.SummaryWriter``) is read by:

(a) plain ``tensorboard --logdir D --host 127.0.0.1 --port P --load_fast X``, timed
    from process start to the first ``data/plugin/scalars/scalars`` answer with
    data, on its own port;
(b) our path: a real ``jupyter server`` with the extension (started once, not
    timed), ``POST pytorchjob/api/tensorboards`` then the same scalar URL polled
    through our proxy, timed from the POST to the first answer with data; the
    instance is deleted after each run so every run starts a fresh TensorBoard.

Runs alternate (a), (b) after one untimed warm-up of each, so both see the same
page cache. Prints each pair and the median ratio (b)/(a) (goal <= 1.1), for each
``--load_fast`` mode in turn: ``false`` (what the extension sets by default) and
``auto`` (TensorBoard's own default, the Rust data server when it is installed).

    python benchmarks/tensorboard_first_scalar.py [--runs 5] [--load-fast false,auto]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

POLL = 0.02
TOKEN = "benchmark-token"
BASE = "/bench/"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def write_events(logdir: Path, points: int, tags: int) -> None:
    from torch.utils.tensorboard import SummaryWriter

    steps = points // tags
    writer = SummaryWriter(log_dir=str(logdir), max_queue=1000, flush_secs=3600)
    for step in range(steps):
        for t in range(tags):
            writer.add_scalar(f"train/metric{t}", 1.0 / (1 + step) + t, step)
    writer.close()


def fetch(url: str, method: str = "GET", body: Any = None, timeout: float = 60) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        raw = response.read()
        return json.loads(raw) if raw else None


def poll_scalars(url: str, deadline: float) -> None:
    """Until ``url`` answers a non-empty scalar list."""
    while time.monotonic() < deadline:
        try:
            if fetch(url, timeout=10):
                return
        except (urllib.error.URLError, ConnectionError, json.JSONDecodeError):
            pass
        time.sleep(POLL)
    raise TimeoutError(url)


def plain(logdir: Path, load_fast: str, tag: str) -> float:
    port = free_port()
    argv = [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir)]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--load_fast", load_fast]
    url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=.&tag={tag}"
    start = time.monotonic()
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        poll_scalars(url, start + 120)
        return time.monotonic() - start
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def proxied(server: str, logdir: str, tag: str) -> tuple[float, float]:
    """Seconds until the POST answered (TensorBoard ready) and until the first scalars."""
    start = time.monotonic()
    tb = fetch(server + "pytorchjob/api/tensorboards", "POST", {"logdir": logdir})
    ready = time.monotonic() - start
    url = f"{server}{tb['url']}data/plugin/scalars/scalars?run=.&tag={tag}"
    try:
        poll_scalars(url, start + 120)
        return ready, time.monotonic() - start
    finally:
        fetch(f"{server}pytorchjob/api/tensorboards/{tb['id']}", "DELETE")


def start_server(root: Path, load_fast: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(workdir / "config"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
    }
    argv = [sys.executable, "-m", "jupyter_server", "--ServerApp.open_browser=False"]
    argv += [
        "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.allow_root=True",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.base_url={BASE}",
        f"--PyTorchJobApp.tensorboard_load_fast={load_fast}",
    ]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}{BASE}"
    deadline = time.monotonic() + 60
    while True:
        try:
            fetch(url + "pytorchjob/api/config")
            return server, url
        except (urllib.error.URLError, ConnectionError):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Jupyter server did not start") from None
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--tags", type=int, default=4)
    parser.add_argument("--load-fast", default="false,auto", help="modes, comma-separated")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    modes = args.load_fast.split(",")
    if not set(modes) <= {"false", "true", "auto"}:
        parser.error(f"--load-fast: each of false, true, auto; got {args.load_fast!r}")

    workdir = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    root = workdir / "root"
    logdir = root / "logs"
    logdir.mkdir(parents=True)
    t0 = time.monotonic()
    write_events(logdir, args.points, args.tags)
    size = sum(f.stat().st_size for f in logdir.iterdir())
    print(
        f"{args.points} points ({args.tags} tags) in {size / 1e6:.1f} MB of events, "
        f"written in {time.monotonic() - t0:.1f} s"
    )
    try:
        for mode in modes:
            measure(root, logdir, workdir, mode, args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def measure(root: Path, logdir: Path, workdir: Path, load_fast: str, runs: int) -> None:
    """Plain and proxied, alternating, with ``--load_fast load_fast``."""
    print(f"--load_fast {load_fast}")
    tag = "train/metric0"
    server, url = start_server(root, load_fast, workdir)
    try:
        plain(logdir, load_fast, tag)  # warm-up: page cache, .pyc files
        proxied(url, "logs", tag)
        rows = []
        head = f"{'run':>3}  {'(a) plain s':>11}  {'(b) proxied s':>13}  {'(b)/(a)':>7}"
        print(f"{head}  {'(b) POST answered s':>19}")
        for run in range(1, runs + 1):
            a = plain(logdir, load_fast, tag)
            ready, b = proxied(url, "logs", tag)
            rows.append((a, b))
            print(f"{run:>3}  {a:>11.3f}  {b:>13.3f}  {b / a:>7.3f}  {ready:>19.3f}")
        ratio = statistics.median(b / a for a, b in rows)
        print(
            f"median: (a) {statistics.median(a for a, _ in rows):.3f} s, "
            f"(b) {statistics.median(b for _, b in rows):.3f} s, "
            f"ratio {ratio:.3f} (goal <= 1.1)"
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
