"""Training runtimes as a runtime picker shows them (Trainer v2.3
``pkg/apis/trainer/v1alpha1/trainingruntime_types.go``): ClusterTrainingRuntimes serve
every namespace, a namespace's TrainingRuntimes override those of the same name there (as
the SDK's ``list_runtimes`` does). Pure: the backend reads the objects, this module says
what they offer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...job.messages import Message, coded_wire, msg
from .status import NODE

FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
SUPPORT_LABEL = "trainer.kubeflow.org/support"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
POLICIES = ("torch", "mpi", "jax", "xgboost", "flux")
INITIALIZERS = ("dataset-initializer", "model-initializer")


@dataclass
class Runtime:
    """One runtime a TrainJob can name in ``runtimeRef``."""

    name: str
    kind: str  # ClusterTrainingRuntime or TrainingRuntime
    framework: str | None  # torch, deepspeed, mlx, jax, xgboost, torchtune...
    deprecated: bool
    nodes: int  # mlPolicy.numNodes: the default node count
    image: str | None  # the node container's image
    policy: str | None  # which mlPolicy is set (torch, mpi...)
    replicated_jobs: list[str] = field(default_factory=list)  # the valid patch targets
    # Its dataset-/model-initializer jobs: only then may a job set --dataset/--model.
    initializers: list[str] = field(default_factory=list)
    # The node container's command: what runs when the job gives none (a torchtune
    # runtime's full `tune run ...`; the form shows it as the command's placeholder).
    command: list[str] = field(default_factory=list)

    @property
    def usable(self) -> Message | None:
        """Why this tool cannot submit to the runtime (None: it can). Our jobs start
        through torchrun, which only the torch policy sets up."""
        if self.policy != "torch":
            return msg("runtime_policy", policy=self.policy or "no")
        if NODE not in self.replicated_jobs:
            return msg("runtime_no_node", node=repr(NODE))
        return None

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "framework": self.framework,
            "deprecated": self.deprecated,
            "nodes": self.nodes,
            "image": self.image,
            "policy": self.policy,
            "replicatedJobs": list(self.replicated_jobs),
            "initializers": list(self.initializers),
            "command": list(self.command),
            **coded_wire("unusable", self.usable),
        }


def runtime_of(obj: Mapping[str, Any]) -> Runtime:
    """A ClusterTrainingRuntime or TrainingRuntime object, as the API returns it."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    spec = obj.get("spec") or {}
    ml = spec.get("mlPolicy") or {}
    nodes = ml.get("numNodes")
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    names = [str(j.get("name")) for j in jobs if isinstance(j, Mapping)]
    image, command = None, []
    for job in jobs:
        if isinstance(job, Mapping) and job.get("name") == NODE:
            pod = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get(
                "spec"
            ) or {}
            container: Mapping[str, Any] = next(
                (c for c in pod.get("containers") or [] if c.get("name") == NODE), {}
            )
            image = container.get("image")
            command = [str(w) for w in container.get("command") or []]
    return Runtime(
        name=str(meta.get("name", "")),
        kind=str(obj.get("kind", "")),
        framework=labels.get(FRAMEWORK_LABEL),
        deprecated=labels.get(SUPPORT_LABEL) == "deprecated",
        nodes=nodes if isinstance(nodes, int) and nodes >= 1 else 1,
        image=image,
        policy=next((p for p in POLICIES if p in ml), None),
        replicated_jobs=names,
        initializers=[n for n in names if n in INITIALIZERS],
        command=command,
    )


def available_runtimes(
    cluster: Iterable[Mapping[str, Any]], namespaced: Iterable[Mapping[str, Any]]
) -> list[Runtime]:
    """The runtimes a namespace can use, by name; a TrainingRuntime hides the
    ClusterTrainingRuntime of the same name."""
    by_name = {r.name: r for r in map(runtime_of, cluster)}
    by_name.update({r.name: r for r in map(runtime_of, namespaced)})
    return sorted(by_name.values(), key=lambda r: (r.deprecated, r.usable is not None, r.name))
