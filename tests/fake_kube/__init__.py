"""A fake Kubernetes cluster for tests: ``await FakeKube.start()``, then point a
kubeconfig at it with ``fake.write_kubeconfig(path)``.

One file per component it plays, each readable on its own:

- ``server.py``: the API server (``FakeKube``: routing, authentication and RBAC, storage,
  admission, watch, the test hooks); ``discovery.py`` its discovery documents and
  ``bodies.py`` how it decodes request bodies and patches;
- ``kubelet.py``: the kubelets (containers' states, restarts and back-off, logs, nodes);
- ``operator.py``: the Training Operator v1.9.4; ``trainer.py``: Kubeflow Trainer v2.3 with
  the JobSet and Job controllers; ``kueue.py``: Kueue's Workload;
- shared by them: ``api.py`` (resources, Status errors, streams), ``logs.py`` (a
  container run's log), ``schema.py`` (CRD structural schemas), ``selectors.py``.
"""

from .operator import Operator
from .server import FakeKube, KubeError

__all__ = ["FakeKube", "KubeError", "Operator"]
