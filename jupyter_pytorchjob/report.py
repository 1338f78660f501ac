"""``report``: tell whoever runs the job how far along it is (Kubeflow Trainer's status
protocol; locally the job's supervisor, in a cluster Trainer v2.3's status server).

The function below is self-contained (standard library only, its imports inside it):
copy it into an image that does not install jupyter-pytorchjob and it works the same.
"""

from __future__ import annotations

from typing import Any


def report(
    progress: float | None = None,
    eta: float | None = None,
    *,
    hparams: dict[str, Any] | None = None,
    checkpoint: str | None = None,
    artifact: str | None = None,
    name: str | None = None,
    mode: dict[str, str] | None = None,
    **metrics: Any,
) -> bool:
    """Report progress (percent, 0-100), the estimated seconds left and metrics
    (``loss=0.23``; ``step``/``epoch``/``total_steps``/``total_epochs`` are shown as the
    job's step and epoch) to ``$KUBEFLOW_TRAINER_SERVER_URL`` with the bearer token in
    the file ``$KUBEFLOW_TRAINER_SERVER_TOKEN`` names (``$KUBEFLOW_TRAINER_SERVER_CA_CERT``
    verifies an https server). Whether the report was accepted.

    What the run was (``GET jobs/{name}/run``, ``job.run()``, ``ptjob run``), printed on
    rank 0 as one ``ptjob-run {json}`` line - the log every job has, on every backend:
    ``hparams={"lr": 1e-3, ...}`` (its configuration, once; nested dicts become
    ``optim.lr``), ``checkpoint=PATH`` (a file or directory it saved: only the path
    travels, with the ``step`` and metrics of the same call and the time),
    ``artifact=PATH`` with ``name=`` (an output worth keeping; the name defaults to the
    file's), ``mode={"acc": "max"}`` (which way a metric is better, for compare).
    A line over 16 KiB is not printed (False).

    Silent and harmless: without the variables (not run as such a job), on any other
    rank than 0 (``$RANK``), within a second of the last report (unless ``progress`` is
    100) or on any error it does nothing and returns False; it never raises.
    """
    import json
    import os
    import ssl
    import time
    import urllib.request

    try:
        if os.environ.get("RANK", "0") != "0":
            return False
        run: dict[str, Any] = {}
        if hparams is not None:
            run["hparams"] = hparams
        if checkpoint is not None:
            scores = {
                k: v
                for k, v in metrics.items()
                if k != "step" and isinstance(v, int | float) and abs(v) < float("inf")
            }
            run["checkpoint"] = {
                "path": str(checkpoint),
                "step": metrics.get("step"),
                "time": time.time(),
                "metrics": scores,
            }
        if artifact is not None:
            run["artifact"] = {"path": str(artifact), "name": name, "time": time.time()}
        if mode is not None:
            run["mode"] = mode
        if run:
            line = "ptjob-run " + json.dumps(run, default=str, allow_nan=False)
            if len(line) > 16 * 1024:
                return False
            print(line, flush=True)
            if progress is None and eta is None and not metrics:
                return True
        url = os.environ.get("KUBEFLOW_TRAINER_SERVER_URL")
        token_file = os.environ.get("KUBEFLOW_TRAINER_SERVER_TOKEN")
        if not url or not token_file:
            return bool(run)
        now = time.monotonic()
        final = progress is not None and progress >= 100
        if now - getattr(report, "last", -1e9) < 1.0 and not final:
            return False  # at most one report a second (Kubeflow's SDK: one per 5 s)
        report.last = now  # type: ignore[attr-defined]
        status: dict[str, Any] = {
            "lastUpdatedTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        }
        if progress is not None:
            status["progressPercentage"] = max(0, min(100, int(progress)))
        if eta is not None:
            status["estimatedRemainingSeconds"] = max(0, int(eta))
        if metrics:
            status["metrics"] = [
                {"name": str(name)[:64], "value": f"{float(value):.6g}"}
                for name, value in list(metrics.items())[:256]
            ]
        with open(token_file) as f:  # noqa: PTH123 - no pathlib: fewer imports to copy
            token = f.read().strip()
        request = urllib.request.Request(  # noqa: S310 - the job's own status endpoint
            url,
            data=json.dumps({"trainerStatus": status}).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        )
        context = None
        if url.startswith("https:"):
            cafile = os.environ.get("KUBEFLOW_TRAINER_SERVER_CA_CERT") or None
            context = ssl.create_default_context(cafile=cafile)
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:  # noqa: S310
            return bool(200 <= answer.status < 300)
    except Exception:
        return False
