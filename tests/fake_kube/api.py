"""The Kubernetes API's vocabulary every component of the fake speaks: the resources
it serves (group, version, kind, plural, scope), the ``metav1.Status`` errors it answers
with, the query values it parses as Go does, and the open streams (watches, log follows).

Written from k8s.io/apimachinery (``pkg/api/errors``, ``pkg/apis/meta/v1/types.go``
``StatusReason*``) and the API server's behaviour in ``shared/notes/fake-kube.md``;
the API server (``server.py``), the kubelet (``kubelet.py``) and the controllers
(``operator.py``, ``trainer.py``, ``kueue.py``) import it, it imports none of them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from aiohttp import web


class Resource(NamedTuple):
    group: str
    version: str
    kind: str
    plural: str
    returns_deleted: bool = False  # pods' registry returns the object, CRs a Status
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES = {
    "pytorchjobs": Resource("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
    "pods": Resource("", "v1", "Pod", "pods", True),
    "services": Resource("", "v1", "Service", "services", True),
    "persistentvolumeclaims": Resource(
        "", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True
    ),
    "events": Resource("", "v1", "Event", "events"),
    "configmaps": Resource("", "v1", "ConfigMap", "configmaps", True),
    # Kubeflow Trainer v2.3.0 (trainjob.md §1, §8) and what its controller creates (§4).
    "trainjobs": Resource("trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs"),
    "trainingruntimes": Resource(
        "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes"
    ),
    "clustertrainingruntimes": Resource(
        "trainer.kubeflow.org",
        "v1alpha1",
        "ClusterTrainingRuntime",
        "clustertrainingruntimes",
        namespaced=False,
    ),
    "jobsets": Resource("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"),
    "jobs": Resource("batch", "v1", "Job", "jobs"),
    # Read only (the NamespaceLifecycle facts the clients see): ``namespaces`` / ``add_namespace``.
    "namespaces": Resource("", "v1", "Namespace", "namespaces", namespaced=False),
    # Kueue v0.14.4's Workload (apis/kueue/v1beta1/workload_types.go), as kueue.py plays it.
    "workloads": Resource("kueue.x-k8s.io", "v1beta1", "Workload", "workloads"),
}
# The job kinds a cluster can serve, and the API groups each brings (Trainer installs
# JobSet with it, trainjob.md §4).
KINDS = {"pytorchjob": ("kubeflow.org",), "trainjob": ("trainer.kubeflow.org", "jobset.x-k8s.io")}
# The API groups a CRD brings: absent from discovery and routing while not installed.
CRD_GROUPS = {group for groups in KINDS.values() for group in groups} | {"kueue.x-k8s.io"}
# Custom resources with a status subresource (a write to the main resource keeps status).
STATUS_SUBRESOURCE = {"pytorchjobs", "trainjobs", "jobsets", "workloads"}
BY_KIND = {r.kind: name for name, r in RESOURCES.items()}
_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class KubeError(Exception):
    """Answered as a ``metav1.Status`` with ``code`` as the HTTP status."""

    def __init__(
        self, code: int, message: str, reason: str | None = None, details: Any = None
    ) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        # "" is StatusReasonUnknown (omitted from the body, as omitempty does).
        self.reason = _REASONS.get(code, "Unknown") if reason is None else reason
        self.details = details
        self.headers: dict[str, str] = {}

    def body(self) -> dict[str, Any]:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        body |= {"message": self.message}
        if self.reason:
            body["reason"] = self.reason
        body["code"] = self.code
        if self.details is not None:
            body["details"] = self.details
        return body

    def response(self) -> web.Response:
        return web.json_response(self.body(), status=self.code, headers=self.headers)


class PageNotFound(Exception):
    """No API group serves the path: the server's mux answers ``404 page not found`` as
    plain text (also for a CRD's paths once the CRD is gone)."""


def status_details(
    res: Resource, name: str | None = None, kind: str | None = None
) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if res.group:
        details["group"] = res.group
    details["kind"] = kind or res.plural
    return details


def not_found(res: Resource, name: str) -> KubeError:
    return KubeError(404, f'{res.qualified} "{name}" not found', details=status_details(res, name))


def invalid(res: Resource, name: str, errors: list[tuple[str, str]]) -> KubeError:
    texts = [f"{f}: {m}" for f, m in errors]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{res.kind}.{res.group}" if res.group else res.kind
    details = status_details(res, name, kind=res.kind)
    details["causes"] = [
        {"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in errors
    ]
    return KubeError(422, f'{qualified} "{name}" is invalid: {joined}', details=details)


def parse_bool(value: str | None, name: str = "value") -> bool:
    """Go ``strconv.ParseBool``."""
    if value is None or value == "":
        return False
    if value in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if value in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise KubeError(400, f'strconv.ParseBool: parsing "{value}": invalid syntax')


def int_param(query: Mapping[str, str], name: str) -> int | None:
    """An integer query parameter as Go's ``strconv.ParseInt`` reads it (absent: None)."""
    if name not in query or query[name] == "":
        return None
    try:
        return int(query[name])
    except ValueError:
        raise KubeError(400, f'strconv.ParseInt: parsing "{query[name]}": invalid syntax') from None


@dataclass(eq=False)
class Stream:
    """An open watch or log-follow response."""

    request: web.Request
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    queue: deque[tuple[str, dict[str, Any], dict[str, Any] | None]] = field(default_factory=deque)
    resource: str = ""
    namespace: str | None = None
    dropped: bool = False
    closing: bool = False


def abort(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """End a stream the way a dropped connection does (no final chunk)."""
    if request.transport is not None:
        request.transport.abort()
    return resp
