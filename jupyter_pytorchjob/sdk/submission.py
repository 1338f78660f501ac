"""``submit``: train a function on N nodes, on either backend.

    from jupyter_pytorchjob import Job, submit

    job = submit(train, nodes=2, gpus=1, shm="8Gi", pvc=["data:/mnt/data"],
                 args={"lr": 1e-3, "epochs": 3})
    job.logs(follow=True); job.wait(); job.result(); job.tensorboard()
    Job.list(); Job("name").status(); job.suspend(); job.delete()

``submit`` captures the function (``function.capture``: its source, with the imports,
constants and notebook functions/classes it uses made explicit; see there for what is
captured and what is refused), writes it into a job script (``function.script``) and
submits that script exactly as ``--script`` / ``%%ptjob submit`` do: every field of
the job is a keyword argument named like the ``JobSpec`` attribute (the CLI's long
flag in snake_case), read and validated by the one field table. It returns a
``Job`` (``JobHandle``). ``submit_spec`` submits a validated job of any kind (the
``%%ptjob submit`` magic's way in too).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .. import arguments
from ..backends import JobInfo
from ..frontends.backend_choice import backend_name
from ..function import capture, job_script, new_result_key
from ..job.errors import JobSpecInvalid
from ..job.fields import FIELD, FIELDS
from ..job.spec import JobSpec, suggest_name
from .handle import JobHandle
from .runner import Runner, default_runner

# The job body fields a function job sets itself: the script, its arguments, the rest.
_NOT_KEYWORDS = ("command", "args", "script", "extras")
#: The keyword arguments of ``submit`` that are job fields, by keyword.
KEYWORD_FIELDS = {f.attr: f for f in FIELDS if f.wire not in _NOT_KEYWORDS}
#: Where a job with a PVC but no ``logdir`` writes its logs and result, under the
#: first writable PVC mount.
DEFAULT_LOGDIR = "{mount}/runs/{name}"


class InvalidArguments(ValueError):
    """``submit`` refused its arguments; nothing was created. ``errors`` pairs each
    keyword with its problem; ``str()`` has one line per problem, keyword first."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("\n".join(f"{keyword}: {message}" for keyword, message in errors))


def submit(
    function: Callable[..., Any],
    *,
    args: Mapping[str, Any] | None = None,
    backend: str | None = None,
    namespace: str | None = None,
    **fields: Any,
) -> JobHandle:
    """Run ``function(**args)`` once in every process of a new job; its ``Job``.

    Every process runs under the job's launcher (``python``, or ``torchrun`` with
    ``nproc_per_node`` > 1 and on TrainJobs) with the process group initialised
    (``init_process_group``: nccl when CUDA is available, else gloo; destroyed after
    the function returns). What rank 0 returns (JSON, else a pickle) comes back with
    ``job.result()``, signed with a key made here: up to 4 MiB through rank 0's own log
    (no volume needed), up to 16 MiB through the job's log directory on its PVC; a job
    with ``pvc`` but no ``logdir`` gets ``<first writable mount>/runs/<name>``.
    ``backend`` is ``local`` or ``kubernetes`` (default ``$PTJOB_BACKEND``, else local).

    The job's fields are keyword arguments (listed below), with the values and
    checks of ``ptjob submit``'s flags; ``pvc``, ``tolerations`` take the flags'
    strings (``"data:/mnt/data"``) or their REST objects; ``env``, ``labels``,
    ``annotations``, ``node_selector`` take dicts. ``InvalidArguments`` (naming the
    keyword) or ``CaptureError`` (naming what cannot travel) before anything is
    created; ``BackendError`` when the backend refuses the job.
    """
    captured = capture(function)
    kwargs = dict(args or {})
    body, errors = _job_body(fields)
    errors += _check_args(function, kwargs)
    if errors:
        raise InvalidArguments(errors)
    name = body.setdefault("name", suggest_name(function.__name__))
    if "logdir" not in body:
        mount = _first_writable_mount(body.get("pvc"))
        if mount is not None:
            body["logdir"] = DEFAULT_LOGDIR.format(mount=mount.rstrip("/"), name=name)
    key = new_result_key()
    try:
        body["script"] = job_script(captured, kwargs, job=str(name), key=key)
    except ValueError as err:
        raise InvalidArguments([("args", str(err))]) from None
    try:
        spec = JobSpec.from_wire(body)
    except JobSpecInvalid as err:
        raise InvalidArguments(_keyword_errors(err)) from None
    info, handle = submit_spec(spec, backend=backend, namespace=namespace)
    print(
        f"Submitted {info.name}: {captured.name}() on {info.nodes} node(s) ({info.topology}) "
        f"on the {handle.backend} backend; it took along {captured.took_along()}."
    )
    print("Follow it with job.logs(follow=True), job.wait(), then job.result().")
    print_warnings(info)
    handle.result_key = bytes.fromhex(key)
    handle.guided = True  # printed above: its display does not repeat it
    return handle


def submit_spec(
    spec: JobSpec,
    *,
    backend: str | None = None,
    namespace: str | None = None,
    runner: Runner | None = None,
) -> tuple[JobInfo, JobHandle]:
    """Submit a validated job on ``backend`` (default ``$PTJOB_BACKEND``, else local);
    the job as created and its handle. ``BackendError`` when the backend refuses it."""
    where = backend_name(backend)
    runner = runner or default_runner()
    info = runner.run(runner.backend(where, namespace).submit(spec))
    return info, JobHandle(info.name, backend=where, namespace=namespace, runner=runner)


def print_warnings(info: JobInfo) -> None:
    """The warnings of a job just submitted, on stderr."""
    for warning in info.warnings:
        print(f"Warning: {warning}", file=sys.stderr)


def _first_writable_mount(pvc: Any) -> str | None:
    """The mount path of the first writable PVC of a (not yet validated) body."""
    for mount in pvc if isinstance(pvc, list) else ():
        path = mount.get("mountPath") if isinstance(mount, Mapping) else None
        if isinstance(path, str) and path.startswith("/") and not mount.get("readOnly"):
            return path
    return None


def _job_body(fields: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The REST job body for ``submit``'s keyword arguments, and what is wrong with them."""
    body: dict[str, Any] = {}
    errors: list[tuple[str, str]] = []
    for keyword, value in fields.items():
        f = KEYWORD_FIELDS.get(keyword)
        if f is None:
            known = ", ".join(sorted(KEYWORD_FIELDS))
            raise TypeError(
                f"submit() got an unexpected keyword argument {keyword!r}; "
                f"the job's fields are: {known}"
            )
        if value is None and not f.nullable:
            continue  # None: the field's default
        try:
            body[f.wire] = _wire_value(f.wire, value)
        except arguments.UsageError as err:
            errors.append((keyword, err.message.split(": ", 1)[-1]))
    return body, errors


def _wire_value(wire: str, value: Any) -> Any:
    f = FIELD[wire]
    if f.cli in ("pvc", "toleration") and isinstance(value, list | tuple):
        return [arguments.flag_item(f, v) if isinstance(v, str) else v for v in value]
    if f.cli == "pairs" and isinstance(value, list | tuple):
        merged: dict[str, Any] = {}
        for item in value:
            merged.update(arguments.flag_item(f, item) if isinstance(item, str) else item)
        return merged
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _check_args(function: Callable[..., Any], kwargs: dict[str, Any]) -> list[tuple[str, str]]:
    bad = [k for k in kwargs if not isinstance(k, str) or not k.isidentifier()]
    if bad:
        return [("args", f"keys must be keyword argument names; got {bad[0]!r}")]
    try:
        inspect.signature(function).bind(**kwargs)
    except TypeError as err:
        signature = f"{function.__name__}{inspect.signature(function)}"
        return [("args", f"do not fit {signature}: {err}")]
    return []


def _keyword_errors(err: JobSpecInvalid) -> list[tuple[str, str]]:
    """``JobSpecInvalid``'s field names (``gpuResource``, ``pvc[0].mountPath``) as
    ``submit``'s keywords (``gpu_resource``, ``pvc[0].mountPath``)."""
    out = []
    for problem in err.errors:
        head = re.split(r"[\[.]", problem.field, maxsplit=1)[0]
        rest = problem.field[len(head) :]
        if head == "script":
            out.append(("function", "with what it captures, " + problem.message))
        elif head in FIELD:
            out.append((FIELD[head].attr + rest, problem.message))
        else:
            out.append((problem.field, problem.message))
    return out


def _keyword_help() -> str:
    lines = []
    for attr, f in KEYWORD_FIELDS.items():
        default = f" (default {f.default!r})" if f.default not in (None, ()) else ""
        lines.append(f"    {attr:<20} {f.help}{default}\n")
    return "\n    Keyword arguments (the job's fields):\n\n" + "".join(lines)


submit.__doc__ = (submit.__doc__ or "") + _keyword_help()
