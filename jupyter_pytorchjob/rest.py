"""What every REST handler of the extension shares (the job API and TensorBoard's):
the resource name authorizers see, reading a JSON body, checking a ``{name}``."""

from __future__ import annotations

from typing import Any

from jupyter_server.base.handlers import JupyterHandler
from tornado import web

from .job import k8s_rules
from .job.errors import FieldError, JobSpecInvalid
from .job.messages import msg
from .job.shape import load_json

# The resource name authorizers (e.g. JupyterHub's RBAC) see for our routes.
AUTH_RESOURCE = "pytorchjob"
#: settings key of the largest JSON body the API reads (``PyTorchJobApp.api_max_body_size``)
MAX_BODY_SETTING = "pytorchjob_max_body_size"
DEFAULT_MAX_BODY = 1024 * 1024
#: settings key of the server's ``LogStreamSlots`` (``PyTorchJobApp.max_log_streams``)
LOG_STREAMS_SETTING = "pytorchjob_log_streams"
DEFAULT_MAX_LOG_STREAMS = 100


class LogStreamSlots:
    """At most ``limit`` log streams served at once: each holds upstream connections
    (a cluster's log follow per replica) or a poll loop (local), so a thousand open
    views would starve every other request. Taken on the event loop only."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    def take(self) -> bool:
        if self.open >= self.limit:
            return False
        self.open += 1
        return True

    def give(self) -> None:
        self.open = max(0, self.open - 1)

    def full_message(self) -> str:
        return (
            f"this server already streams {self.limit} logs (PyTorchJobApp.max_log_streams); "
            "close some log views or log commands and try again"
        )


def job_name_problem(name: str) -> JobSpecInvalid | None:
    """Why no job can be called ``name`` (checked before it reaches a path or an API
    call), or None. Kubernetes names any object by the DNS-1123 subdomain rule."""
    problem = k8s_rules.check_dns1123_subdomain(name)
    if problem is None:
        return None
    shown = name if len(name) <= 40 else name[:37] + "..."
    return JobSpecInvalid(
        [FieldError("name", msg("job_name_invalid", name=repr(shown), problem=problem))]
    )


def read_json_body(handler: JupyterHandler) -> Any:
    """The request body as plain JSON data: ``HTTPError`` 413 over the configured size,
    ``JobSpecInvalid`` (field ``body``) when it is not UTF-8 JSON of bounded depth."""
    limit = int(handler.settings.get(MAX_BODY_SETTING, DEFAULT_MAX_BODY))
    size = len(handler.request.body or b"")
    if size > limit:
        raise web.HTTPError(
            413,
            f"the request body is {size} bytes; this server accepts at most {limit} "
            "(c.PyTorchJobApp.api_max_body_size). Put large scripts on a PVC and give a command",
        )
    return load_json(handler.request.body or b"{}")


def json_object_body(handler: JupyterHandler) -> dict[str, Any]:
    """``read_json_body``, which must be a JSON object (``JobSpecInvalid`` on ``body``)."""
    body = read_json_body(handler)
    if not isinstance(body, dict):
        raise JobSpecInvalid([FieldError("body", msg("body_object"))])
    return body
