"""Jupyter server configuration for the Galata tests.

``configure_jupyter_server`` serves without a token and without XSRF checks;
the auth and XSRF behaviour is tested with pytest instead. The port comes from
``PTJOB_UI_PORT`` (default 8888). The server's root is the repository's
``examples/`` (the jobs run its scripts), and the local backend keeps its jobs
and volumes in a fresh temporary directory.
"""

import os
import tempfile
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

c = get_config()  # type: ignore[name-defined] # noqa: F821

configure_jupyter_server(c)
c.ServerApp.port = int(os.environ.get("PTJOB_UI_PORT", "8888"))
c.ServerApp.port_retries = 0
# Test containers run as root, where Jupyter refuses to start without this.
c.ServerApp.allow_root = True
c.ServerApp.root_dir = str(Path(__file__).resolve().parent.parent / "examples")
# Jobs run as processes on this machine; no Kubernetes cluster needed.
c.PyTorchJobApp.backend = "local"
_state = tempfile.mkdtemp(prefix="ptjob-ui-tests-")
c.PyTorchJobApp.local_root = os.path.join(_state, "jobs")
c.PyTorchJobApp.volume_root = os.path.join(_state, "volumes")
