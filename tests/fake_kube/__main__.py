"""``python -m tests.fake_kube --port N --kubeconfig PATH [--operator]``.

Serves until interrupted. Hooks are reachable over HTTP from other processes:
``POST /_fake/<hook>``, ``/_fake/operator/<method>`` or ``/_fake/trainer/<method>`` with
``{"args": [...], "kwargs": {...}}`` (e.g. ``/_fake/append_log``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from .server import FakeKube


async def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_kube", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--kubeconfig", help="write a kubeconfig for the fake here")
    parser.add_argument("--namespace", default="team-a")
    parser.add_argument("--token", default="dummy-token")
    parser.add_argument("--operator", action="store_true", help="simulate the Training Operator")
    parser.add_argument(
        "--kinds",
        default="pytorchjob,trainjob",
        help="the job kinds the cluster serves, comma-separated (pytorchjob, trainjob)",
    )
    args = parser.parse_args()
    fake = await FakeKube.start(
        host=args.host, port=args.port, operator=args.operator, kinds=args.kinds.split(",")
    )
    fake.add_namespace(args.namespace)
    if args.kubeconfig:
        fake.write_kubeconfig(args.kubeconfig, namespace=args.namespace, token=args.token)
    print(f"fake-kube listening on {fake.url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fake.stop()


if __name__ == "__main__":
    asyncio.run(main())
