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

from ..base import BackendError, JobExists, JobNotFound

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
CRD_MISSING_MESSAGE = "the server could not find the requested resource"


class CrdMissing(BackendError):
    """The cluster does not serve pytorchjobs.kubeflow.org."""

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
    try:
        await config.load_kube_config(config_file=path, client_configuration=configuration)
        _, active = config.list_kube_config_contexts(config_file=path)
    except (config.ConfigException, OSError, TypeError) as err:
        raise BackendError(
            f"no Kubernetes configuration: not in a pod, and the kubeconfig {path} cannot be "
            f"used ({err}). Set KUBECONFIG, or use the local backend",
            status=503,
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
    err: Exception, *, what: str, namespace: str, name: str | None = None
) -> BackendError:
    """A Kubernetes or network error as a message a person can act on.

    ``what`` says what was being done ("create the job", "read pod logs").
    """
    if isinstance(err, ApiException):
        body = status_body(err)
        message = body.get("message") or err.reason or "no details"
        code = err.status or 500
        if code == 401:
            return BackendError(
                f"the Kubernetes API refused our credentials (401 Unauthorized) while trying to "
                f"{what}; the token may have expired - log in again or refresh the kubeconfig",
                status=401,
            )
        if code == 403:
            return BackendError(
                f"not allowed to {what} in namespace {namespace!r}: {message}. Ask an "
                "administrator for the missing permission (the Kubeflow 'kubeflow-edit' role "
                "covers pytorchjobs, pods/log and events)",
                status=403,
            )
        if code == 404:
            if message == CRD_MISSING_MESSAGE or not body.get("details"):
                return CrdMissing(crd_missing_message())
            if name is not None:
                return JobNotFound(name)
            return BackendError(message, status=404)
        if code == 409 and name is not None and body.get("reason") == "AlreadyExists":
            return JobExists(name)
        if code == 422:
            return BackendError(f"the API server rejected the job: {message}", status=400)
        if code == 429 or code >= 500:
            return BackendError(
                f"the Kubernetes API is unavailable or overloaded (HTTP {code}: {message}) "
                f"while trying to {what}; try again in a moment",
                status=503,
            )
        return BackendError(f"could not {what}: {message} (HTTP {code})", status=code)
    if isinstance(err, TimeoutError | aiohttp.ServerTimeoutError):
        return BackendError(
            f"the Kubernetes API did not answer in time while trying to {what}", status=504
        )
    if isinstance(err, aiohttp.ClientError | OSError):
        return BackendError(
            f"cannot reach the Kubernetes API to {what}: {err}. Check the network or the "
            "cluster address in the kubeconfig",
            status=503,
        )
    return BackendError(f"could not {what}: {err}")


def crd_missing_message() -> str:
    return (
        "this cluster does not serve PyTorchJobs (the CRD pytorchjobs.kubeflow.org of the "
        "Kubeflow Training Operator v1 is not installed). Recent Kubeflow releases install "
        "Trainer v2 (TrainJob) instead; ask your administrator to install Training Operator "
        "v1.9, or use the local backend"
    )
