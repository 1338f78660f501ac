"""A browser benchmark against a JupyterLab of its own: serves this checkout's built
extension on a fresh local-backend root (as ``panel_first_render.py`` does), runs the
command with ``--url URL --token T`` appended, then deletes the jobs left in the root,
stops the lab and removes its files.

    python benchmarks/with_lab.py node benchmarks/log_viewer/run.js [--lines 1000000]

Exits with the command's status.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from local_jobs_list import TOKEN, stop  # this directory: the same server
from log_streams import wait_http
from panel_first_render import serve_lab

from jupyter_pytorchjob.backends.local import LocalBackend


async def main(command: list[str]) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-lab-"))
    root = tmp / "jobs"
    root.mkdir()
    try:
        server, port = serve_lab(root, tmp, tmp / "lags.json")
        try:
            base = f"http://127.0.0.1:{port}"
            await wait_http(f"{base}/api/status")
            run = await asyncio.create_subprocess_exec(*command, "--url", base, "--token", TOKEN)
            code = await run.wait()
        finally:
            stop(server)
            # What the command left (a failed run keeps its job): stopped, not orphaned.
            backend = LocalBackend(root=root, volume_root=tmp / "volumes")
            for job in await backend.list_jobs():
                await backend.delete_job(job.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return code


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1:])))
