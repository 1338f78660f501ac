"""Reaching the cluster: configuration, namespace, one ApiClient, readable errors.

In a pod (``KUBERNETES_SERVICE_HOST`` set) the service account's in-cluster config
and namespace are used; elsewhere the kubeconfig (``$KUBECONFIG`` honoured) and
its current context's namespace. One ``ApiClient`` serves every call of a
backend, on the caller's event loop (kubernetes_asyncio is native asyncio).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from ...job.messages import msg
from ..base import BackendError, JobExists, JobNotFound

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
CRD_MISSING_MESSAGE = "the server could not find the requested resource"
# What the API server's mux answers (plain text) for a path no API group serves.
PAGE_NOT_FOUND = "404 page not found"
# Short enough for a panel refresh: a server that accepts TCP but never finishes TLS
# would otherwise hold a request for aiohttp's 60 s TLS handshake timeout.
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_REQUEST_TIMEOUT = 30.0


class TimedApiClient(client.ApiClient):
    """An ``ApiClient`` whose every request has a connect and a read timeout unless
    the call names its own (a followed log reads without one)."""

    def __init__(
        self,
        configuration: client.Configuration,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        super().__init__(configuration=configuration)
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.default_timeout = aiohttp.ClientTimeout(
            connect=connect_timeout, sock_connect=connect_timeout, sock_read=request_timeout
        )

    @property
    def stream_timeout(self) -> aiohttp.ClientTimeout:
        """For responses that may stay quiet for long (log follow): connect only."""
        return aiohttp.ClientTimeout(
            connect=self.connect_timeout, sock_connect=self.connect_timeout
        )

    async def request(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("_request_timeout") is None:
            kwargs["_request_timeout"] = self.default_timeout
        return await super().request(*args, **kwargs)


class CrdMissing(BackendError):
    """The cluster does not serve the job kind asked for (its CRD is not installed)."""

    status = 404


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


async def load_configuration() -> tuple[client.Configuration, str | None]:
    """The client configuration and the namespace it implies (None: unknown)."""
    configuration = client.Configuration()
    if in_cluster():
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        try:
            namespace: str | None = SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
        except OSError:
            namespace = None
        return configuration, namespace
    # KUBE_CONFIG_DEFAULT_LOCATION is read at import time; read $KUBECONFIG now.
    path = os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())
    # $KUBECONFIG may list several files; the client merges those that exist, and with
    # none it logs a stray "Config not found" line and blames the (empty) content.
    if not any(Path(p).expanduser().is_file() for p in path.split(os.pathsep) if p):
        raise BackendError(msg("k8s_no_kubeconfig", path=path), status=503)
    try:
        await config.load_kube_config(config_file=path, client_configuration=configuration)
        _, active = config.list_kube_config_contexts(config_file=path)
    except (config.ConfigException, OSError, TypeError) as err:
        raise BackendError(
            msg("k8s_bad_kubeconfig", path=path, error=str(err)), status=503
        ) from err
    namespace = ((active or {}).get("context") or {}).get("namespace")
    return configuration, namespace


def status_body(err: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(err.body or "{}")
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def translate(
    err: Exception,
    *,
    what: str,
    namespace: str | None,
    name: str | None = None,
    server: str | None = None,
    timeout: float | None = None,
    missing_crd: str = "the cluster does not serve this kind of job (its CRD is not installed)",
    change: bool = False,
) -> BackendError:
    """A Kubernetes or network error as a message a person can act on.

    ``what`` says what was being done ("create the job", "read pod logs"); ``change``:
    it was an edit of an existing job, which the API server's CEL rules (immutable
    fields) or a webhook may refuse - said as the refused edit, with the server's words
    (they name the field: ``spec.trainer: Invalid value: "object": field is immutable``);
    ``server`` and ``timeout`` name the API server and the time it had;
    ``missing_crd`` is the message when the API answers that the kind is not served;
    ``namespace`` None: the request was for cluster-scoped objects.
    """
    where = f" at {server}" if server else ""
    if isinstance(err, ApiException):
        body = status_body(err)
        raw = err.body.decode(errors="replace") if isinstance(err.body, bytes) else err.body
        plain = str(raw or "").strip() if not body else ""
        message = str(body.get("message") or plain or err.reason or "no details")
        code = err.status or 500
        if code == 401:
            return BackendError(msg("k8s_unauthorized", what=what), status=401)
        if change and (code == 422 or (code == 403 and "denied the request" in message)):
            return BackendError(msg("k8s_refused_change", what=what, message=message), status=400)
        if code == 403 and "denied the request" in message:
            # A validating webhook built on controller-runtime (the Trainer's, JobSet's)
            # refuses with 403, not 422: the job is wrong, not the user's permissions.
            return BackendError(msg("k8s_refused_job", message=message), status=400)
        if code == 403 and namespace is None:
            return BackendError(
                msg("k8s_forbidden_cluster", what=what, message=message), status=403
            )
        if code == 403:
            forbidden = msg("k8s_forbidden", what=what, namespace=repr(namespace), message=message)
            return BackendError(forbidden, status=403)
        if code == 404:
            details = body.get("details") or {}
            if details.get("kind") == "namespaces":
                missing = repr(details.get("name") or namespace)
                return BackendError(
                    msg("k8s_no_namespace", namespace=missing, message=message), status=404
                )
            if message in (CRD_MISSING_MESSAGE, PAGE_NOT_FOUND) or not details:
                return CrdMissing(missing_crd)
            if name is not None:
                return JobNotFound(name)
            return BackendError(message, status=404)
        if code == 409 and name is not None and body.get("reason") == "AlreadyExists":
            return JobExists(name)
        if code == 422:
            return BackendError(msg("k8s_rejected", message=message), status=400)
        if code == 429 or code >= 500:
            unavailable = msg("k8s_unavailable", status=code, message=message, what=what)
            return BackendError(unavailable, status=503)
        return BackendError(msg("k8s_failed", what=what, message=message, status=code), status=code)
    if isinstance(err, TimeoutError | aiohttp.ServerTimeoutError):
        if server and timeout:
            late = msg("k8s_timeout", server=server, seconds=f"{timeout:g}", what=what)
            return BackendError(late, status=504)
        within = f" within {timeout:g} s" if timeout else " in time"
        return BackendError(
            f"the Kubernetes API server{where} did not answer{within} while trying to {what}; "
            "it may be overloaded or unreachable behind a proxy - try again, or raise "
            "PyTorchJobApp.kubernetes_connect_timeout / kubernetes_request_timeout",
            status=504,
        )
    if isinstance(err, aiohttp.ClientError | OSError):
        if server:
            out_of_reach = msg("k8s_unreachable", server=server, what=what, error=str(err))
            return BackendError(out_of_reach, status=503)
        return BackendError(
            f"cannot reach the Kubernetes API server{where} to {what}: {err}. Check the "
            "network or the cluster address in the kubeconfig",
            status=503,
        )
    return BackendError(msg("k8s_error", what=what, error=str(err)))
