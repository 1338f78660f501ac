"""The kubernetes backend: every job kind the cluster serves (PyTorchJob, TrainJob), via
kubernetes_asyncio; each kind's manifests and state live in ``kinds/``.

* ``connection`` - config (in-cluster or kubeconfig), namespace, one ApiClient,
  and Kubernetes errors turned into messages a person can act on.
* ``discovery``  - the notebook's own pod: its image, PVC mounts, log directory mapping.
* ``pruning``    - which fields of a manifest the API server dropped (a dry run).
* ``logs``       - merged, resumable follow of every replica's log.
* ``waiting``    - ``WaitingReader``: why jobs wait (Kueue's verdict, FailedMount, the
  controller's Warning events of a job not made).
* ``failure``    - ``FailureReader``: a failed job's summary, read once, kept as an annotation.
* ``progress``   - ``ProgressWatcher``: progress from the chief pod's log and event files
  of the jobs a read tracks; ``ProgressReads``: those reads through the API and the PVC.
* ``backend``    - ``KubernetesBackend``, the ``Backend`` contract.
"""

from __future__ import annotations

from .backend import KubernetesBackend

__all__ = ["KubernetesBackend"]
