"""A fake Kubernetes API server for tests: ``await FakeKube.start()``, then point a
kubeconfig at it with ``fake.write_kubeconfig(path)``. See ``server.py`` for the hooks."""

from .operator import Operator
from .server import FakeKube, KubeError

__all__ = ["FakeKube", "KubeError", "Operator"]
