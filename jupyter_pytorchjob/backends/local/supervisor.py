"""The per-job supervisor: a detached process that runs a local job's nodes.

Started by ``LocalBackend.submit`` as ``python -m jupyter_pytorchjob.backends.local.supervisor
<jobdir>``, it daemonises (new session, double fork) so the job outlives the
JupyterLab server, kernel or terminal that submitted it. It follows the
Training Operator's rules (notes/operator.md sections 8-10):

* Created, then Running once the nodes are started;
* Succeeded when the master exits 0, whatever the workers do;
* a failed node fails the job with restartPolicy Never; OnFailure/Always restart
  it in place (the old log becomes the previous container's log) until the
  restarts reach backoffLimit; ExitCode restarts only exit codes 128-255;
* activeDeadlineSeconds counts from the start; cleanPodPolicy Running/All stops
  the nodes still running once the job is finished, None leaves them;
* ttlSecondsAfterFinished removes the job afterwards.

Each node runs in its own process group, so stopping it stops everything it
started (torchrun's workers included). SIGTERM stops every node and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import JobState
from .plan import NodePlan, plans_from_wire
from .store import JobDir, read_json, timestamp, write_json

POLL = 0.1
STOP_GRACE = 5.0


@dataclass
class Replica:
    plan: NodePlan
    process: asyncio.subprocess.Process | None = None
    pump: asyncio.Task[None] | None = None
    phase: str = "Pending"
    restarts: int = 0
    exit_code: int | None = None
    reason: str | None = None
    message: str | None = None
    started: float | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "pid": self.process.pid if self.process else None,
            "restarts": self.restarts,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "message": self.message,
            "started": self.started,
        }


@dataclass
class Supervisor:
    jobdir: JobDir
    replicas: dict[str, Replica] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    stopping: bool = False

    def __post_init__(self) -> None:
        self.job = read_json(self.jobdir.job, {})
        self.run_policy = self.job["run_policy"]
        for plan in plans_from_wire(read_json(self.jobdir.plan)):
            self.replicas[plan.replica] = Replica(plan)

    # -- state --------------------------------------------------------------------

    def save(self) -> None:
        write_json(self.jobdir.replicas, {n: r.to_wire() for n, r in self.replicas.items()})
        write_json(self.jobdir.job, self.job)

    def condition(self, type_: str, reason: str, message: str) -> None:
        """Append a condition as the operator does: the newest last, Running and
        Restarting replacing each other, Running False once finished."""
        now = time.time()
        conditions = self.job.setdefault("conditions", [])
        for c in conditions:
            if c["type"] in ("Running", "Restarting") and type_ in (
                "Running",
                "Restarting",
                "Succeeded",
                "Failed",
            ):
                c["status"] = "False"
        conditions[:] = [c for c in conditions if c["type"] != type_]
        conditions.append(
            {
                "type": type_,
                "status": "True",
                "reason": f"PyTorchJob{reason}",
                "message": message,
                "last_transition": now,
            }
        )
        self.job["state"] = type_
        if type_ in ("Succeeded", "Failed"):
            self.job["finished"] = now
        self.save()

    @property
    def state(self) -> JobState:
        return JobState(self.job.get("state", "Created"))

    # -- nodes ----------------------------------------------------------------------

    async def launch(self, replica: Replica) -> None:
        plan = replica.plan
        log = self.jobdir.log(plan.replica)
        process = await asyncio.create_subprocess_exec(
            *plan.argv,
            cwd=plan.cwd,
            env=plan.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        replica.process = process
        replica.phase = "Running"
        replica.started = time.time()
        replica.exit_code = replica.reason = replica.message = None
        assert process.stdout is not None
        replica.pump = asyncio.create_task(pump(process.stdout, log))
        self.jobdir.add_event(
            "Normal",
            "SuccessfulCreatePod",
            f"Started {plan.replica} (pid {process.pid})",
            self.jobdir.name,
        )

    async def finish_replica(self, replica: Replica, code: int) -> None:
        if replica.pump is not None:
            await replica.pump
        replica.exit_code = code
        replica.phase = "Succeeded" if code == 0 else "Failed"
        if code != 0:
            replica.reason = "Error" if code < 128 else f"Signal{code - 128}"
            replica.message = f"exited with code {code}"
            self.jobdir.add_event(
                "Warning",
                "ExitedWithCode",
                f"{replica.plan.replica} exited with code {code}",
                replica.plan.replica,
            )

    def restartable(self, code: int) -> bool:
        policy = self.job["restart_policy"]
        if policy in ("OnFailure", "Always"):
            return True
        return policy == "ExitCode" and code >= 128

    async def on_exit(self, replica: Replica, code: int) -> None:
        await self.finish_replica(replica, code)
        name = self.jobdir.name
        if self.state.finished:
            self.save()
            return
        if replica.plan.replica == "master-0" and code == 0:
            self.condition(
                "Succeeded", "Succeeded", f"PyTorchJob {name} is successfully completed."
            )
            return
        if code == 0:
            self.save()
            return
        limit = self.run_policy.get("backoffLimit")
        total = sum(r.restarts for r in self.replicas.values())
        if self.restartable(code) and (limit is None or total < limit):
            self.condition(
                "Restarting",
                "Restarting",
                f"PyTorchJob {name} is restarting because 1 {replica.plan.replica} "
                "replica(s) failed.",
            )
            replica.restarts += 1
            log = self.jobdir.log(replica.plan.replica)
            if log.exists():
                log.replace(self.jobdir.log(replica.plan.replica, previous=True))
            await self.launch(replica)
            self.condition("Running", "Running", f"PyTorchJob {name} is running.")
            return
        if self.restartable(code):
            message = f"Job {name} has failed because it has reached the specified backoff limit"
        else:
            message = (
                f"PyTorchJob {name} is failed because 1 {replica.plan.replica} replica(s) failed."
            )
        self.condition("Failed", "Failed", message)

    async def stop_replica(self, replica: Replica, reason: str) -> None:
        process = replica.process
        if process is None or process.returncode is not None:
            return
        kill_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except asyncio.TimeoutError:
            kill_group(process.pid, signal.SIGKILL)
            await process.wait()
        kill_group(process.pid, signal.SIGKILL)  # anything the node left in its group
        if replica.pump is not None:
            await replica.pump
        replica.phase = "Deleted"
        replica.exit_code = exit_code(await process.wait())
        replica.reason = reason
        self.save()

    async def clean_pods(self) -> None:
        if self.run_policy.get("cleanPodPolicy", "None") in ("Running", "All"):
            for replica in self.replicas.values():
                await self.stop_replica(replica, "CleanPodPolicy")

    # -- main loop --------------------------------------------------------------------

    async def run(self) -> None:
        self.job["supervisor_pid"] = os.getpid()
        self.job["started"] = time.time()
        self.save()
        for replica in self.replicas.values():
            await self.launch(replica)
        self.condition("Running", "Running", f"PyTorchJob {self.jobdir.name} is running.")
        deadline = self.run_policy.get("activeDeadlineSeconds")
        cleaned = False
        while not self.stopping:
            for replica in self.replicas.values():
                process = replica.process
                if (
                    process is not None
                    and process.returncode is not None
                    and replica.phase == "Running"
                ):
                    await self.on_exit(replica, exit_code(process.returncode))
            if (
                deadline is not None
                and not self.state.finished
                and time.time() - self.job["started"] >= deadline
            ):
                self.condition(
                    "Failed",
                    "Failed",
                    f"Job {self.jobdir.name} has failed because it was active longer than "
                    "specified deadline",
                )
                for replica in self.replicas.values():
                    await self.stop_replica(replica, "DeadlineExceeded")
            if self.state.finished and not cleaned:
                cleaned = True
                await self.clean_pods()
            if self.state.finished and all(
                r.process is None or r.process.returncode is not None
                for r in self.replicas.values()
            ):
                break
            await asyncio.sleep(POLL)
        self.save()

    async def stop(self) -> None:
        """SIGTERM: stop every node, then exit (the backend removes the job)."""
        self.stopping = True
        for replica in self.replicas.values():
            await self.stop_replica(replica, "Deleted")


async def pump(stream: asyncio.StreamReader, log: Path) -> None:
    """Copy a node's output to its log, each line prefixed with a timestamp.

    Read in chunks, never an await per line; a partial last line is kept until
    its newline arrives (or the stream ends)."""
    pending = b""
    with log.open("ab") as out:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            data = pending + chunk
            cut = data.rfind(b"\n") + 1
            pending = data[cut:]
            if cut:
                stamp = timestamp().encode() + b" "
                lines = data[:cut].split(b"\n")[:-1]
                out.write(b"".join(stamp + line + b"\n" for line in lines))
                out.flush()
        if pending:
            out.write(timestamp().encode() + b" " + pending + b"\n")


def exit_code(returncode: int) -> int:
    """Shell-style exit code: a signal N becomes 128 + N, as in a container."""
    return 128 - returncode if returncode < 0 else returncode


def kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def amain(path: Path) -> None:
    supervisor = Supervisor(JobDir(path))
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()

    stopping: set[asyncio.Task[None]] = set()

    def on_term() -> None:
        async def stop() -> None:
            await supervisor.stop()
            stopped.set()

        stopping.add(asyncio.ensure_future(stop()))

    loop.add_signal_handler(signal.SIGTERM, on_term)
    loop.add_signal_handler(signal.SIGINT, on_term)
    runner = asyncio.create_task(supervisor.run())
    waiter = asyncio.create_task(stopped.wait())
    await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if waiter.done():
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        return
    ttl = supervisor.run_policy.get("ttlSecondsAfterFinished")
    if ttl is not None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stopped.wait(), ttl)
        if not stopped.is_set():
            shutil.rmtree(path, ignore_errors=True)


def daemonize(log: Path) -> None:
    """Detach from whoever started us: new session, second fork, stdio to the log."""
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0])
    daemonize(JobDir(path).supervisor_log)
    asyncio.run(amain(path))


if __name__ == "__main__":
    main()
