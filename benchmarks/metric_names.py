"""A log printing a dict with fresh metric names on every line (#25 item 5), parsed by
a baseline revision and by this tree, side by side: the time to parse it (as the
progress parser does, one read of ``--lines`` lines) and the parser's peak memory.

    python benchmarks/metric_names.py [--baseline REV] [--lines 20000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_files import ROOT, export  # a sibling script

CHILD = r"""
import resource, sys, time
from jupyter_pytorchjob.backends.progress import ProgressSources
lines = int(sys.argv[1])
data = "".join(
    f"2026-11-26T09:00:00.000000001Z {{'loss': 0.5, 'metric_{i}': {i}}}\n" for i in range(lines)
).encode()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sources = ProgressSources(None)
start = time.perf_counter()
for part in range(0, len(data), 1 << 20):  # 1 MiB reads, whole lines
    chunk = data[part : part + (1 << 20)]
    sources.feed_log(chunk)
    sources.merged()
elapsed = time.perf_counter() - start
progress = sources.merged()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(f"{elapsed:.3f} {grown // 1024} {len(progress.metrics)}")
"""


def run(tree: Path, lines: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(lines)],
            env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="c7ce4f8", help="revision to compare with")
    parser.add_argument("--lines", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = export(args.baseline, Path(tmp))
        old = run(baseline, args.lines)
        new = run(ROOT, args.lines)
    print(f"{'tree':<9} {'seconds':>8} {'peak +MiB':>10} {'metrics kept':>13}")
    for label, (seconds, mib, kept) in ((args.baseline, old), ("this", new)):
        print(f"{label:<9} {seconds:8.3f} {mib:10d} {kept:13d}")
    print(f"ratio this/baseline: time {new[0] / old[0]:.3f}")


if __name__ == "__main__":
    main()
