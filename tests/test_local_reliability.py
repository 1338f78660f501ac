"""The local backend never harms what is not its own, never loses a job's story, and keeps
its output pump linear; real processes throughout (issue 13)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.backends import JobInfo, JobNotFound, JobState
from jupyter_pytorchjob.backends.local import LocalBackend, index
from jupyter_pytorchjob.backends.local import backend as local_backend
from jupyter_pytorchjob.backends.local.store import JobDir
from jupyter_pytorchjob.job import JobSpecInvalid
from jupyter_pytorchjob.job.messages import Message

from .local_jobs import (
    EXAMPLES,
    backend,
    bystander,
    collect_logs,
    finished_with_every_node,
    make_spec,
    python,
    running,
)
from .waiting import until

pytestmark = pytest.mark.slow
__all__ = ["backend", "bystander"]  # fixtures


def recorded_pids_replaced(data: Any, pid: int) -> Any:
    """``data`` with every recorded process id (a key ``pid`` or ``*_pid``) set to ``pid``."""
    if isinstance(data, dict):
        return {
            k: pid
            if (k == "pid" or k.endswith("_pid")) and isinstance(v, int)
            else recorded_pids_replaced(v, pid)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [recorded_pids_replaced(v, pid) for v in data]
    return data


def plant_pid(jobdir: Path, pid: int, *, files: tuple[str, ...]) -> None:
    for name in files:
        path = jobdir / name
        path.write_text(json.dumps(recorded_pids_replaced(json.loads(path.read_text()), pid)))


@pytest.mark.parametrize(
    "where", [("replicas.json",), ("job.json",)], ids=["as-a-node", "as-the-supervisor"]
)
async def test_deleting_a_finished_job_signals_no_recycled_pid(
    backend: LocalBackend, bystander: subprocess.Popen[bytes], where: tuple[str, ...]
) -> None:
    """Pids wrap: long after a job finished, its recorded pids may belong to anyone."""
    await backend.submit(make_spec(name="done", nodes=2, command=python("pass")))
    assert (await backend.wait("done", timeout=60)).state is JobState.SUCCEEDED
    jobdir = backend.jobs_dir / "done"
    plant_pid(jobdir, bystander.pid, files=where)
    await backend.delete_job("done")
    assert bystander.poll() is None and running(bystander.pid)
    assert not jobdir.exists()


# -- the output pump ----------------------------------------------------------------------

PROGRESS = """
import sys
bar = '#' * 150
for i in range(400_000):
    sys.stdout.write('\\r%9d/400000 |%s| 12.34it/s [00:01<00:02, loss=0.1234]' % (i, bar))
"""


def progress_line(i: int) -> str:
    return "%9d/400000 |%s| 12.34it/s [00:01<00:02, loss=0.1234]" % (i, "#" * 150)  # noqa: UP031


async def test_progress_bar_without_newlines_streams_as_lines(backend: LocalBackend) -> None:
    """tqdm's 400k carriage-return updates (~210 bytes each, not one newline) pass the
    pump in linear time; each update is a line of the log, a redraw (``\\r`` + text)
    after the first, as the log line contract has it."""
    await backend.submit(make_spec(name="bar", script=PROGRESS))
    done = await backend.wait("bar", timeout=120)
    assert done.state is JobState.SUCCEEDED
    lines = (await collect_logs(backend, "bar"))["master-0"].split("\n")[:-1]
    assert len(lines) == 400_000
    assert lines[0] == progress_line(0)
    assert lines[123_456] == "\r" + progress_line(123_456)
    assert lines[-1] == "\r" + progress_line(399_999)


async def test_a_long_line_is_cut_at_16_kib(backend: LocalBackend) -> None:
    """Like a container runtime: a 1 MiB line becomes 64 lines of 16 KiB, in order."""
    script = (
        "import sys\n"
        "sys.stdout.write(''.join('%07d,' % i for i in range(131072)) + '\\n')\n"
        "print('after')\n"
    )
    await backend.submit(make_spec(name="long", script=script))
    assert (await backend.wait("long", timeout=60)).state is JobState.SUCCEEDED
    lines = (await collect_logs(backend, "long"))["master-0"].splitlines()
    assert [len(line) for line in lines[:-1]] == [16384] * 64
    assert "".join(lines[:-1]) == "".join("%07d," % i for i in range(131072))  # noqa: UP031
    assert lines[-1] == "after"


# -- a supervisor's own errors ------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (["/nonexistent/train"], "No such file or directory"),
        # (An argument over Linux's 128 KiB never gets here: the job model refuses it.)
        (["/"], "Permission denied"),  # a directory: exists, cannot be executed
    ],
    ids=["missing-command", "not-executable"],
)
async def test_a_node_that_cannot_start_fails_the_job_with_the_error(
    backend: LocalBackend, command: list[str], error: str
) -> None:
    await backend.submit(make_spec(name="nostart", command=command))
    done = await backend.wait("nostart", timeout=30)
    assert done.state is JobState.FAILED
    assert error in done.conditions[-1].message and "could not start" in done.conditions[-1].message
    (master,) = done.replicas
    assert (master.phase, master.exit_code, master.reason) == ("Failed", 128, "StartError")
    assert error in str(master.message or "")


def test_a_supervisor_that_crashes_leaves_its_error_as_the_message(
    backend: LocalBackend, jp_asyncio_loop: Any
) -> None:
    """The supervisor itself fails (here: an unreadable plan): its watchdog records how."""
    jobdir = backend.jobs_dir / "broken"
    (jobdir / "logs").mkdir(parents=True)
    job = {"state": "Created", "created": time.time(), "conditions": [], "run_policy": {}}
    (jobdir / "job.json").write_text(json.dumps(job))
    (jobdir / "replicas.json").write_text("{}")
    (jobdir / "plan.json").write_text("not json")
    backend._start_supervisor(JobDir(jobdir))
    done = jp_asyncio_loop.run_until_complete(backend.wait("broken", timeout=30, interval=0.1))
    condition = done.conditions[-1]
    assert (done.state, condition.reason) == (JobState.FAILED, "SupervisorLost")
    assert "exited with code 1: json.decoder.JSONDecodeError" in condition.message


# -- limits -------------------------------------------------------------------------------


async def test_more_nodes_than_the_machine_runs_are_refused(
    backend: LocalBackend, tmp_path: Path
) -> None:
    cpus = os.cpu_count() or 1
    too_many = 4 * cpus + 1
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(make_spec(name="huge", nodes=too_many, command=python("pass")))
    assert info.value.field == "nodes"
    message = str(info.value)
    assert f"at most {4 * cpus}" in message and f"{cpus} CPUs" in message
    assert "local_max_nodes" in message and str(too_many) in message
    # Beyond any cluster, the job body itself is refused (as on the kubernetes backend).
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(make_spec(name="huge", nodes=1_000_000, command=python("pass")))
    assert info.value.field == "nodes" and "at most 5000" in str(info.value)
    assert not backend.jobs_dir.exists() or list(backend.jobs_dir.iterdir()) == []

    configured = LocalBackend(root=backend.root, default_workdir=EXAMPLES, max_nodes=3)
    with pytest.raises(JobSpecInvalid) as info:
        await configured.submit(make_spec(name="four", nodes=4, command=python("pass")))
    assert "at most 3" in str(info.value) and "PyTorchJobApp.local_max_nodes" in str(info.value)
    assert not backend.jobs_dir.exists() or list(backend.jobs_dir.iterdir()) == []


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    jp_server_config["PyTorchJobApp"]["local_max_nodes"] = 2
    return jp_server_config


async def test_the_server_refuses_nodes_over_its_configured_limit(jp_fetch: Any) -> None:
    body = {"name": "three", "nodes": 3, "shm": "off", "command": ["python", "-c", "pass"]}
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("pytorchjob", "api", "jobs", method="POST", body=json.dumps(body))
    answer = json.loads(info.value.response.body)
    assert info.value.code == 400 and answer["field"] == "nodes"
    assert "at most 2" in answer["message"]


# -- names and paths ----------------------------------------------------------------------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A directory outside the jobs root that looks like a job's."""
    victim = tmp_path / "victim"
    (victim / "logs").mkdir(parents=True)
    (victim / "job.json").write_text(json.dumps({"state": "Succeeded", "created": 1.0}))
    (victim / "replicas.json").write_text("{}")
    (victim / "manifest.json").write_text("{}")
    return victim


@pytest.mark.parametrize(
    "name", ["../../victim", "ABSOLUTE", "jobs/../../../victim", "..", ".", "x" * 300, ""]
)
async def test_names_never_reach_outside_the_jobs_root(
    backend: LocalBackend, victim: Path, name: str
) -> None:
    name = str(victim) if name == "ABSOLUTE" else name
    calls = (
        backend.delete_job,
        backend.get_job,
        backend.events,
        backend.job_logdir,
        lambda n: collect_logs(backend, n),
    )
    for call in calls:
        with pytest.raises(JobNotFound):
            await call(name)
    assert (victim / "job.json").is_file()


def test_cli_delete_never_removes_a_directory_outside_the_jobs_root(
    tmp_path: Path, victim: Path
) -> None:
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    ptjob = Path(sys.executable).with_name("ptjob")
    for name in ("../../victim", str(victim)):
        result = subprocess.run(
            [str(ptjob), "delete", name], capture_output=True, text=True, env=env, check=False
        )
        assert result.returncode == 1 and "not found" in result.stderr
        assert "Traceback" not in result.stderr
    assert (victim / "job.json").is_file()


# -- shipped scripts ----------------------------------------------------------------------


@pytest.mark.parametrize("nproc", [1, 2], ids=["python", "torchrun"])
async def test_a_shipped_script_leaves_no_temporary_directory(
    backend: LocalBackend, tmp_path: Path, nproc: int
) -> None:
    """The script lives in the job (removed with it), not in a temporary directory per node
    that nobody removes; it still runs as the bootstrap runs it in a cluster."""
    temp = tmp_path / "temp"
    temp.mkdir()
    # One write(2) per line: with PYTHONUNBUFFERED a print() is a write per piece, and two
    # torchrun ranks sharing a node's pipe interleave their pieces mid-line.
    script = (
        "import os, sys\n"
        "line = f\"rank {os.environ['RANK']} argv {sys.argv[1:]} script "
        "{'PTJOB_SCRIPT' in os.environ}\\n\"\n"
        "os.write(1, line.encode())\n"
    )
    await backend.submit(
        make_spec(
            name="shipped",
            nodes=2,
            nprocPerNode=nproc,
            script=script,
            args=["--lr", "0.1"],
            env={"TMPDIR": str(temp)},
            cleanPodPolicy="None",
        )
    )
    done = await finished_with_every_node(backend, "shipped")
    logs = await collect_logs(backend, "shipped")
    assert done.state is JobState.SUCCEEDED, logs
    lines = (logs["master-0"] + logs["worker-0"]).splitlines()
    said = sorted(line for line in lines if line.startswith("rank "))
    assert said == [
        f"rank {rank} argv ['--lr', '0.1'] script False" for rank in range(2 * nproc)
    ], logs
    assert [p.name for p in temp.iterdir() if p.name.startswith("ptjob-")] == []
    await backend.delete_job("shipped")
    assert not (backend.jobs_dir / "shipped").exists()


# -- many jobs ------------------------------------------------------------------------------


async def test_the_job_list_rereads_only_what_changed(backend: LocalBackend) -> None:
    await backend.submit(make_spec(name="first", command=python("pass")))
    await backend.wait("first", timeout=60)
    before = {j.name: j for j in await backend.list_jobs()}
    again = {j.name: j for j in await backend.list_jobs()}
    assert again["first"] is before["first"]  # finished, files unchanged: not read again

    replicas = backend.jobs_dir / "first" / "replicas.json"
    record = json.loads(replicas.read_text())
    record["master-0"]["restarts"] = 7  # as the supervisor rewrites it (a new file)
    index.forget(backend.jobs_dir, "first")  # as a writer after the supervisor's end does
    tmp = replicas.with_name(".replicas.json.tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(replicas)
    (changed,) = await backend.list_jobs()
    assert changed.replicas[0].restarts == 7
    assert json.loads(changed.list_json())["replicas"][0]["restarts"] == 7

    await backend.submit(make_spec(name="second", command=python("pass")))
    assert [j.name for j in await backend.list_jobs()] == ["second", "first"]
    await backend.delete_job("first")
    assert [j.name for j in await backend.list_jobs()] == ["second"]


async def settled(backend: LocalBackend, *names: str) -> None:
    """Wait until the jobs' supervisors have put them into the index (their last act)."""
    deadline = time.monotonic() + 60
    while not set(names) <= set(index.read_index(backend.jobs_dir)):
        assert time.monotonic() < deadline, f"{names} never indexed"
        await asyncio.sleep(0.05)


async def test_settled_jobs_are_listed_from_the_index_alone(
    backend: LocalBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold list of 1,000 finished jobs waited on two files per job: once settled, a
    job is read from the one index file its supervisor wrote last."""
    for name in ("one", "two"):
        await backend.submit(make_spec(name=name, command=python("print('hi')")))
    await backend.submit(make_spec(name="busy", command=python("import time; time.sleep(60)")))
    await settled(backend, "one", "two")
    # What a list shows, in one line: not the supervisor's pids, ports and marks.
    text = index.index_path(backend.jobs_dir).read_text()
    entry = json.loads(text)["one"]
    assert "\n" not in text.strip()
    assert not {"mark", "port", "supervisor", "watchdog"} & set(entry["job"])
    assert entry["job"]["state"] == "Succeeded"
    assert set(entry["replicas"]["master-0"]) == {"phase", "restarts", "exit_code"} | {
        "reason",
        "message",
    }
    expected = {j.name: j.to_wire() for j in await backend.list_jobs()}
    reads: list[Path] = []
    real_read_json = local_backend.read_json

    def read_json(path: Path, default: Any = None) -> Any:
        reads.append(path)
        return real_read_json(path, default)

    monkeypatch.setattr(local_backend, "read_json", read_json)
    fresh = LocalBackend(root=backend.root, volume_root=backend.volume_root)
    listed = {j.name: j.to_wire() for j in await fresh.list_jobs()}
    assert {n: w for n, w in listed.items() if n != "busy"} == {
        n: w for n, w in expected.items() if n != "busy"
    }
    assert listed["one"]["state"] == "Succeeded"
    assert {p.parent.name for p in reads} == {"busy"}  # the running job's files only

    # Deleted: gone from the list and the index; the same name again is the new job.
    await fresh.delete_job("one")
    assert "one" not in index.read_index(backend.jobs_dir)
    await fresh.submit(make_spec(name="one", command=python("import time; time.sleep(60)")))
    again = {j.name: j for j in await fresh.list_jobs()}
    assert again["one"].state is not JobState.SUCCEEDED and again["one"].finished is None


async def test_a_settled_job_missing_from_the_index_is_added_by_a_list(
    backend: LocalBackend,
) -> None:
    """Jobs from before the index, or whose supervisor was killed: the first list adds
    them, the next reads them from it."""
    await backend.submit(make_spec(name="old", command=python("pass")))
    await settled(backend, "old")
    job = json.loads((backend.jobs_dir / "old" / "job.json").read_text())
    await until(lambda: local_backend.supervision_gone(job), "its supervisor's exit")
    index.index_path(backend.jobs_dir).unlink()
    (first,) = await backend.list_jobs()
    assert first.state is JobState.SUCCEEDED
    entry = index.read_index(backend.jobs_dir)["old"]
    assert entry["job"]["state"] == "Succeeded" and "master-0" in entry["replicas"]


async def test_a_finished_job_is_serialised_once_for_the_list(backend: LocalBackend) -> None:
    await backend.submit(make_spec(name="done", command=python("pass")))
    await backend.wait("done", timeout=60)
    await backend.submit(make_spec(name="busy", command=python("import time; time.sleep(60)")))
    first = {j.name: j.list_json() for j in await backend.list_jobs()}
    again = {j.name: j for j in await backend.list_jobs()}
    assert json.loads(first["done"]) == json.loads(json.dumps(again["done"].to_wire()))
    assert again["done"].list_json() is first["done"]  # made once
    assert again["busy"].finished is None
    assert again["busy"].list_json() is not first["busy"]  # its duration grows


async def test_a_log_deleted_while_it_is_read_ends_the_read(tmp_path: Path) -> None:
    """cleanPodPolicy All (or a deadline, a suspend) deletes a node's log as a pod's log
    goes with the pod: a reader in the middle of it gets what it read, not an error."""
    from jupyter_pytorchjob.backends.local.backend import BLOCK, read_block
    from jupyter_pytorchjob.backends.local.store import timestamp

    log = tmp_path / "worker-0.log"
    line = timestamp().encode() + b" step\n"  # as the log pump writes them
    log.write_bytes(line * (3 * BLOCK // len(line)))
    block, offset, more = read_block(log, 0)
    assert block.startswith(line) and block.endswith(b"\n") and more
    log.unlink()
    assert read_block(log, offset) == (b"", offset, False)


async def test_a_jobs_events_are_read_boundedly(backend: LocalBackend) -> None:
    """A job restarting for days appends events for days: GET events answers with the
    newest MAX_EVENTS, read from the file's end; an events file that is no regular file
    answers none instead of hanging."""
    from jupyter_pytorchjob.backends.local.backend import MAX_EVENTS

    await backend.submit(make_spec(name="chatty", command=["python", "-c", "pass"]))
    assert (await backend.wait("chatty", timeout=60)).state is JobState.SUCCEEDED
    jobdir = JobDir(backend.jobs_dir / "chatty")
    for i in range(3 * MAX_EVENTS):
        jobdir.add_event("Warning", "BackOff", f"restart {i}", "master-0")
    events = await backend.events("chatty")
    assert len(events) == MAX_EVENTS
    assert events[-1].message == f"restart {3 * MAX_EVENTS - 1}"
    assert events[0].message == f"restart {2 * MAX_EVENTS}"
    jobdir.events.unlink()
    os.mkfifo(jobdir.events)
    assert await asyncio.wait_for(backend.events("chatty"), 10) == []


# -- a job that can never complete --------------------------------------------------------

# The master fails once after the worker has succeeded (OnFailure restarts it), then waits
# for a peer that has exited: as a restarted rank blocks in init_process_group.
MASTER_FAILS_LATE = """
import os, pathlib, sys, time
here = pathlib.Path(sys.argv[1])
if os.environ["RANK"] != "0":
    (here / "worker-done").touch()
    sys.exit(0)
if (here / "master-ran").exists():
    time.sleep(600)  # the rendezvous nobody comes to
(here / "master-ran").touch()
while not (here / "worker-done").exists():
    time.sleep(0.05)
time.sleep(0.5)  # the worker has exited
sys.exit(1)
"""


async def with_a_message(local: LocalBackend, name: str) -> JobInfo:
    """The job as soon as it has a message (an AssertionError with the job after 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        job = await local.get_job(name)
        if job.message is not None:
            return job
        assert time.monotonic() < deadline, f"no message: {job}"
        await asyncio.sleep(0.1)


def impatient(tmp_path: Path) -> LocalBackend:
    """A backend whose nodes restart after 0.2 s and say they are alone after 1 s."""
    return LocalBackend(
        root=tmp_path / "home",
        volume_root=tmp_path / "volumes",
        crash_back_off=0.2,
        alone_grace=1.0,
    )


STRANDED = (
    "master-0 restarted and waits for its peers, which have all exited "
    "(worker-0 Succeeded): the job cannot complete; delete it"
)


async def test_a_rank_restarted_after_its_peers_exited_says_the_job_cannot_complete(
    tmp_path: Path,
) -> None:
    local = impatient(tmp_path)
    spec = make_spec(
        name="stranded", nodes=2, command=["python", "-c", MASTER_FAILS_LATE, str(tmp_path)]
    )
    try:
        await local.submit(spec)
        job = await with_a_message(local, "stranded")
        assert job.state is JobState.RUNNING
        assert str(job.message) == STRANDED
        assert job.waiting is not None and job.waiting.reason == "WaitingForPeers"
        assert job.waiting.message == job.message and "delete the job" in str(job.waiting.hint)
        assert isinstance(job.message, Message) and job.message.code == "waiting_for_peers_one"
        events = await local.events("stranded")
        said = next(e.time for e in events if e.reason == "WaitingForPeers")
        restarted = [e.time for e in events if e.message.startswith("Started master-0")][1]
        assert said >= restarted + 1.0  # once it has waited alone_grace seconds
        listed = next(j for j in await local.list_jobs() if j.name == "stranded")
        assert listed.message == job.message
    finally:
        await local.delete_job("stranded")


# The master fails while the worker still runs and is restarted at once; the worker then
# succeeds and the master's new run waits for a peer that will never join: what
# test_two_jobs_at_once once saw (master-0 restarted after a failed bind, worker-0 gone).
MASTER_RESTARTED_BEFORE_THE_WORKER_ENDS = """
import os, pathlib, sys, time
here = pathlib.Path(sys.argv[1])
if os.environ["RANK"] != "0":
    while not (here / "master-again").exists():
        time.sleep(0.05)
    (here / "worker-done").touch()
    sys.exit(0)
if (here / "master-ran").exists():
    (here / "master-again").touch()
    time.sleep(600)  # the rendezvous nobody comes to
(here / "master-ran").touch()
sys.exit(1)
"""


async def test_a_rank_restarted_before_its_peers_exited_says_so_once_they_have(
    tmp_path: Path,
) -> None:
    local = impatient(tmp_path)
    command = ["python", "-c", MASTER_RESTARTED_BEFORE_THE_WORKER_ENDS, str(tmp_path)]
    try:
        await local.submit(make_spec(name="stranded", nodes=2, command=command))
        job = await with_a_message(local, "stranded")
        assert job.state is JobState.RUNNING
        assert [(r.name, r.phase, r.restarts) for r in job.replicas] == [
            ("master-0", "Running", 1),
            ("worker-0", "Succeeded", 0),
        ]
        assert str(job.message) == STRANDED
        events = await local.events("stranded")
        said = next(e.time for e in events if e.reason == "WaitingForPeers")
        assert job.waiting is not None and job.waiting.message == job.message
        # Once it has waited alone_grace seconds from the worker's end, not from its start.
        assert said >= (tmp_path / "worker-done").stat().st_mtime + 1.0
    finally:
        await local.delete_job("stranded")
