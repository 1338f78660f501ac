"""The per-job supervisor: a detached process that runs a local job's nodes.

Started by ``LocalBackend.submit`` as ``python -m jupyter_pytorchjob.backends.local.supervisor
<jobdir>``, it daemonises (new session, double fork) so the job outlives the
JupyterLab server, kernel or terminal that submitted it. It plays the controller of the
job's kind (``JobKind.controller``): a TrainJob's is ``JobSetSupervisor`` (Trainer v2.3,
JobSet, the Job controller); a PyTorchJob's follows the Training Operator v1.9.4
(kubeflow/trainer) and the kubelet under it, each replica type by its own restartPolicy:

* Created, then Running once the Master runs (without a Master: once a Worker runs);
  Succeeded when the Master exits 0 (without a Master: when every Worker has, or one
  with ``elasticPolicy``);
* OnFailure restarts a failed node in place and Always any node that ends, even with
  exit 0 (so under Always the Master never succeeds): as the kubelet does, the first
  time at once, then after a back-off of 10 s doubling to 5 min, during which the node
  shows CrashLoopBackOff, starting over once a run lasted 10 min; the job stays
  Running (no Restarting condition), the run's log becomes the previous log, and the
  job fails as soon as the restarts of the running nodes reach backoffLimit;
* ExitCode recreates a node that exits with 128-255 (a new "pod": restarts 0, its
  logs gone, unlimited unless backoffLimit is 0) and fails the job on 1-127; Never
  fails the job at once; with backoffLimit 0 any failure gives the backoff message;
* the conditions list is shaped as util/status.go's setCondition does it, with the
  operator's texts word for word;
* activeDeadlineSeconds counts from the (last) start; once the job is finished
  cleanPodPolicy applies (None: nodes keep running but are not restarted; Running:
  running ones stop; All: every one stops and its logs go, as a pod's do);
* ttlSecondsAfterFinished counts from completion, then stops whatever still runs and
  removes the job;
* ``runPolicy.suspend`` in the job's spec (``manifest.json``, rewritten by the
  backend's suspend/resume and read again whenever it changes) stops every node (their
  logs go) and sets Suspended; clearing it starts them again with a new start time.

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

from ...job.failure import JobFailure, failure_hint, failure_message, failure_tail, signal_name
from ...job.progress import chief_replica
from ...kinds import kind_named
from ...kinds.manifests import LOGDIR_ENV
from ...kinds.pytorchjob import PYTORCHJOB
from ...kinds.pytorchjob.status import state_of
from ...kinds.trainjob import TRAINJOB
from ...kinds.trainjob import status as trainjob
from ...kinds.trainjob.environment import BACKOFF_LIMIT
from ...processes import ProcessIdentity, become_subreaper, die_with_parent
from ..base import JobState
from . import index, watchdog
from .controllers import CRASH_BACK_OFF, FAILURE_KEY, MESSAGE_KEY, JobSetRules, OperatorRules
from .logpump import pump
from .plan import NodePlan, plans_from_wire
from .progress import PROGRESS_KEY, ProgressTracker
from .reaping import stop_strays
from .reports import ReportServer
from .store import JobDir, read_json, read_log_tail, write_json

POLL = 0.1
STOP_GRACE = 5.0
STRAYS_EVERY = 10  # polls between looks for what finished nodes left behind
PROGRESS_EVERY = 5  # polls between reads of the job's progress (log, event files)
SAVE_PATIENCE = 600.0  # seconds a finished job waits for room to record its end
FAILURE_SCAN_LINES = 400  # of the failing run's log, searched for its traceback
# Seconds nodes restarted after all their peers exited wait before the job says it cannot
# complete (``check_alone``; job.json's ``alone_grace``, a test knob, overrides it).
ALONE_GRACE = 60.0

# The longest wait before a restart in place is 30 times the first (CRASH_BACK_OFF).
CRASH_BACK_OFF_GROWTH = 30
CONTAINER = "pytorch"
# Local jobs have no namespace; the operator's texts for Worker-only jobs name one.
NAMESPACE = "default"

# The operator's condition texts, word for word (paths under kubeflow/trainer pkg/).
RUNNING = "PyTorchJob {name} is running."  # pytorchjob_controller.go:385-387
SUCCEEDED = "PyTorchJob {name} is successfully completed."  # :391-398
RUNNING_WORKERS = "PyTorchJob {ns}/{name} is running."  # :410-423 (no Master)
SUCCEEDED_WORKERS = "PyTorchJob {ns}/{name} successfully completed."
RESTARTING = "PyTorchJob {name} is restarting because {count} {rtype} replica(s) failed."  # :430
FAILED = "PyTorchJob {name} is failed because {count} {rtype} replica(s) failed."  # :435
RECREATING = "job {name} is restarting because {rtype} replica(s) failed."  # common/pod.go:362
FAILING = 'job "{name}" is failing because "{rtype}" replica(s) failed.'  # common/pod.go:369
# In job.json: the operator failed the job without a completionTime (the FAILING path).
NO_COMPLETION_TIME = "no_completion_time"
NO_TTL = (
    "ttlSecondsAfterFinished is not applied: the operator fails an ExitCode job for a "
    "permanent exit code without a completion time, and counts the TTL from that (the "
    "job stays until deleted)"
)
BACKOFF = "Job {name} has failed because it has reached the specified backoff limit"
DEADLINE = "Job {name} has failed because it was active longer than specified deadline"
SUSPENDED = "PyTorchJob {name} is suspended."  # common/job.go:146-166
RESUMED = "PyTorchJob {name} is resumed."  # common/job.go:167-173


@dataclass
class Replica:
    plan: NodePlan
    policy: str = "OnFailure"  # its replica type's restartPolicy
    process: asyncio.subprocess.Process | None = None
    identity: ProcessIdentity | None = None
    pump: asyncio.Task[None] | None = None
    phase: str = "Pending"
    restarts: int = 0
    exit_code: int | None = None
    reason: str | None = None
    message: str | None = None
    started: float | None = None
    ended: float | None = None  # when its last run ended
    # In CrashLoopBackOff: when the kubelet would start the container again.
    back_off_until: float | None = None
    # The kubelet's back-off entry for the container (flowcontrol.Backoff): the wait
    # before the next restart (None: no entry, the next crash restarts at once) and when
    # it was last moved on (the restart).
    back_off: float | None = None
    back_off_updated: float = 0.0

    @property
    def rtype(self) -> str:
        return "Master" if self.plan.replica.startswith("master-") else "Worker"

    @property
    def alive(self) -> bool:
        """Its process is not yet reaped."""
        return self.process is not None and self.process.returncode is None

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
class Supervisor(OperatorRules):
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
    # The job's progress (progress.py) and its status endpoint (reports.py).
    tracker: ProgressTracker | None = None
    reports: ReportServer | None = None
    _progress_poll: asyncio.Task[None] | None = None
    # The node that failed first since the job (re)started: the failure summary's, not
    # the ones that failed after it (a peer's lost connection) or were stopped.
    first_failed: str | None = None

    def __post_init__(self) -> None:
        self.job = read_json(self.jobdir.job, {})
        self.read_spec()
        policies = {
            rtype: rspec.get("restartPolicy") or "OnFailure"  # the operator's default
            for rtype, rspec in (self.spec.get("pytorchReplicaSpecs") or {}).items()
        }
        for plan in plans_from_wire(read_json(self.jobdir.plan)):
            replica = Replica(plan)
            replica.policy = policies.get(replica.rtype, "OnFailure")
            self.replicas[plan.replica] = replica
        self.back_off = float(self.job.get("crash_back_off", CRASH_BACK_OFF))
        # Progress comes from the master's log, else rank 0's (worker-0).
        chief = chief_replica(self.replicas)
        logdir = self.replicas[chief].plan.env.get(LOGDIR_ENV) if chief else None
        self.tracker = ProgressTracker(self.jobdir, chief, logdir)

    # The job's kind and its main container, as the texts name them.
    kind_name = "PyTorchJob"
    container = CONTAINER

    @property
    def name(self) -> str:
        return self.jobdir.name

    def pod_name(self, replica: Replica) -> str:
        """The name the replica's pod would have (its hostname, as the plan gives it)."""
        return replica.plan.env.get("HOSTNAME") or f"{self.name}-{replica.plan.replica}"

    @property
    def run_policy(self) -> dict[str, Any]:
        policy: dict[str, Any] = self.spec.get("runPolicy") or {}
        return policy

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
        try:
            write_json(self.jobdir.replicas, self.replicas_wire())
            write_json(self.jobdir.job, self.job)
        except OSError as err:
            print(f"cannot save the job's state: {err}", file=sys.stderr, flush=True)
            self.unsaved = True
            return False
        self.unsaved = False
        return True

    def set_condition(self, type_: str, status: str, reason: str, message: str) -> None:
        conditions = self.job.setdefault("conditions", [])
        now = time.time()
        if not set_condition(conditions, type_, status, reason, message, now):
            return
        self.job["state"] = state_of(conditions).value
        if status == "True" and type_ in ("Succeeded", "Failed"):
            self.job.setdefault("finished", now)  # completionTime
        if status == "True" and type_ == "Failed":
            self.summarise_failure(reason, message)
        self.save()

    def fail(self, message: str) -> None:
        self.set_condition("Failed", "True", "PyTorchJobFailed", message)

    def job_reason(self, reason: str, message: str) -> str:
        """The platform's reason for a failure no node made: the operator words a
        deadline in its message only (its reason is PyTorchJobFailed)."""
        return "DeadlineExceeded" if message == self.text(DEADLINE) else reason

    def summarise_failure(self, reason: str, message: str) -> None:
        """The job failed: keep why in ``job.json`` (``failure``) while the evidence is
        here, before cleanPodPolicy or a deadline removes the logs: the node that failed
        first, its last run's exit code and output (its previous log when it is in
        back-off or running again). Without one (a deadline, the supervisor's own
        error), the condition's reason and message, and the chief's last lines (the
        chief named as the replica to look at)."""
        if FAILURE_KEY in self.job:
            return
        replica = self.replicas.get(self.first_failed or "")
        if replica is None:
            chief = chief_replica(self.replicas)
            lines = read_log_tail(self.jobdir.log(chief), FAILURE_SCAN_LINES) if chief else []
            reason = self.job_reason(reason, message)
            failure = JobFailure(
                replica=chief if chief and lines else "",
                reason=reason,
                message=message,
                tail=failure_tail(lines),
                log_source="current" if lines else None,
                hint=failure_hint(reason, None, lines),
            )
        else:
            name = replica.plan.replica
            previous = replica.back_off_until is not None or replica.alive
            lines = read_log_tail(self.jobdir.log(name, previous=previous), FAILURE_SCAN_LINES)
            code = replica.exit_code
            # The kubelet's terminated reason: Error for any exit but an OOM kill.
            run_reason = "StartError" if replica.reason == "StartError" else "Error"
            # Who else failed (after it): whom a collective's timeout waited for.
            others = [n for n, r in self.replicas.items() if n != name and r.exit_code]
            failure = JobFailure(
                replica=name,
                reason=run_reason,
                message=failure_message(lines) or replica.message or message,
                exit_code=code,
                signal=signal_name(code),
                tail=failure_tail(lines),
                log_source=("previous" if previous else "current") if lines else None,
                hint=failure_hint(run_reason, code, lines, other_failed=", ".join(others) or None),
            )
        self.job[FAILURE_KEY] = failure.to_wire()

    def text(self, template: str, **values: Any) -> str:
        return template.format(name=self.name, ns=NAMESPACE, **values)

    @property
    def state(self) -> JobState:
        return state_of(self.job.get("conditions") or [])

    # -- nodes ----------------------------------------------------------------------

    async def launch(self, replica: Replica) -> None:
        plan = replica.plan
        log = self.jobdir.log(plan.replica)
        try:
            process = await asyncio.create_subprocess_exec(
                *plan.argv,
                cwd=plan.cwd,
                env={**plan.env, **(self.reports.env if self.reports else {})},
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
        replica.message = f"cannot start {name}: {err}"
        self.jobdir.add_event("Warning", "Failed", f"Error: {replica.message}", name)
        self.fail(f"{self.kind_name} {self.name} is failed because {name} could not start: {err}")

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
        on any exit), or its "pod" ends Succeeded/Failed; then the operator reconciles."""
        await self.finish_replica(replica, code)
        if self.state.finished or self.suspended:
            self.save()
            return
        if replica.policy == "Always" or (replica.policy == "OnFailure" and code != 0):
            self.crash_loop(replica, code)
            self.reconcile()
            return
        self.reconcile(failed=replica if replica.phase == "Failed" else None)

    def crash_loop(self, replica: Replica, code: int) -> None:
        """Restarted in place: the pod stays Running, restartCount + 1, the run's log
        becomes the previous container's log. When, as the kubelet decides it
        (``doBackOff``, pkg/kubelet/kuberuntime/kuberuntime_manager.go, over client-go
        util/flowcontrol/backoff.go, kubelet v1.20): a container without a back-off entry
        restarts at once and gets one of 10 s; with one it waits it out in
        CrashLoopBackOff and the entry doubles (at most 5 min); an entry not moved on for
        twice the longest wait (``hasExpired``: a run of 10 min) counts as none."""
        replica.restarts += 1
        now = time.time()
        longest = self.back_off * CRASH_BACK_OFF_GROWTH
        if replica.back_off is None or now - replica.back_off_updated > 2 * longest:
            delay, replica.back_off = 0.0, self.back_off
        else:
            delay = replica.back_off
            replica.back_off = min(2 * delay, longest)
        replica.back_off_updated = now + delay  # Backoff.Next runs at the restart
        replica.phase = "Running"
        replica.exit_code = code
        replica.back_off_until = now + delay
        log = self.jobdir.log(replica.plan.replica)
        if log.exists():
            log.replace(self.jobdir.log(replica.plan.replica, previous=True))
        if delay:
            replica.reason = "CrashLoopBackOff"
            replica.message = (
                f"back-off {go_duration(delay)} restarting failed container={self.container} "
                f"pod={self.pod_name(replica)}"
            )
            self.jobdir.add_event(
                "Warning", "BackOff", "Back-off restarting failed container", replica.plan.replica
            )
        self.save()

    def reconcile(self, failed: Replica | None = None) -> None:
        """One pass of ReconcileJobs (common/job.go:78-364) after ``failed`` ended in
        phase Failed (or a restart in place): the backoff limit first, then the ExitCode
        rule, then the job's conditions from its replicas."""
        limit = self.run_policy.get("backoffLimit")
        # exceedsBackoffLimit, job.go:192-204: a new failure only counts when the limit
        # is 0 (the work queue's retries are 0); else the restarts of running pods.
        if limit is not None and ((failed is not None and limit == 0) or self.past_limit(limit)):
            self.fail(self.text(BACKOFF))
            return
        if failed is not None and failed.policy == "ExitCode":
            exit_code = failed.exit_code if failed.exit_code is not None else 0
            if exit_code < 128:  # not retryable, util/train/train_util.go:24-26
                # common/pod.go:366-371 sets Failed but no completionTime, and CleanupJob
                # (common/job.go:428-430) then never applies the TTL: the job stays.
                self.job[NO_COMPLETION_TIME] = True
                self.fail(self.text(FAILING, rtype=failed.rtype))
                if self.run_policy.get("ttlSecondsAfterFinished") is not None:
                    self.jobdir.add_event("Warning", "TTLNotApplied", NO_TTL, self.name)
                return
            message = self.text(RECREATING, rtype=failed.rtype)
            self.jobdir.add_event("Warning", "PyTorchJobRestarting", message, self.name)
            self.set_condition("Restarting", "True", "PyTorchJobRestarting", message)
            self.recreate = failed
            return
        self.update_status()

    def past_limit(self, limit: int) -> bool:
        """PastBackoffLimit, core/job.go:95-133: restarts of the running pods of replica
        types whose policy is not Never."""
        restarts = sum(
            r.restarts
            for r in self.replicas.values()
            if r.policy != "Never" and r.phase == "Running"
        )
        return restarts > 0 if limit == 0 else restarts >= limit

    def update_status(self) -> None:
        """UpdateJobStatus, pytorchjob_controller.go:343-447, Master first."""
        by_type: dict[str, list[Replica]] = {}
        for replica in self.replicas.values():
            by_type.setdefault(replica.rtype, []).append(replica)
        has_master = "Master" in by_type
        elastic = self.spec.get("elasticPolicy") is not None
        for rtype in sorted(by_type, key=lambda t: t != "Master"):
            replicas = by_type[rtype]
            succeeded, running, failed = (
                sum(r.phase == phase for r in replicas)
                for phase in ("Succeeded", "Running", "Failed")
            )
            expected = len(replicas) - succeeded
            if has_master:
                if rtype == "Master":
                    if running > 0:
                        self.set_condition(
                            "Running", "True", "PyTorchJobRunning", self.text(RUNNING)
                        )
                    if expected == 0:
                        self.set_condition(
                            "Succeeded", "True", "PyTorchJobSucceeded", self.text(SUCCEEDED)
                        )
                        return
            elif expected == 0 or (elastic and succeeded > 0):
                self.set_condition(
                    "Succeeded", "True", "PyTorchJobSucceeded", self.text(SUCCEEDED_WORKERS)
                )
            elif running > 0:
                self.set_condition(
                    "Running", "True", "PyTorchJobRunning", self.text(RUNNING_WORKERS)
                )
            if failed > 0 and len(replicas) > succeeded + running:
                if replicas[0].policy != "Never":
                    message = self.text(RESTARTING, count=failed, rtype=rtype)
                    self.set_condition("Restarting", "True", "PyTorchJobRestarting", message)
                else:
                    self.fail(self.text(FAILED, count=failed, rtype=rtype))
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
            self.update_status()

    async def stop_replica(
        self, replica: Replica, reason: str, *, phase: str = "Deleted", ended_too: bool = False
    ) -> None:
        """Stop the node as its pod is deleted (SIGTERM, SIGKILL after a grace period).
        A node that has ended (not in back-off) keeps its phase unless ``ended_too``."""
        process = replica.process
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
        """cleanPodPolicy once the job is finished (common/job.go:41-69): None keeps every
        node; Running stops the running ones; All stops every one and its logs go."""
        policy = self.run_policy.get("cleanPodPolicy", "None")
        for replica in self.replicas.values():
            if policy == "None":
                if replica.back_off_until is not None and replica.exit_code is not None:
                    settle(replica, replica.exit_code)  # never restarted now
            elif policy == "Running":
                await self.stop_replica(replica, "CleanPodPolicy")
            elif policy == "All":
                await self.stop_replica(replica, "CleanPodPolicy", ended_too=True)
                self.remove_logs(replica)
        self.save()

    # -- suspend / resume (common/job.go:146-173) ------------------------------------------

    async def suspend(self) -> None:
        """Every pod deleted (its log with it), Running False, Suspended True."""
        await self.delete_for_suspend()
        conditions = self.job.get("conditions") or []
        if any(c["type"] == "Running" and c["status"] == "True" for c in conditions):
            self.set_condition("Running", "False", "PyTorchJobSuspended", self.text(SUSPENDED))
        self.set_condition("Suspended", "True", "PyTorchJobSuspended", self.text(SUSPENDED))
        self.jobdir.add_event("Normal", "PyTorchJobSuspended", self.text(SUSPENDED), self.name)
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
        """Suspended False, the start time reset, every node started again."""
        self.suspended = False
        self.set_condition("Suspended", "False", "PyTorchJobResumed", self.text(RESUMED))
        self.jobdir.add_event("Normal", "PyTorchJobResumed", self.text(RESUMED), self.name)
        await self.start_all()

    async def start_all(self) -> None:
        self.job["started"] = time.time()  # startTime, reset on resume
        self.first_failed = None
        for replica in self.replicas.values():
            await self.launch(replica)
        if not self.state.finished:  # a node that could not start failed the job
            self.update_status()

    async def follow_spec(self) -> None:
        """React to ``runPolicy.suspend`` changing (ignored once finished, :122-144)."""
        if not self.read_spec() or self.state.finished:
            return
        wanted = bool(self.run_policy.get("suspend"))
        if wanted and not self.suspended:
            await self.suspend()
        elif not wanted and self.suspended:
            await self.resume()

    # -- main loop --------------------------------------------------------------------

    async def run(self) -> None:
        """Run the job until it is finished and no node is left, or its TTL expired
        (then the job directory is removed)."""
        self.job.update(watchdog.identities())
        self.save()
        self.serve_reports()
        if self.run_policy.get("suspend"):
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
                self.poll_progress()
            if self.state.finished and not cleaned:
                cleaned = True
                await self.clean_pods()
            if self.state.finished:
                ttl = self.run_policy.get("ttlSecondsAfterFinished")
                if self.job.get(NO_COMPLETION_TIME):
                    ttl = None
                if ttl is not None and time.time() >= self.job["finished"] + ttl:
                    await self.expire()
                    return
                if ttl is None and not any(r.alive for r in self.replicas.values()):
                    break
            await asyncio.sleep(POLL)
        await self.final_progress()
        await self.save_eventually()
        if self.state.finished and not self.stopping and not self.unsaved:
            self.add_to_index()

    def add_to_index(self) -> None:
        """The job is settled (finished, no node left, this the last write): listing
        reads it from the index from now on, not from its files."""
        entry = index.entry_for(self.jobdir.path, self.job, self.replicas_wire())
        with contextlib.suppress(OSError):  # no room: it is read from its files instead
            index.add(self.jobdir.path.parent, {self.name: entry})

    # -- progress -------------------------------------------------------------------

    def serve_reports(self) -> None:
        """Start the job's status endpoint; without it (no port, no room for the token
        file) the job runs all the same, its processes get no KUBEFLOW_TRAINER_* vars."""
        assert self.tracker is not None
        reports = ReportServer(self.jobdir, self.tracker.report)
        try:
            reports.start()
        except OSError as err:
            print(f"no status endpoint for the job: {err}", file=sys.stderr, flush=True)
            return
        self.reports = reports

    def poll_progress(self) -> None:
        """Read the job's log and event files in a thread (a large catch-up never
        stalls the supervision), one poll at a time."""
        if self._progress_poll is None or self._progress_poll.done():
            self._progress_poll = asyncio.ensure_future(self._progress_step())

    async def _progress_step(self, *, final: bool = False) -> None:
        """One poll; a changed progress goes into ``job.json`` from the event loop (the
        file's one writer), where ``GET jobs`` reads it with the rest of the job."""
        assert self.tracker is not None
        tracker = self.tracker
        if await asyncio.to_thread(tracker.drain if final else tracker.poll):
            self.job[PROGRESS_KEY] = tracker.wire
            self.save()

    async def final_progress(self) -> None:
        """The job is over: read what is left, so its final metrics stay."""
        if self.reports is not None:
            self.reports.stop()
        if self.tracker is None:
            return
        if self._progress_poll is not None:
            with contextlib.suppress(Exception):
                await self._progress_poll
        with contextlib.suppress(Exception):
            await self._progress_step(final=True)

    async def step(self) -> None:
        """Nodes that ended (in the order they last wrote: the first to fail is the
        failure's, even if its peers ended within the same poll), back-offs that are
        over, the deadline."""
        ended = [
            replica
            for replica in self.replicas.values()
            if replica.process is not None
            and replica.process.returncode is not None
            and replica.phase == "Running"
            and replica.back_off_until is None
        ]
        for replica in sorted(ended, key=self.last_written):
            assert replica.process is not None and replica.process.returncode is not None
            await self.on_exit(replica, exit_code(replica.process.returncode))
            await self.recreate_pending()
        now = time.time()
        for replica in self.replicas.values():
            until = replica.back_off_until
            if until is not None and now >= until and not self.state.finished:
                await self.launch(replica)  # the kubelet starts the container again
                self.save()
        self.check_deadline(now)
        self.check_alone(now)

    def check_alone(self, now: float) -> None:
        """Nodes restarted after every peer had exited for good (OnFailure: a master that
        failed after the workers succeeded) wait for a rendezvous nobody comes to, and the
        job stays Running for ever, as the operator's does: once they have waited
        ``alone_grace`` seconds, the job's ``message`` says so (gone when it no longer
        holds)."""
        waiting = None if self.state.finished or self.suspended else waiting_alone(self.replicas)
        message = None
        if waiting is not None and now - max(r.started or now for r in waiting[0]) >= float(
            self.job.get("alone_grace", ALONE_GRACE)
        ):
            alone, peers = waiting
            message = (
                f"{', '.join(r.plan.replica for r in alone)} restarted after "
                f"{'its peers' if len(alone) == 1 else 'their peers'} "
                f"({', '.join(f'{r.plan.replica} {r.phase}' for r in peers)}) had exited "
                "and waits for them: the job cannot complete; delete it"
            )
        if message != self.job.get(MESSAGE_KEY):
            if message is None:
                self.job.pop(MESSAGE_KEY, None)
            else:
                self.job[MESSAGE_KEY] = message
                self.jobdir.add_event("Warning", "WaitingForPeers", message, self.name)
            self.save()

    def last_written(self, replica: Replica) -> float:
        """When the node's log last changed (0 without one)."""
        try:
            return self.jobdir.log(replica.plan.replica).stat().st_mtime
        except OSError:
            return 0.0

    def check_deadline(self, now: float) -> None:
        """activeDeadlineSeconds, counted from the (last) start."""
        deadline = self.run_policy.get("activeDeadlineSeconds")
        started = self.job.get("started")
        if (
            deadline is not None
            and started is not None
            and not self.suspended
            and not self.state.finished
            and now - started >= deadline
        ):
            self.fail(self.text(DEADLINE))  # core/job.go:82-91; cleanPodPolicy follows

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
            self.fail(
                f"{self.kind_name} {self.name} is failed because its supervisor failed: "
                f"{type(err).__name__}: {err}"
            )

    async def stop(self) -> None:
        """SIGTERM: stop every node, then exit (the backend removes the job)."""
        self.stopping = True
        # All at once, as pods are deleted: one grace period, not one per node.
        await asyncio.gather(*(self.stop_replica(r, "Deleted") for r in self.replicas.values()))


@dataclass
class JobSetSupervisor(JobSetRules, Supervisor):
    """A TrainJob's nodes as Kubeflow Trainer v2.3, JobSet v0.12 and the Job controller
    run them on the ``torch-distributed`` runtime (kubeflow/trainer v2.3.0
    ``pkg/controller/trainjob_controller.go``, jobset v0.12.0
    ``pkg/controllers/failure_policy.go``, kubernetes ``pkg/controller/job``):

    * every node is one completion index of one Job whose pods restart in place
      (``OnFailure``, the kubelet's back-off as above); the Job fails once the restarts
      of its live pods reach its ``backoffLimit`` (6), and JobSet, which has no
      ``maxRestarts``, fails at once: Failed ``FailedJobs``; the Job's other pods are
      deleted (the nodes still running are stopped; their logs are kept here);
    * Complete (``AllJobsCompleted``) once every node has succeeded;
    * no Created or Running condition: the state comes from the conditions, then the
      nodes, as ``kinds.trainjob.status.job_state`` reads a cluster's pods;
    * ``spec.suspend``: Suspended True (every node stopped, logs gone), then Suspended
      False ``Resumed``, which stays;
    * ``activeDeadlineSeconds`` counts from creation, or from the last resume; once
      past, Failed ``DeadlineExceeded`` and the JobSet is deleted: every node stops and
      its logs go;
    * no TTL, no clean-pod policy: a finished TrainJob keeps its pods.
    """

    kind_name = TRAINJOB.kind
    container = TRAINJOB.container

    @property
    def run_policy(self) -> dict[str, Any]:
        """What the shared loop reads: ``spec.suspend``; the rest is this class's."""
        return {"suspend": bool(self.spec.get("suspend"))}

    @property
    def state(self) -> JobState:
        job = {
            "spec": {"suspend": bool(self.spec.get("suspend"))},
            "status": {"conditions": self.job.get("conditions") or []},
        }
        pods = [{"status": {"phase": r.phase}} for r in self.replicas.values()]
        return trainjob.job_state(job, [p for p in pods if p["status"]["phase"] != "Deleted"])

    def save(self) -> bool:
        self.job["state"] = self.state.value  # it follows the nodes, not only conditions
        return super().save()

    def set_condition(self, type_: str, status: str, reason: str, message: str) -> None:
        """apimachinery ``meta.SetStatusCondition``: one condition per type, updated in
        place; its transition time moves only when its status changes."""
        conditions = self.job.setdefault("conditions", [])
        now = time.time()
        current = next((c for c in conditions if c["type"] == type_), None)
        if current is None:
            conditions.append(
                {
                    "type": type_,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "last_transition": now,
                }
            )
        elif (current["status"], current["reason"], current["message"]) == (
            status,
            reason,
            message,
        ):
            return
        else:
            if current["status"] != status:
                current["last_transition"] = now
            current.update(status=status, reason=reason, message=message)
        if status == "True" and type_ in ("Complete", "Failed"):
            self.job.setdefault("finished", now)
        if status == "True" and type_ == "Failed":
            self.summarise_failure(reason, message)
        self.save()

    def fail(self, message: str) -> None:
        """A failure only this machine has (a node that cannot start, the supervisor's
        own error), worded by the caller."""
        self.set_condition("Failed", "True", trainjob.FAILED_JOBS[2], message)

    def reconcile(self, failed: Replica | None = None) -> None:
        """The Job controller (pastBackoffLimitOnFailure: restarts of its live pods),
        then JobSet (no failurePolicy: a failed Job fails the JobSet)."""
        if self.past_limit(BACKOFF_LIMIT):
            job = f"{self.name}-{TRAINJOB.container}-0"
            reason, text = trainjob.BACKOFF_LIMIT_EXCEEDED
            self.jobdir.add_event("Warning", reason, text, job)
            message = trainjob.FAILED_JOBS[3].format(job=job)
            self.jobdir.add_event("Warning", trainjob.FAILED_JOBS[2], message, self.name)
            self.set_condition(*trainjob.FAILED_JOBS[:3], message)
            return
        self.update_status()

    def update_status(self) -> None:
        if all(r.phase == "Succeeded" for r in self.replicas.values()):
            self.jobdir.add_event("Normal", trainjob.COMPLETE[2], trainjob.COMPLETE[3], self.name)
            self.set_condition(*trainjob.COMPLETE)
        self.save()

    def check_deadline(self, now: float) -> None:
        """``reconcileDeadline``: from creation, or from the last resume."""
        deadline = self.spec.get("activeDeadlineSeconds")
        if deadline is None or self.suspended or self.state.finished:
            return
        if now - float(self.job.get("deadline_from") or self.job["created"]) >= deadline:
            self.jobdir.add_event(
                "Warning", trainjob.DEADLINE_EXCEEDED[2], trainjob.DEADLINE_EXCEEDED[3], self.name
            )
            self.set_condition(*trainjob.DEADLINE_EXCEEDED)

    async def clean_pods(self) -> None:
        """Finished: past the deadline the JobSet is deleted (every node and its logs);
        after a failure the Job's live pods are deleted (a node in back-off is never
        restarted now); a complete job has nothing left."""
        deadline = any(
            c["type"] == "Failed" and c["reason"] == trainjob.DEADLINE_EXCEEDED[2]
            for c in self.job.get("conditions") or []
        )
        for replica in self.replicas.values():
            if deadline:
                await self.stop_replica(replica, trainjob.DEADLINE_EXCEEDED[2], ended_too=True)
                self.remove_logs(replica)
                continue
            if replica.back_off_until is not None and replica.exit_code is not None:
                settle(replica, replica.exit_code)
            await self.stop_replica(replica, trainjob.BACKOFF_LIMIT_EXCEEDED[0])
        self.save()

    async def suspend(self) -> None:
        await self.delete_for_suspend()
        self.jobdir.add_event("Normal", trainjob.SUSPENDED[2], trainjob.SUSPENDED[3], self.name)
        self.set_condition(*trainjob.SUSPENDED)
        self.save()

    async def resume(self) -> None:
        """Suspended False (Resumed); the deadline counts again from now."""
        self.suspended = False
        self.job["deadline_from"] = time.time()
        self.jobdir.add_event("Normal", trainjob.RESUMED[2], trainjob.RESUMED[3], self.name)
        self.set_condition(*trainjob.RESUMED)
        await self.start_all()


# The supervisor of each controller a job kind names (``JobKind.controller``).
SUPERVISORS: dict[str, type[Supervisor]] = {
    PYTORCHJOB.controller: Supervisor,
    TRAINJOB.controller: JobSetSupervisor,
}


def supervisor_for(jobdir: JobDir) -> Supervisor:
    """The supervisor that plays the controller of the job's kind (``job.json`` names it;
    jobs from before TrainJobs ran locally are PyTorchJobs)."""
    kind = kind_named(read_json(jobdir.job, {}).get("kind") or PYTORCHJOB.kind)
    return SUPERVISORS[kind.controller](jobdir)


def set_condition(
    conditions: list[dict[str, Any]], type_: str, status: str, reason: str, message: str, now: float
) -> bool:
    """setCondition, util/status.go:100-149, on ``conditions`` in place; whether it changed
    them. Nothing once Failed; a repeat of the same type, status and reason changes
    nothing (the old message and time stay); else the condition replaces its type (the
    transition time kept when only the reason changed),
    Running and Restarting remove each other, and Succeeded/Failed turn Running False."""
    if any(c["type"] == "Failed" and c["status"] == "True" for c in conditions):
        return False
    current = next((c for c in conditions if c["type"] == type_), None)
    if current is not None and (current["status"], current["reason"]) == (status, reason):
        return False
    if current is not None and current["status"] == status:
        now = current["last_transition"]  # :116-119: the status did not change
    kept = []
    for c in conditions:
        if c["type"] == type_ or {type_, c["type"]} == {"Running", "Restarting"}:
            continue
        if type_ in ("Succeeded", "Failed") and c["type"] == "Running":
            c = {**c, "status": "False"}
        kept.append(c)
    new = {"type": type_, "status": status, "reason": reason, "message": message}
    conditions[:] = [*kept, {**new, "last_transition": now}]
    return True


def waiting_alone(replicas: dict[str, Replica]) -> tuple[list[Replica], list[Replica]] | None:
    """The running nodes and their peers, when every running node started after each of
    its peers had exited for good (no restart to come); None otherwise."""
    running = [r for r in replicas.values() if r.alive]
    peers = [r for r in replicas.values() if not r.alive]
    if not running or not peers:
        return None
    if any(r.phase not in ("Succeeded", "Failed") or r.back_off_until is not None for r in peers):
        return None  # a peer is still to start, or to start again
    last_end = max(r.ended or 0.0 for r in peers)
    if all(r.started is not None and r.started > last_end for r in running):
        return running, peers
    return None


def settle(replica: Replica, code: int) -> None:
    """The node's process ended with ``code``: phase, reason and message as a pod's."""
    replica.back_off_until = None
    replica.ended = time.time()
    replica.exit_code = code
    replica.phase = "Succeeded" if code == 0 else "Failed"
    replica.reason = None if code == 0 else ("Error" if code < 128 else f"Signal{code - 128}")
    replica.message = None if code == 0 else f"exited with code {code}"


def go_duration(seconds: float) -> str:
    """A duration as Go prints it (the kubelet's back-off text): 10s, 1m20s, 5m0s, 200ms."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def exit_code(returncode: int) -> int:
    """Shell-style exit code: a signal N becomes 128 + N, as in a container."""
    return 128 - returncode if returncode < 0 else returncode


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
