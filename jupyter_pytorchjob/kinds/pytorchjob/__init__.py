"""Kubeflow Training Operator v1's PyTorchJob (``kubeflow.org/v1``), as v1.9.4 runs it.

* ``manifest``    - ``JobSpec`` -> PyTorchJob, and back (lossless, ``extras``).
* ``webhook``     - the operator's admission rules the CRD schema lacks.
* ``environment`` - the env vars the operator injects per replica (the local backend
  gives each node process the same).
* ``status``      - state from the operator's conditions, replicas from its pod labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...job.status import JobInfo
from ..base import JobKind, LocalNode
from . import status

# The manifest code (``manifest``, ``webhook``, ``environment``) is imported by the
# methods using it: reading a job's state needs only ``status`` (see ``kinds.base``).
if TYPE_CHECKING:
    from ...job.errors import FieldError
    from ...job.spec import JobSpec


class PyTorchJobKind(JobKind):
    kind = "PyTorchJob"
    group = status.GROUP
    version = status.VERSION
    plural = status.PLURAL
    container = status.CONTAINER
    controller = "training-operator"
    installed_by = "Kubeflow Training Operator v1"

    def unsupported_fields(self) -> frozenset[str]:
        from ..manifests import unexpressed
        from .manifest import PLACES

        return unexpressed(PLACES)

    def build(self, spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
        from .manifest import build_manifest

        return build_manifest(spec, namespace=namespace)

    def parse(self, manifest: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
        from .manifest import parse_manifest

        return parse_manifest(manifest, gpu_resource=gpu_resource)

    def check(self, manifest: Mapping[str, Any]) -> list[FieldError]:
        from .webhook import check_manifest

        return check_manifest(manifest)

    def suspend_patch(self, suspend: bool) -> dict[str, Any]:
        return {"spec": {"runPolicy": {"suspend": suspend}}}

    def max_name_length(self, spec: JobSpec) -> int:
        from ...job.spec import max_name_length

        return max_name_length(spec.nodes, master=spec.master)

    def script_launcher(self, spec: JobSpec) -> str:
        from .manifest import script_launcher

        return script_launcher(spec)

    def local_nodes(
        self, manifest: Mapping[str, Any], *, master_addr: str, master_port: int
    ) -> list[LocalNode]:
        """The Master (if any), then the Workers, with the operator's env
        (``environment.replica_env``); a pod's hostname is its name."""
        from .environment import replica_env

        name = manifest["metadata"]["name"]
        nodes = []
        for rtype, rspec in sorted(
            manifest["spec"]["pytorchReplicaSpecs"].items(), key=lambda r: r[0] != "Master"
        ):
            count = 1 if rspec.get("replicas") is None else int(rspec["replicas"])
            for index in range(count):
                replica = f"{rtype.lower()}-{index}"
                env = replica_env(
                    manifest, rtype, index, master_addr=master_addr, master_port=master_port
                )
                nodes.append(LocalNode(replica, f"{name}-{replica}", env))
        return nodes

    def pod_selector(self, name: str | None = None) -> str:
        return status.JOB_LABEL if name is None else f"{status.JOB_LABEL}={name}"

    def job_of_pod(self, pod: Mapping[str, Any]) -> str | None:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        job: str | None = labels.get(status.JOB_LABEL)
        return job

    def replica_of_pod(self, pod: Mapping[str, Any]) -> str:
        return status.replica_name(pod)

    def job_info(
        self,
        job: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        *,
        with_manifest: bool = False,
    ) -> JobInfo:
        return status.job_info(job, pods, with_manifest=with_manifest)

    def missing_message(self) -> str:
        return (
            f"this cluster does not serve PyTorchJobs (the CRD {self.crd} of the Kubeflow "
            "Training Operator v1 is not installed). Recent Kubeflow releases install "
            "Trainer v2 (TrainJob) instead; ask your administrator to install Training "
            "Operator v1.9, or use the local backend"
        )


PYTORCHJOB = PyTorchJobKind()
