"""Jupyter server configuration for the Galata tests on the kubernetes backend.

Starts the project's fake Kubernetes API (``tests/fake_kube``, operator
simulation on) on ``PTJOB_FAKE_KUBE_PORT`` and points the kubernetes backend at
it through a real kubeconfig. The server listens on ``PTJOB_UI_KUBE_PORT``.
"""

import atexit
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

c = get_config()  # type: ignore[name-defined] # noqa: F821

REPO = Path(__file__).resolve().parent.parent
_state = Path(tempfile.mkdtemp(prefix="ptjob-ui-kube-"))
_kubeconfig = _state / "kubeconfig"
_port = os.environ.get("PTJOB_FAKE_KUBE_PORT", "8898")
_fake = subprocess.Popen(  # noqa: S603 - our own test server, fixed arguments
    [
        sys.executable,
        "-m",
        "tests.fake_kube",
        "--port",
        _port,
        "--operator",
        "--kubeconfig",
        str(_kubeconfig),
    ],
    cwd=REPO,
)
atexit.register(_fake.terminate)
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{_port}/version", timeout=1)  # noqa: S310
        break
    except OSError:
        time.sleep(0.1)
os.environ["KUBECONFIG"] = str(_kubeconfig)
os.environ.pop("KUBERNETES_SERVICE_HOST", None)

configure_jupyter_server(c)
c.ServerApp.port = int(os.environ.get("PTJOB_UI_KUBE_PORT", "8899"))
c.ServerApp.port_retries = 0
c.ServerApp.allow_root = True
c.ServerApp.root_dir = str(REPO / "examples")
c.PyTorchJobApp.backend = "kubernetes"
