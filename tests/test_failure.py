"""The failure summary and the known failures (job/failure.py), pure: what a user sees
first when a job failed or waits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_pytorchjob.job.failure import (
    MAX_TAIL_LINES,
    JobFailure,
    JobWaiting,
    NodeRun,
    failure_hint,
    failure_message,
    failure_tail,
    job_waiting,
    signal_name,
    waiting_for_peers,
    waiting_hint,
)
from jupyter_pytorchjob.job.messages import Message, msg
from jupyter_pytorchjob.job.status import JobInfo, JobState, ReplicaInfo

TRACEBACK = [
    "step 1 loss 0.9",
    "step 2 loss 0.8",
    "Traceback (most recent call last):",
    '  File "/app/train.py", line 9, in <module>',
    "    1 / 0",
    "ZeroDivisionError: division by zero",
]


def test_the_tail_starts_at_the_traceback() -> None:
    assert failure_tail(TRACEBACK) == TRACEBACK[2:]
    assert failure_message(TRACEBACK) == "ZeroDivisionError: division by zero"


def test_without_a_traceback_the_tail_is_the_last_lines() -> None:
    lines = [f"line {i}" for i in range(100)]
    assert failure_tail(lines) == lines[-20:]
    assert failure_tail(lines, 5) == lines[-5:]
    assert failure_message(["starting", "fatal: no data found", "bye"]) == "fatal: no data found"
    assert failure_message(["starting", "bye"]) == "bye"


def test_a_long_traceback_is_bounded() -> None:
    lines = ["Traceback (most recent call last):", *[f"  frame {i}" for i in range(500)]]
    lines.append("RecursionError: maximum recursion depth exceeded")
    tail = failure_tail(lines)
    assert len(tail) == MAX_TAIL_LINES and tail[-1].startswith("RecursionError")
    assert tail[0] == "Traceback (most recent call last):" and tail[1] == "  ... (443 lines)"


def test_a_chained_traceback_keeps_its_cause() -> None:
    lines = [
        "Traceback (most recent call last):",
        "KeyError: 'lr'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        "ValueError: no learning rate",
    ]
    earlier = ["noise", "Traceback (most recent call last):", "OSError: x", "ok"]
    assert failure_tail([*earlier, *lines]) == lines
    assert failure_message(lines) == "ValueError: no learning rate"


def test_torchruns_wrapper_is_not_the_message() -> None:
    """torchrun prints its own ChildFailedError after the child's traceback; the
    child's exception is what went wrong (ranks prefixed as torchrun --tee writes)."""
    lines = [
        "[rank0]: Traceback (most recent call last):",
        "[rank0]:   File 'train.py', line 3, in <module>",
        "[rank0]: ValueError: bad batch",
        "Traceback (most recent call last):",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    ]
    assert failure_message(lines) == "ValueError: bad batch"
    assert failure_tail(lines)[0] == "Traceback (most recent call last):"


@pytest.mark.parametrize(
    ("code", "name"), [(137, "SIGKILL"), (143, "SIGTERM"), (-9, "SIGKILL"), (1, None), (None, None)]
)
def test_signal_names(code: int | None, name: str | None) -> None:
    assert signal_name(code) == name


@pytest.mark.parametrize(
    ("reason", "code", "lines", "flag"),
    [
        ("OOMKilled", 137, [], "--memory"),
        ("Error", 1, ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate"], "--gpus"),
        (
            "Error",
            1,
            ["RuntimeError: DataLoader worker (pid 42) is killed by signal: Bus error."],
            "--shm",
        ),
        ("Error", 1, ["NCCL error: unhandled system error, posix_fallocate failed"], "--shm"),
        ("Error", 1, ["torch.distributed.DistNetworkError: Connection refused"], "worker-0"),
        ("Error", 1, ["RuntimeError: [gloo] Timed out waiting 1800000ms"], "worker-0"),
        ("Evicted", None, [], "--memory"),
        ("DeadlineExceeded", None, [], "--deadline"),
        ("BackoffLimitExceeded", 1, [], "--backoff-limit"),
        ("Error", 137, [], "--memory"),
    ],
)
def test_known_failures_name_the_flag(
    reason: str, code: int | None, lines: list[str], flag: str
) -> None:
    hint = failure_hint(reason, code, lines, other_failed="worker-0")
    assert hint is not None and flag in str(hint)
    assert str(hint).count(". ") == 0, "one sentence"


def test_an_unknown_failure_has_no_hint() -> None:
    assert failure_hint("Error", 1, TRACEBACK) is None


@pytest.mark.parametrize(
    ("reason", "message", "flag"),
    [
        ("ImagePullBackOff", 'Back-off pulling image "nope:1"', "--image"),
        ("ErrImagePull", "rpc error", "--image"),
        ("CreateContainerConfigError", 'secret "token" not found', "token"),
        ("FailedMount", 'persistentvolumeclaim "data" not found', "data"),
        ("Unschedulable", "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.", "--gpus"),
        ("Unschedulable", "0/3 nodes are available: 3 Insufficient memory.", "--memory"),
        ("Unschedulable", 'persistentvolumeclaim "data" not found.', "--pvc"),
        ("Suspended", "the job is suspended", "ptjob resume"),
        (
            "NotCreated",
            "TrainJobResourcesCreationFailed: ... JobSet name is too long, pod names ...",
            "--name",
        ),
        ("NotCreated", 'admission webhook "x" denied the request: spec.a: bad', "field"),
    ],
)
def test_known_waits_say_what_to_do(reason: str, message: str, flag: str) -> None:
    hint = waiting_hint(reason, message)
    assert hint is not None and flag in str(hint)


def test_what_a_job_waits_for() -> None:
    pending = ReplicaInfo(
        "worker-0", "Pending", reason="Unschedulable", message="0/2 nodes are available"
    )
    replicas = [ReplicaInfo("master-0", "Running"), pending]
    waiting = job_waiting("Running", replicas)
    assert waiting is not None and waiting.reason == "Unschedulable"
    assert waiting.message == "worker-0: 0/2 nodes are available"
    assert job_waiting("Failed", replicas) is None
    assert job_waiting("Running", [ReplicaInfo("master-0", "Running")]) is None
    admission = JobWaiting("QuotaReserved", "insufficient quota", None)
    assert job_waiting("Suspended", replicas, admission=admission) is admission
    suspended = job_waiting("Suspended", [])
    assert suspended is not None and suspended.reason == "Suspended"
    no_operator = job_waiting("Submitted", [], message="no operator has picked this job up")
    assert no_operator is not None and no_operator.reason == "NoOperator"


def test_the_wire_shape_and_back() -> None:
    failure = JobFailure(
        replica="master-0",
        reason="Error",
        message="ZeroDivisionError: division by zero",
        exit_code=1,
        tail=TRACEBACK[2:],
        log_source="previous",
    )
    wire = failure.to_wire()
    assert wire == {
        "replica": "master-0",
        "exitCode": 1,
        "signal": None,
        "reason": "Error",
        "message": "ZeroDivisionError: division by zero",
        "tail": TRACEBACK[2:],
        "logSource": "previous",
        "hint": None,
        "hintCode": None,
        "hintParams": None,
    } | {"exitCode": 1}
    assert JobFailure.from_wire(wire) == failure
    info = JobInfo("j", JobState.FAILED, [], 1, 0, 0.0, failure=failure)
    assert info.to_wire()["failure"] == wire and info.to_wire()["waiting"] is None
    assert failure.headline == "master-0 exited 1: ZeroDivisionError: division by zero"


@pytest.mark.parametrize(
    "stored",
    [None, "x", {"replica": 1}, {"replica": "a", "reason": "b"}, []],
)
def test_a_record_that_is_not_a_failure_is_none(stored: object) -> None:
    assert JobFailure.from_wire(stored) is None


def test_a_stored_failure_is_bounded() -> None:
    failure = JobFailure.from_wire(
        {
            "replica": "m",
            "reason": "Error",
            "message": "x" * 10_000,
            "tail": ["y" * 10_000] * 1000 + [3],
            "exitCode": True,
            "logSource": "elsewhere",
        }
    )
    assert failure is not None
    assert len(failure.message) <= 300 and len(failure.tail) == MAX_TAIL_LINES
    assert all(len(line) <= 500 for line in failure.tail)
    assert failure.exit_code is None and failure.log_source is None


# -- nodes restarted in place, alone ------------------------------------------------------

MASTER_AGAIN = NodeRun("master-0", "Running", running_since=100.0, ended=99.0, restarted=True)
WORKER_DONE = NodeRun("worker-0", "Succeeded", running_since=None, ended=110.0, restarted=False)


def test_a_restarted_node_whose_peers_all_ended_waits_for_them_after_the_grace() -> None:
    # Alone from the worker's end (110), not from the master's restart (100).
    assert waiting_for_peers([MASTER_AGAIN, WORKER_DONE], now=169.9, grace=60) is None
    waiting = waiting_for_peers([MASTER_AGAIN, WORKER_DONE], now=170.0, grace=60)
    assert waiting is not None and waiting.reason == "WaitingForPeers"
    assert isinstance(waiting.message, Message) and waiting.message.code == "waiting_for_peers_one"
    assert str(waiting.message) == (
        "master-0 restarted and waits for its peers, which have all exited "
        "(worker-0 Succeeded): the job cannot complete; delete it"
    )
    assert waiting.hint == msg("hint_waiting_for_peers")
    assert "destroy_process_group" in str(waiting.hint)
    # A restart after the peers ended: from the restart.
    late = replace(MASTER_AGAIN, running_since=150.0)
    assert waiting_for_peers([late, WORKER_DONE], now=209.0, grace=60) is None
    assert waiting_for_peers([late, WORKER_DONE], now=210.0, grace=60) is not None


def test_nodes_alone_are_named_together() -> None:
    worker = replace(MASTER_AGAIN, name="worker-1")
    waiting = waiting_for_peers([MASTER_AGAIN, worker, WORKER_DONE], now=1e9, grace=60)
    assert waiting is not None and str(waiting.message).startswith(
        "master-0, worker-1 restarted and wait for their peers, which have all exited "
        "(worker-0 Succeeded)"
    )


@pytest.mark.parametrize(
    ("runs", "why"),
    [
        ([replace(MASTER_AGAIN, restarted=False), WORKER_DONE], "a first run finishing"),
        ([MASTER_AGAIN, replace(WORKER_DONE, phase="Running", restarting=True)], "back-off"),
        ([MASTER_AGAIN, replace(WORKER_DONE, phase="Pending", ended=None)], "not started"),
        ([MASTER_AGAIN, replace(WORKER_DONE, running_since=105.0)], "the worker runs"),
        ([MASTER_AGAIN], "no peers"),
        ([replace(MASTER_AGAIN, running_since=None, phase="Succeeded"), WORKER_DONE], "done"),
    ],
)
def test_nodes_not_alone_wait_for_nothing(runs: list[NodeRun], why: str) -> None:
    assert waiting_for_peers(runs, now=1e9, grace=60) is None, why


def test_a_stored_waiting_reads_back_bounded() -> None:
    hint = msg("hint_waiting_for_peers")
    waiting = JobWaiting("WaitingForPeers", "m" * 1000, hint)
    back = JobWaiting.from_wire(waiting.to_wire())
    assert back is not None and len(back.message) == 300 and back.hint == hint
    # Ours read back with their codes, for JupyterLab to translate.
    ours = waiting_for_peers([MASTER_AGAIN, WORKER_DONE], now=1e9, grace=60)
    assert ours is not None and JobWaiting.from_wire(ours.to_wire()) == ours
    for stored in (None, [], {"reason": "x"}, {"reason": 1, "message": "m"}):
        assert JobWaiting.from_wire(stored) is None
