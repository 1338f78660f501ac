"""The Python API stands on its own: ``submit``/``Job`` in a plain Python process where
IPython is not installed (it is no dependency of the package; only the magic needs it).

The environment is a plain venv (no system site-packages) whose site-packages links
every distribution of this test's own environment except IPython's: torch and the
package's dependencies are there without copying gigabytes or reaching an index, and
IPython is truly absent - ``import IPython`` fails - rather than hidden by an import
hook that the code under test could step around.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def is_ipython(entry: Path) -> bool:
    """An entry of site-packages that is IPython: the package or its metadata."""
    name = entry.name.lower()
    return name == "ipython" or name.startswith("ipython-")


SCRIPT = textwrap.dedent(
    """\
    import json
    import sys

    from jupyter_pytorchjob import Job, submit


    def add(a, b):
        import torch.distributed as dist

        return {"sum": a + b, "world": dist.get_world_size(), "rank": dist.get_rank()}


    job = submit(add, nodes=2, args={"a": 1, "b": 2}, name="plain")
    try:
        state = job.wait(timeout=120)
        result = job.result()
        listed = [j.name for j in Job.list()]
    finally:
        job.delete()
    ipython = sorted(m for m in sys.modules if m == "IPython" or m.startswith("IPython."))
    print(json.dumps({"state": state, "result": result, "listed": listed, "ipython": ipython}))
    """
)


def venv_without_ipython(where: Path) -> Path:
    """A plain venv linking this environment's site-packages, IPython left out; its python."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if not is_ipython(entry):
            (Path(purelib) / entry.name).symlink_to(entry)
    return python


def test_submit_runs_a_function_job_with_no_ipython_installed(tmp_path: Path) -> None:
    python = venv_without_ipython(tmp_path / "venv")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PTJOB_HOME": str(tmp_path / "home"),
        "PTJOB_BACKEND": "local",
    }
    absent = subprocess.run(
        [str(python), "-c", "import IPython"], env=env, capture_output=True, timeout=60
    )
    assert absent.returncode != 0 and b"No module named 'IPython'" in absent.stderr
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    try:
        run = subprocess.run(
            [str(python), str(script)],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            cwd=tmp_path,
        )
    finally:  # the job's processes, whatever became of the script
        delete = "from jupyter_pytorchjob.cli import main; main(['delete', 'plain'])"
        subprocess.run([str(python), "-c", delete], env=env, capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["state"] == "Succeeded"
    assert outcome["result"] == {"sum": 3, "world": 2, "rank": 0}
    assert outcome["listed"] == ["plain"]
    assert outcome["ipython"] == []
