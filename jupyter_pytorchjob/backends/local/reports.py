"""Kubeflow Trainer's status protocol (KEP-2779), served to a local job's own processes.

In a cluster, Trainer v2.3 (gate ``TrainJobStatus``) gives each trainer container
``KUBEFLOW_TRAINER_SERVER_URL``, ``..._TOKEN`` (the path of a token file) and
``..._CA_CERT`` (the path of the CA that signed the server's certificate); the script
POSTs ``{"trainerStatus": {...}}`` (at most 64 KiB) with ``Authorization: Bearer
<token>``. Locally the job's supervisor serves the same protocol, so a script written
for such a cluster shows its progress here unchanged:

* Where: in the supervisor, not the Jupyter server - the supervisor lives exactly as long
  as the job, also when it was submitted with ``ptjob submit`` from a terminal and no
  Jupyter server runs, and it already owns the job's files (one writer).
* The URL is plain HTTP on 127.0.0.1 (a free port per job): nothing leaves the machine.
* The token: 32 random bytes in ``<job dir>/report-token``, mode 0600 in the job's own
  directory, made when the supervisor starts; each job has its own, so a job can report
  only its own progress (a report without it is 403). Processes of the same user can
  read the user's files anyway; the token keeps jobs apart, not users.
* ``KUBEFLOW_TRAINER_SERVER_CA_CERT``: there is no TLS on loopback, so there is no CA of
  ours; the variable names the system's CA bundle (``ssl``'s default verify file), so a
  script that loads it (``ssl.create_default_context(cafile=...)``, ``requests``'
  ``verify=``) works unchanged, and an ``http://`` URL never uses it. Our reporter
  (``jupyter_pytorchjob.report``) uses it only for an ``https://`` URL.

Answers, as Trainer's status server: 200 with the body echoed; a ``metav1.Status`` with
400 (not JSON or nested too deep, not ``{"trainerStatus": {...}}``, a field out of range -
the message names it; larger than 64 KiB; past 1 MiB the connection is closed instead), 403 (no
or another token), 404 (another path), 405.
A bad report changes nothing.
"""

from __future__ import annotations

import hmac
import os
import secrets
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tornado import httpserver, netutil, web

from ...job.errors import JobSpecInvalid
from ...job.progress import (
    ProgressReading,
    ProgressSource,
    TrainerStatusInvalid,
    reading_from_trainer_status,
)
from ...job.shape import load_json
from .store import JobDir

URL_ENV = "KUBEFLOW_TRAINER_SERVER_URL"
TOKEN_ENV = "KUBEFLOW_TRAINER_SERVER_TOKEN"  # noqa: S105 - a variable's name
CA_ENV = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
MAX_BODY = 64 * 1024  # the status server's limit
READ_LIMIT = 1 << 20


def token_path(jobdir: JobDir) -> str:
    return str(jobdir.path / "report-token")


def status_path(name: str) -> str:
    """Trainer's path for a job's status (namespace ``default``, as local jobs' texts)."""
    return f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/{name}/status"


def system_ca_bundle() -> str:
    """The CA bundle ``ssl`` verifies with by default, if there is one ("" if not)."""
    paths = ssl.get_default_verify_paths()
    return paths.cafile or paths.openssl_cafile or ""


def write_token(jobdir: JobDir) -> str:
    """A new token in the job's token file (0600); the token."""
    token = secrets.token_hex(32)
    path = token_path(jobdir)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, token.encode())
    finally:
        os.close(fd)
    Path(tmp).replace(path)
    return token


def metav1_status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class StatusHandler(web.RequestHandler):
    """``POST <status path>``: one report."""

    def initialize(self, token: str, on_report: Callable[[ProgressReading], None]) -> None:
        self.token = token
        self.on_report = on_report

    def check_xsrf_cookie(self) -> None:
        """A bearer token, not a cookie, authenticates a report."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Tornado's own refusals (405, 500) as a ``metav1.Status`` too."""
        reason = "MethodNotAllowed" if status_code == 405 else "InternalError"
        self.finish(metav1_status(status_code, reason, self._reason))

    def post(self) -> None:
        header = self.request.headers.get("Authorization", "")
        given = header[len("Bearer ") :] if header.startswith("Bearer ") else ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            self._refuse(403, "Forbidden", "no valid bearer token for this job")
            return
        if len(self.request.body) > MAX_BODY:
            self._refuse(400, "BadRequest", f"the body is larger than {MAX_BODY} bytes")
            return
        try:
            # Bounded depth: json.loads alone recursed out on '[' x 60000 (a 500).
            body = load_json(self.request.body, what="the_body")
        except JobSpecInvalid as err:
            self._refuse(400, "BadRequest", err.errors[0].message)
            return
        if not isinstance(body, dict) or set(body) != {"trainerStatus"}:
            self._refuse(400, "BadRequest", 'the body must be {"trainerStatus": {...}}')
            return
        try:
            reading = reading_from_trainer_status(
                body["trainerStatus"], ProgressSource.REPORT, time.time()
            )
        except TrainerStatusInvalid as err:
            self._refuse(400, "BadRequest", str(err))
            return
        self.on_report(reading)
        self.finish(body)

    def _refuse(self, code: int, reason: str, message: str) -> None:
        self.set_status(code)
        self.finish(metav1_status(code, reason, message))


class ReportServer:
    """The job's status endpoint on 127.0.0.1; ``env`` is what its processes get."""

    def __init__(self, jobdir: JobDir, on_report: Callable[[ProgressReading], None]) -> None:
        self.jobdir = jobdir
        self.on_report = on_report
        self.server: httpserver.HTTPServer | None = None
        self.env: dict[str, str] = {}

    def start(self) -> dict[str, str]:
        token = write_token(self.jobdir)
        path = status_path(self.jobdir.name)
        app = web.Application(
            [(path, StatusHandler, {"token": token, "on_report": self.on_report})],
            default_handler_class=web.ErrorHandler,
            default_handler_args={"status_code": 404},
        )
        # Up to READ_LIMIT is read and answered 400 when over MAX_BODY; a larger body
        # is cut off while it is sent (tornado closes the connection).
        self.server = httpserver.HTTPServer(app, max_body_size=READ_LIMIT, xheaders=False)
        sockets = netutil.bind_sockets(0, "127.0.0.1")
        self.server.add_sockets(sockets)
        port = sockets[0].getsockname()[1]
        self.env = {
            URL_ENV: f"http://127.0.0.1:{port}{path}",
            TOKEN_ENV: token_path(self.jobdir),
            CA_ENV: system_ca_bundle(),
        }
        return self.env

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
