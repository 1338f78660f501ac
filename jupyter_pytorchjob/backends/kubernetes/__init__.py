"""The kubernetes backend: Kubeflow Training Operator v1 PyTorchJobs via kubernetes_asyncio.

* ``connection`` - config (in-cluster or kubeconfig), namespace, one ApiClient,
  and Kubernetes errors turned into messages a person can act on.
* ``status``     - job state from conditions, replica detail from pods (pure).
* ``logs``       - merged, resumable follow of every replica's ``pytorch`` container.
* ``backend``    - ``KubernetesBackend``, the ``Backend`` contract.
"""

from __future__ import annotations

from .backend import KubernetesBackend

__all__ = ["KubernetesBackend"]
