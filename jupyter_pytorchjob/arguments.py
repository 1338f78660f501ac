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

from .backends import BACKENDS
from .job.errors import JobSpecInvalid
from .job.fields import FIELDS, JobField

# Subcommands that take job flags and build a job body.
JOB_COMMANDS = ("render", "submit")

# Wire field (first segment) -> the flag that sets it (the field table's).
FLAG_OF_FIELD = {f.wire: f.flag for f in FIELDS if f.flag}
# Job flags read as typed (a scalar each, checked by JobSpec.from_wire).
_FLAG_FIELDS = tuple(f for f in FIELDS if f.cli in ("value", "false"))


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
        description="Submit and inspect Kubeflow PyTorchJobs and TrainJobs "
        "(or run them as local processes).",
    )
    sub = parser.add_subparsers(dest="subcommand", required=True, parser_class=_Parser)
    render = sub.add_parser(
        "render",
        help="print the job's manifest (YAML, of its --kind); submits nothing",
        description="Print the job's manifest (a PyTorchJob or a TrainJob, by --kind) for "
        "the job flags; submits nothing. "
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
    runtimes = sub.add_parser(
        "runtimes",
        help="list the Kubeflow Trainer runtimes a TrainJob can name (--runtime)",
        description="List the Kubeflow Trainer runtimes of the namespace: ClusterTrainingRuntimes "
        "and the namespace's TrainingRuntimes (which override those of the same name), with "
        "their framework, default node count, image, and whether a TrainJob of ours can use "
        "them (and why not).",
    )
    _add_global_flags(runtimes)
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
    logs.add_argument(
        "--raw",
        action="store_true",
        help="print the output as written: progress bars' carriage returns and all, instead "
        "of each bar's latest state as a terminal shows it",
    )
    logs.add_argument(
        "--no-color",
        action="store_true",
        help="without the programs' ANSI colour codes (also when $NO_COLOR is set)",
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
    run = sub.add_parser(
        "run",
        help="what a run was: hyperparameters, metrics, checkpoints, artifacts",
        description="Print a job's run record: what its script reported with report(hparams=, "
        "checkpoint=, artifact=) and what Lightning/Hugging Face wrote in its log directory, "
        "with each metric's final value.",
    )
    _add_global_flags(run)
    run.add_argument("job", metavar="NAME")
    clone = sub.add_parser(
        "clone",
        help="submit a copy of a job, optionally resuming from a checkpoint",
        description="Submit a copy of a job under a new name (default NAME-2, -3...: the first "
        "free one; a log directory holding NAME as one of its parts gets the new name). With "
        "--from-checkpoint, its processes find the path in $PTJOB_RESUME_FROM (a function "
        "job's function gets it as resume_from=).",
    )
    _add_global_flags(clone)
    clone.add_argument("job", metavar="NAME")
    clone.add_argument("--name", dest="new_name", metavar="NEW", help="the copy's name")
    clone.add_argument(
        "--from-checkpoint",
        dest="from_checkpoint",
        metavar="PATH",
        help="a checkpoint's path as the job sees it (ptjob run NAME lists them)",
    )
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
    """Every job flag of the field table (fields.py), in its order."""
    job = parser.add_argument_group("job flags")
    for f in FIELDS:
        if f.cli in ("", "command"):
            continue
        if f.cli == "false":
            job.add_argument(f.flag, dest=f.attr, action="store_false", default=None, help=f.help)
            continue
        options: dict[str, Any] = {"dest": f.attr, "metavar": f.metavar, "help": _help(f)}
        if f.repeatable:
            options.update(action="append", default=[])
        job.add_argument(f.flag, **options)


def _help(f: JobField) -> str:
    """The field's help, with its choices and its default."""
    text = f"{f.help}: one of {', '.join(f.choices)}" if f.choices else f.help
    return text if f.default is None else f"{text} (default {f.default})"


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
    for f in _FLAG_FIELDS:
        value = getattr(options, f.attr)
        if value is not None:
            body[f.wire] = value
    for f in FIELDS:
        items = getattr(options, f.attr, None) if f.repeatable else None
        if f.cli == "pairs":
            body[f.wire] = _pairs(f.flag, items or [])
        elif f.cli == "pvc":
            body[f.wire] = [_pvc(text) for text in items or []]
        elif f.cli == "toleration":
            body[f.wire] = [_toleration(text) for text in items or []]
        elif f.cli == "list":
            body[f.wire] = list(items or [])

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
    elif command:
        body["command"] = command
        hint = next((w for w in command if w.endswith(".py")), command[0])
    elif body.get("runtime") is not None and str(body.get("kind", "")).lower() == "trainjob":
        hint = str(body["runtime"])  # the runtime's own command (a torchtune one's)
    else:
        raise UsageError(
            "COMMAND: give the training code as --script FILE or after --, e.g. -- python train.py"
        )
    if "name" not in body:
        from .job.spec import suggest_name  # the job model: for a submit only

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


def flag_item(f: JobField, text: str) -> Any:
    """One value of a repeatable flag's field (``pvc``, ``tolerations``) or one ``K=V`` of
    a map field, as typed on the command line, in its wire shape (``UsageError``
    naming the flag). The Python API takes the same strings."""
    if f.cli == "pvc":
        return _pvc(text)
    if f.cli == "toleration":
        return _toleration(text)
    if f.cli == "pairs":
        return _pairs(f.flag, [text])
    raise ValueError(f"{f.wire} is not a repeatable field")
