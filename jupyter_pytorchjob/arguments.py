"""The one argument parser of ``ptjob`` and ``%ptjob``.

``parse(argv)`` splits off ``-- COMMAND [ARGS...]``, parses the rest with
argparse, and turns job flags into the wire body that ``JobSpec.from_wire``
validates, so the CLI, the magic, the form and the REST API share one set of
rules and messages. Errors raise ``UsageError`` naming the flag; the CLI prints
it and exits 2, the magic shows it as IPython's UsageError.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from .job.errors import JobSpecInvalid
from .job.spec import CLEAN_POD_POLICIES, RESTART_POLICIES, suggest_name

BACKENDS = ("local", "kubernetes")
# Subcommands that take job flags and build a job body.
JOB_COMMANDS = ("render", "submit")

# Wire field (first segment) -> the flag that sets it.
FLAG_OF_FIELD = {
    "name": "--name",
    "image": "--image",
    "nodes": "--nodes",
    "master": "--no-master",
    "gpus": "--gpus",
    "gpuResource": "--gpu-resource",
    "cpu": "--cpu",
    "memory": "--memory",
    "shm": "--shm",
    "nprocPerNode": "--nproc-per-node",
    "pvc": "--pvc",
    "env": "--env",
    "workdir": "--workdir",
    "restartPolicy": "--restart-policy",
    "backoffLimit": "--backoff-limit",
    "deadline": "--deadline",
    "ttl": "--ttl",
    "cleanPodPolicy": "--clean-pod-policy",
    "nodeSelector": "--node-selector",
    "tolerations": "--toleration",
    "labels": "--label",
    "annotations": "--annotation",
    "queue": "--queue",
    "logdir": "--logdir",
    "script": "--script",
    "command": "COMMAND (after --)",
    "args": "ARGS (after --)",
}


class UsageError(Exception):
    """Invalid command-line input; ``str()`` is one line naming the flag."""

    def __init__(self, message: str, prog: str = "ptjob") -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog

    def __str__(self) -> str:
        return f"{self.prog}: error: {self.message}"


@dataclass
class Invocation:
    """A parsed command line: the subcommand, its options, and the job body if any."""

    command: str
    options: argparse.Namespace
    job: dict[str, Any] = field(default_factory=dict)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)


def build_parser(prog: str = "ptjob") -> argparse.ArgumentParser:
    """The parser with every subcommand; shared by the CLI and the magic."""
    parser = _Parser(
        prog=prog,
        description="Submit and inspect Kubeflow PyTorchJobs (or run them as local processes).",
    )
    sub = parser.add_subparsers(dest="subcommand", required=True, parser_class=_Parser)
    render = sub.add_parser(
        "render",
        help="print the PyTorchJob manifest (YAML); submits nothing",
        description="Print the PyTorchJob manifest for the job flags; submits nothing. "
        "Give the training code as --script FILE or as -- COMMAND [ARGS...].",
    )
    _add_global_flags(render)
    _add_job_flags(render)
    render.add_argument(
        "-o", "--output", choices=("yaml", "json"), default="yaml", help="output format"
    )
    submit = sub.add_parser(
        "submit",
        help="submit a job and print its name",
        description="Submit a job and print its name. Give the training code as "
        "--script FILE or as -- COMMAND [ARGS...].",
    )
    _add_global_flags(submit)
    _add_job_flags(submit)

    listing = sub.add_parser("list", help="list jobs with their state")
    _add_global_flags(listing)
    status = sub.add_parser("status", help="a job's state, conditions and replicas")
    _add_global_flags(status)
    status.add_argument("job", metavar="NAME")
    logs = sub.add_parser(
        "logs",
        help="print a job's logs, every replica merged with a prefix",
        description="Print a job's logs: every replica merged, each line prefixed with its "
        "replica (master-0 | ...), or one replica with --replica.",
    )
    _add_global_flags(logs)
    logs.add_argument("job", metavar="NAME")
    logs.add_argument("-f", "--follow", action="store_true", help="keep following new lines")
    logs.add_argument("--replica", metavar="REPLICA", help="only this replica, e.g. worker-0")
    logs.add_argument("--tail", metavar="N", type=_non_negative, help="last N lines per replica")
    logs.add_argument(
        "--previous", action="store_true", help="the log of the replica's previous (crashed) run"
    )
    wait = sub.add_parser(
        "wait", help="wait until the job finishes: exit 0 on Succeeded, 1 on Failed or timeout"
    )
    _add_global_flags(wait)
    wait.add_argument("job", metavar="NAME")
    wait.add_argument("--timeout", metavar="SECONDS", type=_positive_float, help="give up after")
    delete = sub.add_parser("delete", help="stop every replica and remove the job")
    _add_global_flags(delete)
    delete.add_argument("job", metavar="NAME")
    suspend = sub.add_parser(
        "suspend", help="stop the job's replicas and keep the job (runPolicy.suspend)"
    )
    _add_global_flags(suspend)
    suspend.add_argument("job", metavar="NAME")
    resume = sub.add_parser("resume", help="start a suspended job's replicas again, from scratch")
    _add_global_flags(resume)
    resume.add_argument("job", metavar="NAME")
    tensorboard = sub.add_parser(
        "tensorboard",
        help="open TensorBoard on the job's log directory (--logdir)",
        description="Open TensorBoard on the job's log directory: through the Jupyter server "
        "that runs this kernel or terminal when there is one, else a local TensorBoard that "
        "runs until Ctrl-C.",
    )
    _add_global_flags(tensorboard)
    tensorboard.add_argument("job", metavar="NAME")
    return parser


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return int(text)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def _add_global_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, help="where jobs run (default: local)")
    parser.add_argument("--namespace", metavar="NS", help="Kubernetes namespace")


def _add_job_flags(parser: argparse.ArgumentParser) -> None:
    job = parser.add_argument_group("job flags")
    add = job.add_argument
    add("--name", help="job name (default: derived from the script, plus a random suffix)")
    add("--image", help="container image of every replica")
    add("--nodes", metavar="N", help="pods: node 0 is the Master, the rest Workers (default 1)")
    add(
        "--no-master",
        dest="master",
        action="store_false",
        default=None,
        help="every node a Worker, no Master (the operator then sets no RANK, WORLD_SIZE, "
        "MASTER_ADDR; e.g. elastic jobs)",
    )
    add("--gpus", metavar="G", help="GPUs per node (default 0)")
    add("--gpu-resource", metavar="R", help="GPU resource name (default nvidia.com/gpu)")
    add("--cpu", metavar="Q", help="CPU per node, a quantity such as 4 or 500m")
    add("--memory", metavar="Q", help="memory per node, a quantity such as 16Gi")
    add(
        "--pvc",
        metavar="CLAIM:MOUNT[:SUBPATH][:ro]",
        action="append",
        default=[],
        help="mount a PersistentVolumeClaim in every replica (repeatable)",
    )
    add("--shm", metavar="SIZE", help="size of /dev/shm, e.g. 8Gi; 0 or off for none (default 2Gi)")
    add("--nproc-per-node", metavar="N", help="processes per node (torchrun); default GPUs or 1")
    add("--env", metavar="K=V", action="append", default=[], help="env var (repeatable)")
    add("--workdir", metavar="DIR", help="working directory in the container")
    add("--restart-policy", metavar="P", help=f"one of {', '.join(RESTART_POLICIES)}")
    add("--backoff-limit", metavar="N", help="restarts before the job fails (default 3)")
    add("--deadline", metavar="SECONDS", help="fail the job after this many seconds")
    add("--ttl", metavar="SECONDS", help="delete the finished job after this many seconds")
    add(
        "--clean-pod-policy",
        metavar="P",
        help=f"one of {', '.join(CLEAN_POD_POLICIES)} (default Running)",
    )
    add("--node-selector", metavar="K=V", action="append", default=[], help="(repeatable)")
    add(
        "--toleration",
        metavar="KEY[=VALUE]:EFFECT",
        action="append",
        default=[],
        help="(repeatable)",
    )
    add("--label", metavar="K=V", action="append", default=[], help="(repeatable)")
    add("--annotation", metavar="K=V", action="append", default=[], help="(repeatable)")
    add("--queue", metavar="Q", help="Kueue LocalQueue name")
    add("--logdir", metavar="DIR", help="TensorBoard log directory (on a PVC) the job writes to")
    add("--script", metavar="FILE", help="ship this Python file inside the job and run it")


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``[flags..., '--', command...]`` -> (flags, command)."""
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def parse(
    argv: Sequence[str], *, prog: str = "ptjob", script_text: str | None = None
) -> Invocation:
    """Parse a ``ptjob`` command line.

    ``script_text`` is the script given another way (the magic's cell body); it
    stands for ``--script``.
    """
    flags, command = split_command(argv)
    options = build_parser(prog).parse_args(flags)
    invocation = Invocation(options.subcommand, options)
    if options.subcommand in JOB_COMMANDS:
        try:
            invocation.job = job_body(options, command, script_text=script_text)
        except UsageError as err:
            err.prog = f"{prog} {options.subcommand}"
            raise
    return invocation


def job_body(
    options: argparse.Namespace, command: list[str], *, script_text: str | None = None
) -> dict[str, Any]:
    """The wire job body for the job flags (not yet validated)."""
    body: dict[str, Any] = {}
    scalars = {
        "name": options.name,
        "image": options.image,
        "nodes": options.nodes,
        "master": options.master,
        "gpus": options.gpus,
        "gpuResource": options.gpu_resource,
        "cpu": options.cpu,
        "memory": options.memory,
        "nprocPerNode": options.nproc_per_node,
        "workdir": options.workdir,
        "restartPolicy": options.restart_policy,
        "backoffLimit": options.backoff_limit,
        "deadline": options.deadline,
        "ttl": options.ttl,
        "cleanPodPolicy": options.clean_pod_policy,
        "queue": options.queue,
        "logdir": options.logdir,
    }
    body.update({k: v for k, v in scalars.items() if v is not None})
    if options.shm is not None:
        body["shm"] = options.shm
    body["pvc"] = [_pvc(text) for text in options.pvc]
    body["env"] = _pairs("--env", options.env)
    body["nodeSelector"] = _pairs("--node-selector", options.node_selector)
    body["labels"] = _pairs("--label", options.label)
    body["annotations"] = _pairs("--annotation", options.annotation)
    body["tolerations"] = [_toleration(text) for text in options.toleration]

    hint: str | None = None
    if options.script is not None and script_text is not None:
        raise UsageError("--script: the cell is the script; do not give --script as well")
    if options.script is not None:
        path = Path(options.script)
        try:
            script_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise UsageError(f"--script: cannot read {options.script!r}: {err}") from err
        hint = path.name
    if script_text is not None:
        body["script"] = script_text
        body["args"] = command
    else:
        if not command:
            raise UsageError(
                "COMMAND: give the training code as --script FILE or after --, "
                "e.g. -- python train.py"
            )
        body["command"] = command
        hint = next((w for w in command if w.endswith(".py")), command[0])
    if "name" not in body:
        body["name"] = suggest_name(hint)
    return body


def describe(err: JobSpecInvalid) -> str:
    """A ``JobSpecInvalid`` in flag terms: one line per error, naming the flag."""
    lines = []
    for problem in err.errors:
        match = re.fullmatch(r"(\w+)(?:\[([^\]]*)\])?(?:\.(\w+))?", problem.field)
        if match is None or match.group(1) not in FLAG_OF_FIELD:
            lines.append(f"{problem.field}: {problem.message}")
            continue
        head, key, part = match.groups()
        where = FLAG_OF_FIELD[head]
        if key is not None:
            where += f" #{int(key) + 1}" if key.isdigit() else f" {key}"
        if part:
            where += f" ({part})"
        lines.append(f"{where}: {problem.message}")
    return "\n".join(lines)


def _pairs(flag: str, items: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for text in items:
        key, eq, value = text.partition("=")
        if not eq or not key:
            raise UsageError(f"{flag}: expected K=V, got {text!r}")
        result[key] = value
    return result


def _pvc(text: str) -> dict[str, Any]:
    parts = text.split(":")
    read_only = False
    if len(parts) >= 3 and parts[-1] in ("ro", "rw"):
        read_only = parts.pop() == "ro"
    if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
        raise UsageError(f"--pvc: expected CLAIM:MOUNT[:SUBPATH][:ro], got {text!r}")
    mount: dict[str, Any] = {"claim": parts[0], "mountPath": parts[1], "readOnly": read_only}
    if len(parts) == 3:
        mount["subPath"] = parts[2]
    return mount


def _toleration(text: str) -> dict[str, Any]:
    key_value, colon, effect = text.rpartition(":")
    if not colon:
        key_value, effect = text, ""
    key, eq, value = key_value.partition("=")
    if not key:
        raise UsageError(f"--toleration: expected KEY[=VALUE]:EFFECT, got {text!r}")
    return {"key": key, "operator": "Equal" if eq else "Exists", "value": value, "effect": effect}
