"""Jupyter server configuration for the Galata tests.

``configure_jupyter_server`` serves on port 8888 without a token and without
XSRF checks, in a temporary root directory; the auth and XSRF behaviour is
tested with pytest instead.
"""

from jupyterlab.galata import configure_jupyter_server

c = get_config()  # type: ignore[name-defined] # noqa: F821

configure_jupyter_server(c)
# Test containers run as root, where Jupyter refuses to start without this.
c.ServerApp.allow_root = True
# Jobs run as processes on this machine; no Kubernetes cluster needed.
c.PyTorchJobApp.backend = "local"
