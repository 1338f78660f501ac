"""The job-kind contract: everything that depends on which Kubernetes object a job is.

A ``JobKind`` knows its API (group, version, plural: what the cluster must serve), turns
a ``JobSpec`` into its manifest and back, applies the admission rules its controller
adds to the CRD schema, finds a job's pods and names its replicas, and reads the job's
state from the object. The backends are written against this contract only, so a second
kind (Kubeflow Trainer v2's TrainJob) is one more implementation, not edits across the
backends. Pure: no I/O.

Reading a job's state needs only a kind's names and status code: each kind imports its
manifest code (and the job model's validation) in the methods that build, parse and
check manifests, so reading jobs (``ptjob list``) loads none of it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..job.errors import FieldError
from ..job.failure import NodeRun
from ..job.status import JobInfo
from .pods import FailedRun, first_failed_run, node_run

if TYPE_CHECKING:
    from ..job.spec import JobSpec


@dataclass(frozen=True)
class LocalNode:
    """One node of a job run as a local process: its replica name, its pod's hostname,
    and the env vars the platform's controllers give the pod's main container."""

    replica: str
    hostname: str
    env: dict[str, str]


class JobKind(ABC):
    """One kind of training job object (e.g. Kubeflow Training Operator v1's PyTorchJob)."""

    kind: str  # the object's ``kind``
    group: str
    version: str
    plural: str
    # The container whose logs are the replica's logs.
    container: str
    # The controller whose rules run this kind's pods, which the local backend plays:
    # "training-operator" (per replica type, ``runPolicy``) or "jobset" (one indexed Job
    # per TrainJob: in-place restarts up to its backoffLimit, then the job fails).
    controller: str
    # What installs the kind's CRD in a cluster, for messages saying it is missing.
    installed_by: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd(self) -> str:
        """The CRD's name, as ``kubectl get crd`` lists it."""
        return f"{self.plural}.{self.group}"

    def unsupported_fields(self) -> frozenset[str]:
        """The wire names of the ``JobSpec`` fields this kind cannot express (the form
        hides them)."""
        return frozenset()

    def supported_fields(self) -> list[str]:
        """The wire names of the ``JobSpec`` fields this kind can express."""
        from ..job.spec import JobSpec

        every = JobSpec(name="", image="").to_wire()  # the wire names, in the body's order
        unsupported = self.unsupported_fields()
        return [name for name in every if name not in unsupported]

    def to_wire(self) -> dict[str, Any]:
        """What ``GET config`` says of the kind: the form hides the fields it lacks."""
        return {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "fields": self.supported_fields(),
        }

    def owns(self, manifest: Mapping[str, Any]) -> bool:
        """Whether ``manifest`` is an object of this kind."""
        return manifest.get("apiVersion") == self.api_version and manifest.get("kind") == self.kind

    # -- manifests ----------------------------------------------------------------------

    @abstractmethod
    def build(self, spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
        """The manifest for ``spec``; ``JobSpecInvalid`` if its admission would refuse it."""

    @abstractmethod
    def parse(self, manifest: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
        """The ``JobSpec`` of a manifest, keeping whatever the fields do not express in
        ``extras`` (lossless); ``JobSpecInvalid`` naming the field otherwise."""

    @abstractmethod
    def check(self, manifest: Mapping[str, Any]) -> list[FieldError]:
        """The admission rules the CRD schema lacks (the controller's webhook)."""

    @abstractmethod
    def suspend_patch(self, suspend: bool) -> dict[str, Any]:
        """The merge patch that suspends (True) or resumes (False) a job of this kind."""

    @abstractmethod
    def max_name_length(self, spec: JobSpec) -> int:
        """The longest job name whose pods and Services the cluster can still create."""

    @abstractmethod
    def script_launcher(self, spec: JobSpec) -> str:
        """What starts a shipped script: ``python`` or ``torchrun``."""

    @abstractmethod
    def local_nodes(
        self, manifest: Mapping[str, Any], *, master_addr: str, master_port: int
    ) -> list[LocalNode]:
        """The nodes of ``manifest`` in rank order, each with the env its controller
        injects, its rendezvous at ``master_addr:master_port`` (a local run)."""

    # -- in a cluster -------------------------------------------------------------------

    @abstractmethod
    def pod_selector(self, name: str | None = None) -> str:
        """A label selector for the pods of job ``name`` (None: of every job of this kind)."""

    @abstractmethod
    def job_of_pod(self, pod: Mapping[str, Any]) -> str | None:
        """The name of the job a pod belongs to."""

    @abstractmethod
    def replica_of_pod(self, pod: Mapping[str, Any]) -> str:
        """The replica a pod runs, as the views name it (``master-0``, ``node-1``...)."""

    def container_of_pod(self, pod: Mapping[str, Any]) -> str:
        """The container whose log is the pod's replica's (``container`` for most)."""
        return self.container

    def event_sources(
        self, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
    ) -> dict[tuple[str, str], str]:
        """The objects whose events are the job's, by (``involvedObject`` kind, name), each
        with the name the views give it: the job itself and its pods (as replicas)."""
        name = str((job.get("metadata") or {}).get("name", ""))
        sources = {(self.kind, name): name}
        for pod in pods:
            sources[("Pod", str(pod["metadata"]["name"]))] = self.replica_of_pod(pod)
        return sources

    @abstractmethod
    def job_info(
        self,
        job: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        *,
        with_manifest: bool = False,
    ) -> JobInfo:
        """The job's state, replicas and conditions from its object and pods."""

    def failed_run(self, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> FailedRun:
        """Where a failed job's failure is: the replica that failed first and the pod and
        run whose log holds its output (``pods.first_failed_run``)."""
        return first_failed_run(
            job, pods, container_of=self.container_of_pod, replica_of=self.replica_of_pod
        )

    def node_runs(self, pods: Sequence[Mapping[str, Any]]) -> list[NodeRun]:
        """The training nodes' runs (``job.failure.waiting_for_peers`` judges them)."""
        return [
            node_run(pod, name=self.replica_of_pod(pod), container=self.container_of_pod(pod))
            for pod in pods
        ]

    @abstractmethod
    def missing_message(self) -> str:
        """What to tell a user whose cluster does not serve this kind."""
