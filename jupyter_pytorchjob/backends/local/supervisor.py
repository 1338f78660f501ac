"""The per-job supervisor: a detached process that runs a local job's nodes.

Started by ``LocalBackend.submit`` as ``python -m jupyter_pytorchjob.backends.local.supervisor
<jobdir>``, it daemonises (new session, double fork) so the job outlives the
JupyterLab server, kernel or terminal that submitted it. It follows the
Training Operator's rules (kubeflow/trainer v1.9.4):

* Created, then Running once the nodes are started;
* Succeeded when the master exits 0, whatever the workers do;
* a failed node fails the job with restartPolicy Never; OnFailure/Always restart
  it in place (the old log becomes the previous container's log) until the
  restarts reach backoffLimit; ExitCode restarts only exit codes 128-255;
* activeDeadlineSeconds counts from the start; cleanPodPolicy Running/All stops
  the nodes still running once the job is finished, None leaves them;
* ttlSecondsAfterFinished removes the job afterwards.

Each node runs in its own session and process group, so stopping it stops everything
it started (torchrun's workers included). SIGTERM stops every node and exits.

Processes are recorded with their start time (``ProcessIdentity``) and signalled only
while that very process lives. The supervisor runs under a watchdog (``watchdog``):
both are child subreapers, so whatever a node leaves behind is adopted by one of them,
never by init; it is stopped when its node ends (as a container's processes end with
its main process), and everything is stopped if the supervisor itself dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...processes import ProcessIdentity, become_subreaper, die_with_parent
from ..base import JobState
from . import watchdog
from .logpump import pump
from .plan import NodePlan, plans_from_wire
from .reaping import stop_strays
from .store import JobDir, read_json, write_json

POLL = 0.1
STOP_GRACE = 5.0
STRAYS_EVERY = 10  # polls between looks for what finished nodes left behind
SAVE_PATIENCE = 600.0  # seconds a finished job waits for room to record its end


@dataclass
class Replica:
    plan: NodePlan
    process: asyncio.subprocess.Process | None = None
    identity: ProcessIdentity | None = None
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
            "process": self.identity.to_wire() if self.identity else None,
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
    unsaved: bool = False  # the last ``save`` failed
    # Pids (= process groups) of the nodes that have finished; see ``stop_strays``.
    ended_nodes: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.job = read_json(self.jobdir.job, {})
        self.run_policy = self.job["run_policy"]
        for plan in plans_from_wire(read_json(self.jobdir.plan)):
            self.replicas[plan.replica] = Replica(plan)

    # -- state --------------------------------------------------------------------

    def save(self) -> bool:
        """Write the state; False if it could not be (a full disk): the state in memory
        stays the truth and ``run`` writes it again until it succeeds."""
        try:
            write_json(self.jobdir.replicas, {n: r.to_wire() for n, r in self.replicas.items()})
            write_json(self.jobdir.job, self.job)
        except OSError as err:
            print(f"cannot save the job's state: {err}", file=sys.stderr, flush=True)
            self.unsaved = True
            return False
        self.unsaved = False
        return True

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
        try:
            process = await asyncio.create_subprocess_exec(
                *plan.argv,
                cwd=plan.cwd,
                env=plan.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                # Killed the moment the supervisor dies: never unsupervised, never
                # writing into a pipe nobody reads.
                preexec_fn=functools.partial(die_with_parent, os.getpid()),
            )
        except (OSError, ValueError) as err:  # no such file, E2BIG, a NUL byte...
            self.start_failed(replica, err)
            return
        replica.process = process
        replica.identity = ProcessIdentity.of(process.pid)
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

    def start_failed(self, replica: Replica, err: Exception) -> None:
        """A node that cannot even start (as a container runtime's StartError, exit code
        128) fails the job: every restart would fail the same way."""
        name = replica.plan.replica
        replica.process = replica.identity = None
        replica.phase = "Failed"
        replica.exit_code = 128
        replica.reason = "StartError"
        replica.message = f"cannot start {name}: {err}"
        self.jobdir.add_event("Warning", "Failed", f"Error: {replica.message}", name)
        if not self.state.finished:
            self.condition(
                "Failed",
                "Failed",
                f"PyTorchJob {self.jobdir.name} is failed because {name} could not start: {err}",
            )

    def running_nodes(self) -> set[int]:
        """Pids of the nodes not yet reaped (each leads its own process group)."""
        return {
            r.process.pid
            for r in self.replicas.values()
            if r.process is not None and r.process.returncode is None
        }

    def stop_strays(self) -> None:
        stop_strays(self.running_nodes(), self.ended_nodes)

    async def drain(self, replica: Replica) -> None:
        """Wait for a finished node's output to end. What it left behind may hold its
        pipe open: that is stopped first, and again until the pipe closes."""
        if replica.process is not None:
            self.ended_nodes.add(replica.process.pid)
        while replica.pump is not None and not replica.pump.done():
            self.stop_strays()
            await asyncio.wait({replica.pump}, timeout=POLL)
        if replica.pump is not None:
            await replica.pump

    async def finish_replica(self, replica: Replica, code: int) -> None:
        await self.drain(replica)
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
            if not self.state.finished:
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
        identity = replica.identity
        if identity is not None:
            identity.send_group(signal.SIGTERM) or identity.send(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except asyncio.TimeoutError:
            if identity is not None:
                identity.send_group(signal.SIGKILL) or identity.send(signal.SIGKILL)
            await process.wait()
        await self.drain(replica)
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
        self.job.update(watchdog.identities())
        self.job["started"] = time.time()
        self.save()
        for replica in self.replicas.values():
            await self.launch(replica)
        if not self.state.finished:  # a node that could not start failed the job
            self.condition("Running", "Running", f"PyTorchJob {self.jobdir.name} is running.")
        deadline = self.run_policy.get("activeDeadlineSeconds")
        cleaned = False
        ticks = 0
        while not self.stopping:
            ticks += 1
            if ticks % STRAYS_EVERY == 0:
                self.stop_strays()
                if self.unsaved:
                    self.save()
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
        await self.save_eventually()

    async def save_eventually(self) -> None:
        """The final state, written even if the disk is full for a while."""
        end = time.monotonic() + SAVE_PATIENCE
        while not self.save() and time.monotonic() < end:
            await asyncio.sleep(1.0)

    def fatal(self, err: BaseException) -> None:
        """The supervisor cannot go on: the job fails with the error as its message (the
        nodes die with the supervisor; its watchdog stops what they leave)."""
        if not self.state.finished:
            self.condition(
                "Failed",
                "Failed",
                f"PyTorchJob {self.jobdir.name} is failed because its supervisor failed: "
                f"{type(err).__name__}: {err}",
            )

    async def stop(self) -> None:
        """SIGTERM: stop every node, then exit (the backend removes the job)."""
        self.stopping = True
        # All at once, as pods are deleted: one grace period, not one per node.
        await asyncio.gather(*(self.stop_replica(r, "Deleted") for r in self.replicas.values()))


def exit_code(returncode: int) -> int:
    """Shell-style exit code: a signal N becomes 128 + N, as in a container."""
    return 128 - returncode if returncode < 0 else returncode


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
    error = runner.exception()
    if error is not None:
        supervisor.fatal(error)
        raise error
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


def supervise(path: Path) -> int:
    """Run the job; the exit status: 1 after an error (its traceback on stderr)."""
    try:
        asyncio.run(amain(path))
    except Exception:
        traceback.print_exc()
        return 1
    return 0


def main(argv: list[str] | None = None) -> None:
    """Detach, then fork: the watchdog stays the parent, the supervisor is its child."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0])
    daemonize(JobDir(path).supervisor_log)
    become_subreaper()
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)  # a signal to one process group never takes both
        become_subreaper()
        code = supervise(path)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(watchdog.watch(JobDir(path), child))


if __name__ == "__main__":
    main()
