"""Logs that outlive their pods: jobs whose replicas run through the real archive wrapper,
read back after ``cleanPodPolicy: All`` deleted their pods (fake API server) or their
local log files (local backend), without duplicates or gaps where the pod's log ends and
the archive's begins; a restarted replica's earlier run is its ``previous``.

On the fake API server nothing runs a pod's container, so the test plays the kubelet:
it runs the container's command (the wrapper around the user's command, as the manifest
says) as a local process with the pod's env (downward-API fields resolved from the pod's
labels, the PVC's mount path mapped to a directory here, which the notebook pod also
mounts), and appends the process's output to the pod's log as it comes, where the fake
stamps it as the kubelet does.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobState, LogChunk
from jupyter_pytorchjob.backends.archive import ArchiveLocation, chief_tail
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.job.errors import JobSpecInvalid
from jupyter_pytorchjob.kinds import kind_named

from .waiting import until

NS = "team-a"
LINES = 40
HALF = 20
# The user's command: LINES numbered lines; after HALF of them it waits for $GO to exist
# (so a test can read the pods' logs mid-run); exits with $EXIT.
SCRIPT = f"""\
import os, pathlib, sys, time
me, run, go = os.environ["ME"], os.environ["RUN"], pathlib.Path(os.environ["GO"])
for i in range({LINES}):
    if i == {HALF}:
        while not go.exists():
            time.sleep(0.01)
    print(me, "run", run, "line", i, flush=True)
sys.exit(int(os.environ["EXIT"]))
"""


def expected(replica: str, run: int, start: int = 0) -> list[str]:
    return [f"{replica} run {run} line {i}" for i in range(start, LINES)]


def body(**extra: Any) -> dict[str, Any]:
    return {
        "name": "arch",
        "nodes": 2,
        "shm": "off",
        "cleanPodPolicy": "All",
        "restartPolicy": "OnFailure",
        "pvc": [{"claim": "data", "mountPath": "/data"}],
        "logdir": "/data/tb",
        "command": ["python3", "-c", SCRIPT],
        **extra,
    }


async def read(stream: Any) -> tuple[dict[str, list[str]], list[LogChunk]]:
    """Lines per replica, and the notices."""
    lines: dict[str, list[str]] = {}
    notices = []
    async for chunk in stream:
        if chunk.notice:
            notices.append(chunk)
        else:
            for replica, text in chunk.runs():
                lines.setdefault(replica, []).extend(text.splitlines())
    return lines, notices


# -- the field -----------------------------------------------------------------------


def test_the_archive_defaults_to_the_log_directory_and_reads_back() -> None:
    for kind in ("PyTorchJob", "TrainJob"):
        spec = JobSpec.from_wire({**body(kind=kind), "cleanPodPolicy": "None"})
        assert spec.log_archive_base == "/data/tb"
        built = kind_named(kind).build(spec)
        assert kind_named(kind).parse(built) == spec
        for choice in ("off", "/data/logs"):
            chosen = spec.with_changes(log_archive=choice)
            assert kind_named(kind).parse(kind_named(kind).build(chosen)) == chosen
    assert JobSpec.from_wire({**body(), "logdir": None}).log_archive_base is None
    assert JobSpec.from_wire({**body(), "pvc": [], "logdir": None}).log_archive_base is None


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"logArchive": "/tmp/x"}, "must be a directory on a writable PVC of the job"),
        ({"logArchive": "/data/x", "pvc": []}, "the job mounts no writable PVC"),
        ({"logArchive": "relative"}, "logArchive"),
        ({"logArchive": "/data/x", "command": [], "args": ["--x"]}, "needs a command or"),
    ],
)
def test_a_bad_archive_directory_is_refused_by_name(change: dict[str, Any], says: str) -> None:
    with pytest.raises(JobSpecInvalid) as err:
        JobSpec.from_wire({**body(), "logdir": None, **change})
    assert "logArchive" in str(err.value)
    assert says in str(err.value)


# -- local backend --------------------------------------------------------------------

# The master's first run fails, its second succeeds; the worker runs once.
LOCAL_SCRIPT = f"""\
import os, pathlib, sys
me = "-".join(os.environ["HOSTNAME"].split("-")[-2:])
mark = pathlib.Path(os.environ["MARK"])
failing = me == "master-0" and not mark.exists()
run = 1 if me == "master-0" and not failing else 0
for i in range({LINES}):
    print(me, "run", run, "line", i, flush=True)
if failing:
    mark.touch()
    sys.exit(1)
"""


def test_a_jobs_progress_reads_the_chief_replicas_archive_tail(tmp_path: Path) -> None:
    """What the progress of a job whose pods are gone is read from: the master's (else
    rank 0's) current run, its last lines, whole lines only within the byte budget."""
    archive = ArchiveLocation("data", tmp_path)
    assert chief_tail(archive, 10, 1000) == b""

    def run(name: str, count: int) -> list[bytes]:
        lines = [f"2026-11-26T09:00:{i:02d}.000000001Z {name} {i}\n".encode() for i in range(count)]
        (tmp_path / name).write_bytes(b"".join(lines))
        return lines

    run("worker-1.log", 3)
    worker = run("worker-0.log", 3)
    assert chief_tail(archive, 10, 1000) == b"".join(worker)  # no master: rank 0
    run("master-0.log", 5)
    master = run("master-0.1.log", 50)  # the restarted master's run is the current one
    assert chief_tail(archive, 3, 10_000) == b"".join(master[-3:])
    # 120 bytes hold two whole lines of 49 bytes (and part of a third, dropped).
    assert chief_tail(archive, 10, 120) == b"".join(master[-2:])
    assert chief_tail(archive, 10, 20) == b""


async def test_local_logs_outlive_their_files(tmp_path: Path) -> None:
    backend = LocalBackend(
        root=tmp_path / "home", volume_root=tmp_path / "volumes", crash_back_off=0.2
    )
    try:
        spec = {**body(), "command": ["python", "-c", LOCAL_SCRIPT]}
        await backend.submit(JobSpec.from_wire({**spec, "env": {"MARK": str(tmp_path / "m")}}))
        assert (await backend.wait("arch", timeout=90)).state is JobState.SUCCEEDED
        logs = tmp_path / "home" / "jobs" / "arch" / "logs"
        await until(lambda: not list(logs.glob("*.log")), "cleanPodPolicy All to remove logs")
        archive = tmp_path / "volumes" / "data" / "tb" / ".ptjob-logs" / "arch"
        assert sorted(p.name for p in archive.iterdir()) == [
            "master-0.1.log",
            "master-0.log",
            "worker-0.log",
        ]
        lines, notices = await read(backend.logs("arch"))
        assert lines == {"master-0": expected("master-0", 1), "worker-0": expected("worker-0", 0)}
        assert [n.text for n in notices] == ["from the archive on PVC data (its pod is gone)"] * 2
        previous, _ = await read(backend.logs("arch", replica="master-0", previous=True))
        assert previous == {"master-0": expected("master-0", 0)}
    finally:
        for job in await backend.list_jobs():
            await backend.delete_job(job.name)


# -- fake API server --------------------------------------------------------------------


class Kubelet:
    """Runs pods' containers as local processes: the wrapper for real."""

    def __init__(self, fake: Any, pvc_root: Path, go: Path) -> None:
        self.fake = fake
        self.pvc_root = pvc_root
        self.go = go
        self.processes: list[asyncio.subprocess.Process] = []

    def env(self, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
        labels = pod["metadata"].get("labels") or {}
        env = {"PATH": os.environ["PATH"], "HOSTNAME": pod["metadata"]["name"]}
        for entry in container.get("env") or []:
            if "value" in entry:
                env[entry["name"]] = re.sub(r"^/data(?=/|$)", str(self.pvc_root), entry["value"])
            else:  # the downward API: metadata.labels['<key>']
                path = entry["valueFrom"]["fieldRef"]["fieldPath"]
                key = re.fullmatch(r"metadata\.labels\['(.+)'\]", path)
                assert key, path
                env[entry["name"]] = labels.get(key.group(1), "")
        return env

    async def run(self, replica: str, run: int, exit_code: int) -> int:
        name = f"arch-{replica}"
        pod = self.fake.get("pods", NS, name)
        container = next(c for c in pod["spec"]["containers"] if c["name"] == "pytorch")
        env = self.env(pod, container) | {
            "ME": replica,
            "RUN": str(run),
            "EXIT": str(exit_code),
            "GO": str(self.go),
        }
        process = await asyncio.create_subprocess_exec(
            *container["command"],
            *(container.get("args") or []),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        self.processes.append(process)
        assert process.stdout is not None
        while data := await process.stdout.read(65536):
            self.fake.append_log(NS, name, "pytorch", data)
        return await process.wait()

    def stop(self) -> None:
        for process in self.processes:
            if process.returncode is None:
                process.kill()


@pytest.fixture
def kubelet(fake_kube: Any, tmp_path: Path, jp_asyncio_loop: Any) -> Any:
    pvc_root = tmp_path / "pvc-data"  # what PVC 'data' holds; the notebook mounts it here
    pvc_root.mkdir()
    for pod, volumes in (("nb-0", [("data", str(pvc_root))]), ("nb-1", [])):
        fake_kube.add(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod, "namespace": NS},
                "spec": {
                    "containers": [
                        {
                            "name": "notebook",
                            "image": "jupyter",
                            "volumeMounts": [{"name": c, "mountPath": p} for c, p in volumes],
                        }
                    ],
                    "volumes": [
                        {"name": c, "persistentVolumeClaim": {"claimName": c}} for c, _ in volumes
                    ],
                },
            }
        )
    fake_kube.seed_pvc(NS, "data")
    runner = Kubelet(fake_kube, pvc_root, tmp_path / "go")
    yield runner
    runner.stop()
    jp_asyncio_loop.run_until_complete(asyncio.sleep(0))


@pytest.mark.slow
async def test_logs_outlive_pods_deleted_by_clean_pod_policy_all(
    fake_kube: Any, kubelet: Kubelet, tmp_path: Path
) -> None:
    backend = KubernetesBackend(self_pod="nb-0")
    elsewhere = KubernetesBackend(self_pod="nb-1")  # a notebook without the PVC
    try:
        await backend.submit(JobSpec.from_wire(body()))
        fake_kube.operator.run(NS, "arch")
        # The master's first run fails; the kubelet restarts it in place at once.
        kubelet.go.touch()
        assert await kubelet.run("master-0", 0, 1) == 1
        fake_kube.operator.exit(NS, "arch", "master-0", 1)
        kubelet.go.unlink()
        master = asyncio.create_task(kubelet.run("master-0", 1, 0))
        worker = asyncio.create_task(kubelet.run("worker-0", 0, 0))
        follower = asyncio.create_task(read(backend.logs("arch", follow=True)))

        # Half way, read the pods' logs as a client would, keeping where it stopped.
        since: dict[str, int] = {}
        seen: dict[str, list[str]] = {}

        async def half_read() -> bool:
            seen.clear()
            async for chunk in backend.logs("arch"):
                since.update(chunk.resume_offsets())
                for replica, text in chunk.runs():
                    seen.setdefault(replica, []).extend(text.splitlines())
            return all(len(seen.get(r, [])) == HALF for r in ("master-0", "worker-0"))

        for _ in range(500):
            if await half_read():
                break
            await asyncio.sleep(0.02)
        assert seen == {
            "master-0": expected("master-0", 1)[:HALF],
            "worker-0": expected("worker-0", 0)[:HALF],
        }
        kubelet.go.touch()
        assert await asyncio.wait_for(asyncio.gather(master, worker), 30) == [0, 0]
        fake_kube.operator.exit(NS, "arch", "worker-0", 0)
        fake_kube.operator.exit(NS, "arch", "master-0", 0)
        assert (await backend.get_job("arch")).state is JobState.SUCCEEDED
        assert fake_kube.operator.pods(NS, "arch") == []

        # Followed through the deletion: every line once, in order.
        followed, _ = await asyncio.wait_for(follower, 30)
        whole = {"master-0": expected("master-0", 1), "worker-0": expected("worker-0", 0)}
        assert followed == whole
        # Read afresh with no pod left: all of it, from the archive, saying so.
        lines, notices = await read(backend.logs("arch"))
        assert lines == whole
        assert [n.text for n in notices] == ["from the archive on PVC data (its pod is gone)"] * 2
        # Resumed where the pods' logs were left: the rest, no line twice, none missing.
        rest, _ = await read(backend.logs("arch", since=since))
        assert rest == {
            "master-0": expected("master-0", 1, HALF),
            "worker-0": expected("worker-0", 0, HALF),
        }
        # The restarted master's earlier run.
        previous, _ = await read(backend.logs("arch", replica="master-0", previous=True))
        assert previous == {"master-0": expected("master-0", 0)}
        # A notebook without the PVC is told which one to mount.
        lines, notices = await read(elsewhere.logs("arch"))
        assert lines == {}
        assert len(notices) == 2
        assert all("PVC 'data'" in n.text and "does not mount" in n.text for n in notices)
    finally:
        await backend.close()
        await elsewhere.close()


async def test_archived_replicas_come_back_merged_in_time_order(tmp_path: Path) -> None:
    """The archive of two replicas whose lines alternate (as the wrapper stamps them,
    nanoseconds): read back merged by time, also resumed from any chunk's offsets."""
    from jupyter_pytorchjob.backends.archive import read_archive

    from .test_log_order import alternate

    master, worker, order = alternate(3000)

    def nanos(log: bytes) -> bytes:  # the wrapper's stamps: nine digits
        return log.replace(b"Z ", b"000Z ")

    (tmp_path / "master-0.log").write_bytes(nanos(master))
    (tmp_path / "worker-0.log").write_bytes(nanos(worker))
    location = ArchiveLocation("workspace", tmp_path)
    chunks = [c async for c in read_archive(location, ["master-0", "worker-0"])]
    lines = [c for c in chunks if not c.notice]
    assert [line for c in lines for line in c.text.splitlines()] == order
    assert len(lines) > 1
    for half in range(1, len(lines)):  # a reconnect after any chunk
        since: dict[str, int] = {}
        for chunk in lines[:half]:
            since.update(chunk.resume_offsets())
        rest = [c async for c in read_archive(location, ["master-0", "worker-0"], since=since)]
        seen = [line for c in lines[:half] for line in c.text.splitlines()]
        assert seen + [line for c in rest if not c.notice for line in c.text.splitlines()] == order
