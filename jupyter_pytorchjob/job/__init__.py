"""The job model and everything derived from it, with no I/O.

* ``spec``        - ``JobSpec``: every field of the job form, validated.
* ``k8s_rules``   - the Kubernetes naming and quantity rules the spec checks.
* ``manifest``    - ``JobSpec`` -> ``kubeflow.org/v1`` PyTorchJob, and back.
* ``webhook``     - the Training Operator's admission rules the CRD schema lacks.
* ``environment`` - the env vars the operator injects into each replica.

The server, the CLI and the magic all go through this package; nothing else
builds manifests.
"""

from __future__ import annotations

from .errors import FieldError, JobSpecInvalid
from .manifest import build_manifest, manifest_to_yaml, parse_manifest
from .spec import JobSpec, PvcMount, Toleration

__all__ = [
    "FieldError",
    "JobSpec",
    "JobSpecInvalid",
    "PvcMount",
    "Toleration",
    "build_manifest",
    "manifest_to_yaml",
    "parse_manifest",
]
