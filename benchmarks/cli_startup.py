"""``ptjob list`` (local backend) start-up beside ``kubectl version --client``.

Seeds ``--jobs`` finished local jobs (copies of one real 2-node job, indexed as a server's
list leaves them) under a temporary ``$PTJOB_HOME``, then runs, ``--runs`` rounds, each
round every command once in turn: ``python -c pass`` (a bare interpreter), ``python -c
"import asyncio"``, ``ptjob list`` of the working tree's package, of ``--base``'s (a git
revision, ``git archive``d: the baseline side by side) if given, and ``kubectl version
--client`` (the goal: ``ptjob list`` within 1.5x its CPU). Each command's CPU time (user +
system) comes from ``getrusage(RUSAGE_CHILDREN)`` around it; wall time beside it. Bytecode
is compiled first (``compileall``) into each package copy: the dev environment sets
``PYTHONDONTWRITEBYTECODE=1``, and without ``.pyc`` files every import compiles.

    python benchmarks/cli_startup.py [--runs 10] [--jobs 20] [--base REV]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_jobs_list import seed  # this directory: the same finished jobs
from log_streams import package_of  # this directory: a revision's package

REPO = Path(__file__).resolve().parent.parent
# What the console script runs (its generated wrapper), so that no runpy is measured.
PTJOB = "import sys; from jupyter_pytorchjob.cli import main; sys.exit(main())"


def compile_bytecode(code: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(code / "jupyter_pytorchjob")],
        env=env,
        check=True,
    )


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """CPU (user + system) and wall seconds of one run of ``argv``, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{argv} exited {out.returncode}: {out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out.stdout


def ms(values: list[float]) -> str:
    return f"{min(values) * 1000:6.1f} / {statistics.median(values) * 1000:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--base", help="a git revision whose ptjob runs beside this one")
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-"))
    try:
        root = tmp / "home"
        asyncio.run(seed(root, args.jobs, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTJOB_BACKEND")}
        env.update(PTJOB_HOME=str(root), NO_COLOR="1")
        python = sys.executable
        codes = {"ptjob list": REPO}
        if args.base:
            codes[f"ptjob list @{args.base}"] = package_of(args.base, tmp / "base")
        for code in codes.values():
            compile_bytecode(code)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([python, "-c", "pass"], env),
            'python -c "import asyncio"': ([python, "-c", "import asyncio"], env),
        }
        for label, code in codes.items():
            commands[label] = ([python, "-c", PTJOB, "list"], {**env, "PYTHONPATH": str(code)})
        if kubectl:
            commands["kubectl version --client"] = ([kubectl, "version", "--client"], env)
        else:
            print("kubectl not installed: no ratio to it")
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        wall: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, (argv, environ) in commands.items():
                # In the temporary folder: ``python -c`` puts the working directory first
                # on the path, ahead of PYTHONPATH's package.
                used, took, out = timed(argv, environ, tmp)
                if label.startswith("ptjob"):
                    listed = len(out.splitlines()) - 1  # a header line, then a job a line
                    assert listed == args.jobs, (label, out)
                cpu[label].append(used)
                wall[label].append(took)
        print(f"{args.runs} runs alternating, {args.jobs} local jobs; min / median")
        for label in commands:
            print(f"  {label:32} CPU {ms(cpu[label])}   wall {ms(wall[label])}")
        if kubectl:
            ref = cpu["kubectl version --client"]
            for label in codes:
                print(
                    f"  {label} / kubectl CPU: {min(cpu[label]) / min(ref):.2f}x min, "
                    f"{statistics.median(cpu[label]) / statistics.median(ref):.2f}x median "
                    "(goal: <= 1.5x)"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
