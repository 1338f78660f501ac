"""The per-job supervisor: a detached process that runs a local job's nodes.

Started by ``LocalBackend.submit`` as ``python -m jupyter_pytorchjob.backends.local.supervisor
<jobdir>``, it daemonises (new session, double fork) so the job outlives the
JupyterLab server, kernel or terminal that submitted it. It controls the processes and
consults the controller of the job's kind (``JobKind.controller``, ``controllers``):
``OperatorController`` (the Training Operator v1.9.4's rules for a PyTorchJob) or
``JobSetController`` (Kubeflow Trainer v2.3's and JobSet's for a TrainJob) on what the
job's conditions say, when it has failed, which node is created again and what happens
to the nodes once it is over. What the kubelet does it does itself, per replica type's
restartPolicy:

* OnFailure restarts a failed node in place and Always any node that ends, even with
  exit 0 (so under Always the Master never succeeds): as the kubelet does
  (``kubelet.CrashLoopBackOff``), the first time at once, then after a back-off of
  10 s doubling to 5 min, during which the node shows CrashLoopBackOff, starting over
  once a run lasted 10 min; the job stays Running, the run's log becomes the previous
  log;
* a node the controller creates again (ExitCode) is a new "pod": restarts 0, its logs
  gone;
* a stopped node's "pod" is deleted: SIGTERM, SIGKILL after a grace period;
* ttlSecondsAfterFinished counts from completion, then stops whatever still runs and
  removes the job;
* the job's spec (``manifest.json``, rewritten by the backend's suspend/resume and read
  again whenever it changes) asking for a suspend stops every node (their logs go);
  clearing it starts them again with a new start time.

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

from ...job.failure import (
    ALONE_GRACE,
    JobFailure,
    NodeRun,
    failure_hint,
    failure_message,
    failure_tail,
    signal_name,
    waiting_for_peers,
)
from ...job.messages import coded_wire, msg
from ...job.progress import chief_replica
from ...kinds import kind_named
from ...kinds.manifests import LOGDIR_ENV
from ...kinds.pytorchjob import PYTORCHJOB
from ...processes import ProcessIdentity, become_subreaper, die_with_parent, load_prctl
from ..base import JobState
from . import index, watchdog
from .controller import Controller, job_settled
from .controllers import CONTROLLERS, FAILURE_KEY, MESSAGE_KEY, WAITING_KEY
from .kubelet import CRASH_BACK_OFF, CrashLoopBackOff
from .logpump import pump
from .plan import plans_from_wire
from .progress import PROGRESS_KEY, ProgressTracker
from .progress_loop import ProgressLoop
from .reaping import stop_strays
from .replica import Replica, exit_code, settle
from .store import JobDir, read_json, read_log_tail, write_json

POLL = 0.1
STOP_GRACE = 5.0
STRAYS_EVERY = 10  # polls between looks for what finished nodes left behind
PROGRESS_EVERY = 5  # polls between reads of the job's progress (log, event files)
SAVE_PATIENCE = 600.0  # seconds a finished job waits for room to record its end
FAILURE_SCAN_LINES = 400  # of the failing run's log, searched for its traceback


@dataclass
class Supervisor:
    jobdir: JobDir
    replicas: dict[str, Replica] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)  # the manifest's spec, as last read
    stopping: bool = False
    suspended: bool = False
    unsaved: bool = False  # the last ``save`` failed
    # Pids (= process groups) of the nodes that have finished; see ``stop_strays``.
    ended_nodes: set[int] = field(default_factory=set)
    _spec_key: tuple[int, int, int] | None = None
    # An ExitCode replica whose "pod" is to be created again (``recreate_pending``).
    recreate: Replica | None = None
    # The node that failed first since the job (re)started: the failure summary's, not
    # the ones that failed after it (a peer's lost connection) or were stopped.
    first_failed: str | None = None

    def __post_init__(self) -> None:
        self.job = read_json(self.jobdir.job, {})
        # The controller of the job's kind (jobs from before TrainJobs ran locally are
        # PyTorchJobs).
        kind = kind_named(self.job.get("kind") or PYTORCHJOB.kind)
        self.controller: Controller = CONTROLLERS[kind.controller](self)
        self.read_spec()
        for plan in plans_from_wire(read_json(self.jobdir.plan)):
            replica = Replica(plan)
            replica.policy = self.controller.restart_policy(replica.rtype)
            self.replicas[plan.replica] = replica
        self.back_off = CrashLoopBackOff(float(self.job.get("crash_back_off", CRASH_BACK_OFF)))
        # Progress comes from the master's log, else rank 0's (worker-0).
        chief = chief_replica(self.replicas)
        logdir = self.replicas[chief].plan.env.get(LOGDIR_ENV) if chief else None
        tracker = ProgressTracker(self.jobdir, chief, logdir)
        self.progress = ProgressLoop(self.jobdir, tracker, self.publish_progress)

    @property
    def name(self) -> str:
        return self.jobdir.name

    @property
    def state(self) -> JobState:
        return self.controller.state

    def pod_name(self, replica: Replica) -> str:
        """The name the replica's pod would have (its hostname, as the plan gives it)."""
        return replica.plan.env.get("HOSTNAME") or f"{self.name}-{replica.plan.replica}"

    def read_spec(self) -> bool:
        """Read the job's spec (``manifest.json``) again if it changed (the backend
        rewrites it to suspend or resume); whether it did."""
        try:
            stat = self.jobdir.manifest.stat()
        except OSError:
            return False
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if key == self._spec_key:
            return False
        try:
            manifest = read_json(self.jobdir.manifest)
        except (OSError, ValueError):
            return False  # caught mid-write by another writer: the next poll reads it
        self._spec_key = key
        self.spec = manifest.get("spec") or {}
        return True

    # -- state --------------------------------------------------------------------

    def replicas_wire(self) -> dict[str, Any]:
        """``replicas.json``'s contents."""
        return {n: r.to_wire() for n, r in self.replicas.items()}

    def save(self) -> bool:
        """Write the state; False if it could not be (a full disk): the state in memory
        stays the truth and ``run`` writes it again until it succeeds."""
        self.controller.record_state()
        try:
            write_json(self.jobdir.replicas, self.replicas_wire())
            write_json(self.jobdir.job, self.job)
        except OSError as err:
            print(f"cannot save the job's state: {err}", file=sys.stderr, flush=True)
            self.unsaved = True
            return False
        self.unsaved = False
        return True

    def summarise_failure(self, reason: str, message: str) -> None:
        """The job failed: keep why in ``job.json`` (``failure``) while the evidence is
        here, before a clean-up or a deadline removes the logs (``failure_summary``)."""
        if FAILURE_KEY not in self.job:
            reason = self.controller.failure_reason(reason, message)
            summary = failure_summary(
                self.jobdir, self.replicas, self.first_failed, reason, message
            )
            self.job[FAILURE_KEY] = summary.to_wire()

    # -- nodes ----------------------------------------------------------------------

    async def launch(self, replica: Replica) -> None:
        plan = replica.plan
        log = self.jobdir.log(plan.replica)
        try:
            process = await asyncio.create_subprocess_exec(
                *plan.argv,
                cwd=plan.cwd,
                env={**plan.env, **self.progress.env},
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
        replica.back_off_until = None
        replica.exit_code = replica.reason = replica.message = None
        assert process.stdout is not None
        replica.pump = asyncio.create_task(pump(process.stdout, log))
        self.jobdir.add_event(
            "Normal",
            "SuccessfulCreatePod",
            f"Started {plan.replica} (pid {process.pid})",
            self.name,
        )

    def start_failed(self, replica: Replica, err: Exception) -> None:
        """A node that cannot even start (as a container runtime's StartError, exit code
        128) fails the job: every restart would fail the same way."""
        name = replica.plan.replica
        self.first_failed = self.first_failed or name
        replica.process = replica.identity = None
        replica.phase = "Failed"
        replica.exit_code = 128
        replica.reason = "StartError"
        replica.message = msg("replica_cannot_start", replica=name, error=str(err))
        self.jobdir.add_event("Warning", "Failed", f"Error: {replica.message}", name)
        kind = self.controller.kind_name
        self.controller.fail(f"{kind} {self.name} is failed because {name} could not start: {err}")

    def running_nodes(self) -> set[int]:
        """Pids of the nodes not yet reaped (each leads its own process group)."""
        return {r.process.pid for r in self.replicas.values() if r.alive and r.process}

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
        settle(replica, code)
        if code != 0 and self.first_failed is None:
            self.first_failed = replica.plan.replica
        if code != 0:
            self.jobdir.add_event(
                "Warning",
                "ExitedWithCode",
                f"{replica.plan.replica} exited with code {code}",
                replica.plan.replica,
            )

    def remove_logs(self, replica: Replica) -> None:
        """A deleted pod's logs go with it."""
        for previous in (False, True):
            self.jobdir.log(replica.plan.replica, previous=previous).unlink(missing_ok=True)

    async def on_exit(self, replica: Replica, code: int) -> None:
        """A node ended: the kubelet restarts it in place (OnFailure on a failure, Always
        on any exit), or its "pod" ends Succeeded/Failed; then the controller reconciles."""
        await self.finish_replica(replica, code)
        if self.state.finished or self.suspended:
            self.save()
            return
        if replica.policy == "Always" or (replica.policy == "OnFailure" and code != 0):
            self.crash_loop(replica, code)
            self.recreate = self.controller.reconcile()
            return
        failed = replica if replica.phase == "Failed" else None
        self.recreate = self.controller.reconcile(failed=failed)

    def crash_loop(self, replica: Replica, code: int) -> None:
        """Restarted in place, at once or after a back-off (``CrashLoopBackOff``): the
        run's log becomes the previous container's log."""
        container, pod = self.controller.container, self.pod_name(replica)
        delay = self.back_off.enter(replica, code, container, pod, time.time())
        log = self.jobdir.log(replica.plan.replica)
        if log.exists():
            log.replace(self.jobdir.log(replica.plan.replica, previous=True))
        if delay:
            self.jobdir.add_event(
                "Warning", "BackOff", "Back-off restarting failed container", replica.plan.replica
            )
        self.save()

    async def recreate_pending(self) -> None:
        """ExitCode, common/pod.go:350-366: the failed pod is deleted and created again:
        a new process, restarts 0, its logs gone."""
        replica, self.recreate = self.recreate, None
        if replica is None or self.state.finished or self.suspended:
            return
        self.remove_logs(replica)
        replica.restarts = 0
        replica.back_off = None  # a new pod: a new container, no back-off entry
        self.jobdir.add_event(
            "Normal",
            "SuccessfulDeletePod",
            f"Deleted pod: {self.name}-{replica.plan.replica}",
            self.name,
        )
        await self.launch(replica)
        if not self.state.finished:
            self.controller.update_status()

    async def stop_replica(
        self, replica: Replica, reason: str, *, phase: str = "Deleted", ended_too: bool = False
    ) -> None:
        """Stop the node as its pod is deleted (SIGTERM, SIGKILL after a grace period).
        A node that has ended (not in back-off) keeps its phase unless ``ended_too``; one
        whose end is not yet recorded ended by itself first: it is recorded, as its pod's
        phase would show it (cleanPodPolicy Running deletes only Running pods,
        common/job.go:41-69)."""
        process = replica.process
        if replica.end_unrecorded:
            assert process is not None and process.returncode is not None
            await self.finish_replica(replica, exit_code(process.returncode))
            self.save()
        if not ended_too and replica.phase not in ("Pending", "Running"):
            return
        replica.back_off_until = None
        if process is not None and process.returncode is None:
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
            replica.exit_code = exit_code(await process.wait())
        replica.phase = phase
        replica.reason = reason
        replica.message = None
        self.save()

    async def clean_pods(self) -> None:
        """The job is finished: its nodes as the controller's clean-up says."""
        cleanup = self.controller.pod_cleanup()
        for replica in self.replicas.values():
            last_exit = replica.exit_code if replica.back_off_until is not None else None
            if cleanup.settle_back_off and last_exit is not None:
                settle(replica, last_exit)  # never restarted now
            if cleanup.stop is not None:
                await self.stop_replica(replica, cleanup.stop, ended_too=cleanup.ended_too)
            if cleanup.remove_logs:
                self.remove_logs(replica)
        self.save()

    # -- suspend / resume (common/job.go:146-173) ------------------------------------------

    async def suspend(self) -> None:
        """Every pod deleted (its log with it), then the controller's conditions."""
        await self.delete_for_suspend()
        self.controller.on_suspended()
        self.save()

    async def delete_for_suspend(self) -> None:
        """Every node stopped as its pod is deleted: Pending again, restarts 0, logs gone."""
        self.suspended = True
        await asyncio.gather(
            *(
                self.stop_replica(r, "Suspended", phase="Pending", ended_too=True)
                for r in self.replicas.values()
            )
        )
        for replica in self.replicas.values():
            replica.restarts = 0
            replica.back_off = None
            replica.exit_code = None
            self.remove_logs(replica)

    async def resume(self) -> None:
        """The controller's conditions, the start time reset, every node started again."""
        self.suspended = False
        self.controller.on_resumed()
        await self.start_all()

    async def start_all(self) -> None:
        self.job["started"] = time.time()  # startTime, reset on resume
        self.first_failed = None
        for replica in self.replicas.values():
            await self.launch(replica)
        if not self.state.finished:  # a node that could not start failed the job
            self.controller.update_status()

    async def follow_spec(self) -> None:
        """React to ``runPolicy.suspend`` changing (ignored once finished, :122-144)."""
        if not self.read_spec() or self.state.finished:
            return
        wanted = self.controller.suspend_requested()
        if wanted and not self.suspended:
            await self.suspend()
        elif not wanted and self.suspended:
            await self.resume()

    # -- main loop --------------------------------------------------------------------

    async def run(self) -> None:
        """Run the job until it is settled (``job_settled``: finished, every node's end
        recorded), or its TTL expired (then the job directory is removed)."""
        self.job.update(watchdog.identities())
        self.save()
        self.progress.serve()
        if self.controller.suspend_requested():
            await self.suspend()
        else:
            await self.start_all()
        cleaned = False
        ticks = 0
        while not self.stopping:
            ticks += 1
            if ticks % STRAYS_EVERY == 0:
                self.stop_strays()
                if self.unsaved:
                    self.save()
            await self.follow_spec()
            await self.step()
            if ticks % PROGRESS_EVERY == 0:
                self.progress.poll()
            if self.state.finished and not cleaned:
                cleaned = True
                await self.clean_pods()
            if self.state.finished:
                ttl = self.controller.ttl_after_finished()
                if ttl is not None and time.time() >= self.job["finished"] + ttl:
                    await self.expire()
                    return
                # Not on the processes alone: one may have exited (reaped while another
                # node's end was being recorded) with its end not yet recorded.
                if ttl is None and job_settled(self.state, self.phases()):
                    break
            await asyncio.sleep(POLL)
        await self.progress.finish()
        await self.save_eventually()
        if job_settled(self.state, self.phases()) and not self.stopping and not self.unsaved:
            self.add_to_index()

    def phases(self) -> list[str]:
        return [r.phase for r in self.replicas.values()]

    def add_to_index(self) -> None:
        """The job is settled (finished, no node left, this the last write): listing
        reads it from the index from now on, not from its files."""
        entry = index.entry_for(self.jobdir.path, self.job, self.replicas_wire())
        with contextlib.suppress(OSError):  # no room: it is read from its files instead
            index.add(self.jobdir.path.parent, {self.name: entry})

    def publish_progress(self, wire: dict[str, Any] | None) -> None:
        """The job's progress changed: into ``job.json`` (from the event loop)."""
        self.job[PROGRESS_KEY] = wire
        self.save()

    async def step(self) -> None:
        """Nodes that ended (in the order they last wrote: the first to fail is the
        failure's, even if its peers ended within the same poll), back-offs that are
        over, the deadline."""
        ended = [replica for replica in self.replicas.values() if replica.end_unrecorded]
        for replica in sorted(ended, key=self.last_written):
            assert replica.process is not None and replica.process.returncode is not None
            await self.on_exit(replica, exit_code(replica.process.returncode))
            await self.recreate_pending()
        now = time.time()
        for replica in self.replicas.values():
            if self.back_off.over(replica, now) and not self.state.finished:
                await self.launch(replica)  # the kubelet starts the container again
                self.save()
        self.controller.check_deadline(now)
        self.check_alone(now)

    def check_alone(self, now: float) -> None:
        """Nodes restarted in place whose peers have all ended wait for ever, and the job
        stays Running, as the operator's does (``waiting_for_peers``): once they have
        been alone ``alone_grace`` seconds, the job's ``waiting`` and ``message`` say so,
        with a warning event (gone when it no longer holds)."""
        waiting = None
        if not self.state.finished and not self.suspended:
            grace = float(self.job.get("alone_grace", ALONE_GRACE))  # a test knob
            runs = [node_run(r) for r in self.replicas.values()]
            waiting = waiting_for_peers(runs, now, grace)
        wire = None if waiting is None else waiting.to_wire()
        if wire == self.job.get(WAITING_KEY):
            return
        message = coded_wire(MESSAGE_KEY, None if waiting is None else waiting.message)
        if waiting is None:
            self.job.pop(WAITING_KEY, None)
            for key in message:
                self.job.pop(key, None)
        else:
            self.job[WAITING_KEY] = wire
            self.job.update(message)  # its code too, for JupyterLab to translate
            self.jobdir.add_event("Warning", waiting.reason, str(waiting.message), self.name)
        self.save()

    def last_written(self, replica: Replica) -> float:
        """When the node's log last changed (0 without one)."""
        try:
            return self.jobdir.log(replica.plan.replica).stat().st_mtime
        except OSError:
            return 0.0

    async def expire(self) -> None:
        """ttlSecondsAfterFinished past completionTime (common/job.go:420-453): the job is
        deleted and what still runs of it goes with it."""
        await asyncio.gather(*(self.stop_replica(r, "Deleted") for r in self.replicas.values()))
        with contextlib.suppress(OSError):
            index.forget(self.jobdir.path.parent, self.name)
        shutil.rmtree(self.jobdir.path, ignore_errors=True)

    async def save_eventually(self) -> None:
        """The final state, written even if the disk is full for a while."""
        end = time.monotonic() + SAVE_PATIENCE
        while not self.save() and time.monotonic() < end:
            await asyncio.sleep(1.0)

    def fatal(self, err: BaseException) -> None:
        """The supervisor cannot go on: the job fails with the error as its message (the
        nodes die with the supervisor; its watchdog stops what they leave)."""
        if not self.state.finished:
            kind = self.controller.kind_name
            self.controller.fail(
                f"{kind} {self.name} is failed because its supervisor failed: "
                f"{type(err).__name__}: {err}"
            )

    async def stop(self) -> None:
        """SIGTERM: stop every node, then exit (the backend removes the job)."""
        self.stopping = True
        # All at once, as pods are deleted: one grace period, not one per node.
        await asyncio.gather(*(self.stop_replica(r, "Deleted") for r in self.replicas.values()))


def supervisor_for(jobdir: JobDir) -> Supervisor:
    """The supervisor of the job in ``jobdir``."""
    return Supervisor(jobdir)


def failure_summary(
    jobdir: JobDir,
    replicas: dict[str, Replica],
    first_failed: str | None,
    reason: str,
    message: str,
) -> JobFailure:
    """Why a job failed: the node that failed first, its last run's exit code and output
    (its previous log when it is in back-off or running again). Without one (a
    deadline, the supervisor's own error), the condition's reason (the platform's) and
    message, and the chief's last lines (the chief named as the replica to look at)."""
    replica = replicas.get(first_failed or "")
    if replica is None:
        chief = chief_replica(replicas)
        lines = read_log_tail(jobdir.log(chief), FAILURE_SCAN_LINES) if chief else []
        return JobFailure(
            replica=chief if chief and lines else "",
            reason=reason,
            message=message,
            tail=failure_tail(lines),
            log_source="current" if lines else None,
            hint=failure_hint(reason, None, lines),
        )
    name = replica.plan.replica
    previous = replica.back_off_until is not None or replica.alive
    lines = read_log_tail(jobdir.log(name, previous=previous), FAILURE_SCAN_LINES)
    code = replica.exit_code
    # The kubelet's terminated reason: Error for any exit but an OOM kill.
    run_reason = "StartError" if replica.reason == "StartError" else "Error"
    # Who else failed (after it): whom a collective's timeout waited for.
    others = [n for n, r in replicas.items() if n != name and r.exit_code]
    return JobFailure(
        replica=name,
        reason=run_reason,
        message=failure_message(lines) or str(replica.message or "") or message,
        exit_code=code,
        signal=signal_name(code),
        tail=failure_tail(lines),
        log_source=("previous" if previous else "current") if lines else None,
        hint=failure_hint(run_reason, code, lines, other_failed=", ".join(others) or None),
    )


def node_run(replica: Replica) -> NodeRun:
    """The node's runs as its pod would show them."""
    return NodeRun(
        name=replica.plan.replica,
        phase=replica.phase,
        running_since=replica.started if replica.alive else None,
        ended=replica.ended,
        restarted=replica.restarts > 0,
        restarting=replica.back_off_until is not None,
    )


async def amain(path: Path) -> None:
    supervisor = supervisor_for(JobDir(path))
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


def daemonize(log: Path) -> None:
    """Detach from whoever started us: new session, second fork, stdio to the log."""
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
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
    load_prctl()  # before any fork: the nodes' preexec_fn (die_with_parent) uses it
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
