"""Kubeflow Trainer v2.3's TrainJob (``trainer.kubeflow.org/v1alpha1``) on the
``torch-distributed`` runtime family.

* ``manifest`` - ``JobSpec`` -> TrainJob (trainer + our runtime patch), and back.
* ``rules``    - what admission and JobSet refuse that the CRD schema does not say.
* ``status``   - state from conditions and pods, nodes from JobSet's pod labels.
* ``environment`` - the torch plugin's ``PET_*`` env per node (the local backend's nodes).
* ``runtimes`` - the training runtimes a picker shows (``GET runtimes``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...job.failure import NodeRun
from ...job.status import JobInfo
from ..base import JobKind, LocalNode
from . import status

# The manifest code (``manifest``, ``rules``, ``environment``, ``runtimes``) is imported by
# the methods using it: reading a job's state needs only ``status`` (see ``kinds.base``).
if TYPE_CHECKING:
    from ...job.errors import FieldError
    from ...job.spec import JobSpec
    from .runtimes import Runtime


class TrainJobKind(JobKind):
    kind = status.KIND
    group = status.GROUP
    version = status.VERSION
    plural = "trainjobs"
    container = status.NODE
    controller = "jobset"
    installed_by = "Kubeflow Trainer v2"

    def unsupported_fields(self) -> frozenset[str]:
        from ..manifests import unexpressed
        from .manifest import PLACES

        return unexpressed(PLACES)

    def build(self, spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
        from .manifest import build_manifest

        return build_manifest(spec, namespace=namespace)

    def parse(self, manifest_: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
        from .manifest import parse_manifest

        return parse_manifest(manifest_, gpu_resource=gpu_resource)

    def check(self, manifest_: Mapping[str, Any]) -> list[FieldError]:
        from .rules import check_manifest

        return check_manifest(manifest_)

    def runtime_problems(self, manifest_: Mapping[str, Any], runtime: Runtime) -> list[FieldError]:
        """What the Trainer and JobSet refuse of ``manifest_`` on ``runtime`` that the
        manifest alone does not show: an initializer the runtime has no job for, a name too
        long for the runtime's replicated jobs (its initializers)."""
        from . import rules

        return [
            *rules.initializer_problems(manifest_, runtime.initializers, runtime.name),
            *rules.name_problems(manifest_, runtime.replicated_jobs),
        ]

    def suspend_patch(self, suspend: bool) -> dict[str, Any]:
        return {"spec": {"suspend": suspend}}

    def max_name_length(self, spec: JobSpec) -> int:
        from .rules import max_name_length

        return max_name_length(spec.nodes)

    def script_launcher(self, spec: JobSpec) -> str:
        from .manifest import SCRIPT_LAUNCHER

        return SCRIPT_LAUNCHER

    def local_nodes(
        self, manifest_: Mapping[str, Any], *, master_addr: str, master_port: int
    ) -> list[LocalNode]:
        from .environment import local_nodes

        return local_nodes(manifest_, master_addr=master_addr, master_port=master_port)

    def pod_selector(self, name: str | None = None) -> str:
        """The pods of the ``node`` job and of the initializer jobs (their own replicas,
        ``dataset-initializer-0``...), as the Kubeflow SDK's ``get_job`` selects them."""
        rjobs = f"{status.RJOB_LABEL} in ({','.join(status.REPLICATED_JOBS)})"
        return rjobs if name is None else f"{status.JOBSET_LABEL}={name},{rjobs}"

    def job_of_pod(self, pod: Mapping[str, Any]) -> str | None:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        job: str | None = labels.get(status.JOBSET_LABEL)
        return job

    def replica_of_pod(self, pod: Mapping[str, Any]) -> str:
        return status.replica_name(pod)

    def container_of_pod(self, pod: Mapping[str, Any]) -> str:
        """An initializer's container is named as its replicated job (the runtime webhook
        requires it), a node's is ``node``."""
        return status.replicated_job(pod)

    def node_runs(self, pods: Sequence[Mapping[str, Any]]) -> list[NodeRun]:
        """The ``node`` job's pods only: the initializers are done before, no peers."""
        return super().node_runs([p for p in pods if status.replicated_job(p) == status.NODE])

    def event_sources(
        self, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
    ) -> dict[tuple[str, str], str]:
        """Also the JobSet the Trainer makes (same name) and its Jobs: most of what goes
        wrong between a TrainJob and its pods is told there."""
        sources = super().event_sources(job, pods)
        sources.update(status.child_sources(job, pods))
        return sources

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
            f"this cluster does not serve TrainJobs (the CRD {self.crd} of Kubeflow Trainer "
            "v2 is not installed)"
        )


TRAINJOB = TrainJobKind()
