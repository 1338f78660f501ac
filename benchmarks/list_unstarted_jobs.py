"""``ptjob list`` on the kubernetes backend with N PyTorchJobs nothing was made for yet
(no status, no pods: the operator is down or slow), against ``kubectl get pytorchjobs``
of the same namespace, side by side.

Set-up: the fake Kubernetes API (tests/fake_kube, operator off) in this process, N jobs
seeded as a submit stores them. ``ptjob list`` runs as its own process with the code of
``--repo`` (default: this checkout), so an older checkout gives the baseline; kubectl
(Debian's ``kubernetes-client``) reads through its discovery cache, warmed first.

Prints: the API requests one ``ptjob list`` makes (the fake's access log), and the
median wall time of ``ptjob list`` and of ``kubectl get``, runs alternating, with their
ratio.

    python benchmarks/list_unstarted_jobs.py [--jobs 1000] [--runs 7] [--repo PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NS = "team-a"


async def timed(
    cmd: list[str], env: dict[str, str], cwd: str, fake: object
) -> tuple[float, int, Counter[str]]:
    """Wall seconds of ``cmd`` run in ``cwd``, the API requests it made and their paths'
    last parts."""
    log: list[tuple[str, str, dict[str, str]]] = fake.access_log  # type: ignore[attr-defined]
    before = len(log)
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    made = log[before:]
    return elapsed, len(made), Counter(path.rstrip("/").rsplit("/", 1)[-1] for _, path, _ in made)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--repo", type=Path, default=REPO, help="the code ptjob runs")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from jupyter_pytorchjob.job import JobSpec
    from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest
    from tests.fake_kube import FakeKube

    kubectl = shutil.which("kubectl")
    fake = await FakeKube.start(operator=False)
    # kubectl (client-go) sends no bearer token over plain HTTP, and the fake answers an
    # anonymous discovery 403: here every request counts as the kubeconfig's user.
    fake._authenticate = lambda request: fake.user  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = fake.write_kubeconfig(Path(tmp) / "kubeconfig")
            for i in range(args.jobs):
                spec = JobSpec.from_wire({"name": f"job-{i:04d}", "command": ["python", "t.py"]})
                fake.add(build_manifest(spec, namespace=NS))
            env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
            env |= {
                "KUBECONFIG": str(config),
                "PTJOB_BACKEND": "kubernetes",
                "PYTHONPATH": str(args.repo.resolve()),
            }
            # Run in ``tmp``: ``-m`` puts the working directory before PYTHONPATH.
            ptjob = [sys.executable, "-m", "jupyter_pytorchjob.cli", "list"]
            get = [str(kubectl), "--cache-dir", f"{tmp}/cache", "get", "pytorchjobs", "-n", NS]
            _, requests, paths = await timed(ptjob, env, tmp, fake)
            print(f"{args.jobs} jobs not started yet, code of {args.repo}")
            print(f"ptjob list: {requests} API requests ({dict(paths.most_common(4))})")
            if kubectl is None:
                print("kubectl not installed: no time comparison")
                return
            await timed(get, env, tmp, fake)  # discovery into its cache
            _, kubectl_requests, _ = await timed(get, env, tmp, fake)
            print(f"kubectl get pytorchjobs: {kubectl_requests} API request(s)")
            ours: list[float] = []
            theirs: list[float] = []
            for _ in range(args.runs):
                ours.append((await timed(ptjob, env, tmp, fake))[0])
                theirs.append((await timed(get, env, tmp, fake))[0])
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"median of {args.runs}: ptjob list {a * 1000:.0f} ms, kubectl get "
                  f"{b * 1000:.0f} ms, ratio {a / b:.2f}")  # fmt: skip
    finally:
        await fake.stop()


if __name__ == "__main__":
    asyncio.run(main())
