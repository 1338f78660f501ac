"""``JobSpec`` -> Kubeflow Trainer v2.3 ``TrainJob`` (``trainer.kubeflow.org/v1alpha1``),
and the way back.

The job runs on a training runtime (``runtimeRef``, default the shipped
ClusterTrainingRuntime ``torch-distributed``, whose one replicated job and container are
both named ``node``). The form's fields go where v2.3 takes them:

* image, command/args, env, nodes (``numNodes``), processes per node (``numProcPerNode``,
  an integer since v2.2) and per-node resources (``resourcesPerNode``) into ``trainer``;
  an image or process count the user did not give is left out, so the runtime decides;
* PVCs, the memory-backed ``/dev/shm``, node selector, tolerations and pod labels and
  annotations into one ``runtimePatches`` entry of our own manager, aimed at the ``node``
  replicated job (a container patch may only add env, mounts and a security context, so
  the volumes go on the pod and the mounts on container ``node``);
* ``dataset``/``model`` -> ``initializer.dataset|model.storageUri`` (the runtime's
  initializer jobs download them), ``datasetSecret``/``modelSecret`` -> their
  ``secretRef.name`` (credentials as env); their ``env`` is kept in ``extras``;
* a ``tune run K=V...`` command (torchtune runtimes) -> ``command: [tune, run]`` and the
  overrides as ``args``, which the torch plugin completes with the recipe and config;
* ``deadline`` -> ``activeDeadlineSeconds``; the Kueue queue and the logdir as on a
  PyTorchJob (a label and an annotation).

The runtime sets no ``PYTHONUNBUFFERED`` (v1's operator did), so the builder sets it:
logs arrive as they are written. A script travels as on a PyTorchJob (``PTJOB_SCRIPT`` and
the bootstrap) and always starts through ``torchrun``: the runtime injects only the
``PET_*`` variables torchrun reads. What a TrainJob cannot express (a Master, restart and
clean-up policies, TTL, a working directory) is refused by name when it differs from the
default (``PLACES``).

``parse_manifest`` reads any TrainJob back, keeping what the fields do not express (another
runtime, initializers, other managers' patches...) in ``extras``, so
``build_manifest(parse_manifest(m))`` gives back every field of ``m``. The image and the
process count stay unset when ``m`` leaves them to the runtime (so a round trip changes
nothing that runs); the node count is written out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...job.errors import FieldError, JobSpecInvalid
from ...job.messages import msg
from ...job.shape import manifest_shape_errors
from ...job.spec import (
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_CLEAN_POD_POLICY,
    DEFAULT_RESTART_POLICY,
    JobSpec,
)
from ..manifests import (
    ISTIO_INJECT,
    NODE_SELECTOR,
    NOTHING,
    TOLERATIONS,
    Bespoke,
    CannotExpress,
    Place,
    PodSpecKey,
    archive_field,
    cannot_express,
    clean_metadata,
    entrypoint,
    gpu_count,
    gpu_key,
    job_metadata,
    merge,
    patch,
    quantity_text,
    read_entrypoint,
    read_metadata,
    read_mounts,
    read_pod_fields,
    require_kind,
    resources,
    volumes_and_mounts,
    write_pod_fields,
)
from .rules import TUNE_RUN, check_manifest, sdk_limits_problem
from .status import GROUP, KIND, NODE, VERSION

API_VERSION = f"{GROUP}/{VERSION}"
DEFAULT_RUNTIME = "torch-distributed"
RUNTIME_KIND = "ClusterTrainingRuntime"
# Our runtime patch: a domain-prefixed manager, as the JobSet plugin requires.
MANAGER = "pytorchjob.jupyter.org/ptjob"
UNBUFFERED = "PYTHONUNBUFFERED"
# A BuiltinTrainer (torchtune) job: the torch plugin appends the rendezvous, the recipe,
# its config and the runtime's paths to a command that is exactly ``rules.TUNE_RUN``
# (pkg/runtime/framework/plugins/torch/torch.go:175-200 at v2.3.0); config overrides
# (epochs=1, batch_size=4...) go as args.
# The runtime injects only the PET_* variables torchrun reads: a script always starts
# through torchrun.
SCRIPT_LAUNCHER = "torchrun"

_TRAINER = Bespoke("spec.trainer")
_PATCH = Bespoke("our runtime patch of the node replicated job")
_METADATA = Bespoke("metadata (the job's and, in our runtime patch, the pods')")
_NO_ELASTIC = CannotExpress(None, msg("trainjob_no_elastic"))

# Where each field of the job body lives in a TrainJob (tests/test_manifest.py holds it to
# the field table): a key of the pod spec of our runtime patch (v2.3's PodSpecPatch takes
# only some; the CRD prunes the rest), written by this module's own code, or not
# expressible: such a field must keep its default (the form hides it for this kind).
PLACES: dict[str, Place] = {
    "name": _METADATA,
    "image": _TRAINER,
    "kind": Bespoke("kind"),
    "runtime": Bespoke("spec.runtimeRef"),
    "dataset": Bespoke("spec.initializer.dataset.storageUri"),
    "model": Bespoke("spec.initializer.model.storageUri"),
    "datasetSecret": Bespoke("spec.initializer.dataset.secretRef"),
    "modelSecret": Bespoke("spec.initializer.model.secretRef"),
    "command": _TRAINER,
    "args": _TRAINER,
    "script": _TRAINER,
    "workdir": CannotExpress(None, msg("trainjob_no_workdir")),
    "nodes": Bespoke("spec.trainer.numNodes"),
    "master": CannotExpress(True, msg("trainjob_no_master")),
    "gpus": _TRAINER,
    "gpuResource": _TRAINER,
    "cpu": _TRAINER,
    "memory": _TRAINER,
    "shm": _PATCH,
    "nprocPerNode": Bespoke("spec.trainer.numProcPerNode"),
    "pvc": _PATCH,
    "env": _TRAINER,
    "restartPolicy": CannotExpress(DEFAULT_RESTART_POLICY, msg("trainjob_restart_policy")),
    "backoffLimit": CannotExpress(DEFAULT_BACKOFF_LIMIT, msg("trainjob_backoff_limit")),
    "deadline": Bespoke("spec.activeDeadlineSeconds"),
    "ttl": CannotExpress(None, msg("trainjob_no_ttl")),
    "cleanPodPolicy": CannotExpress(DEFAULT_CLEAN_POD_POLICY, msg("trainjob_keeps_pods")),
    "nodeSelector": NODE_SELECTOR,
    "tolerations": TOLERATIONS,
    "labels": _METADATA,
    "annotations": _METADATA,
    "queue": _METADATA,
    "priorityClassName": CannotExpress(None, msg("trainjob_no_priority_class")),
    "serviceAccount": PodSpecKey("serviceAccountName"),
    "imagePullSecrets": PodSpecKey.refs("imagePullSecrets"),
    "logdir": _METADATA,
    "logArchive": _TRAINER,
    "minNodes": _NO_ELASTIC,
    "maxNodes": _NO_ELASTIC,
    "maxRestarts": _NO_ELASTIC,
    "rdzvBackend": _NO_ELASTIC,
    "extras": Bespoke("merged into the whole manifest"),
}


def unsupported_problems(spec: JobSpec) -> list[FieldError]:
    """The fields of ``spec`` set to what a TrainJob cannot express, each named."""
    problems = cannot_express(spec, PLACES, KIND)
    problem = sdk_limits_problem(sdk_safe(resources(spec)).get("limits") or {})
    if problem:
        problems.append(
            FieldError("cpu", msg("cpu_for_sdk", resource=spec.gpu_resource, problem=problem))
        )
    return problems


def sdk_safe(needs: dict[str, Any]) -> dict[str, Any]:
    """``resourcesPerNode`` the Kubeflow SDK can read back: memory alone goes as a request
    only (limits of memory alone make ``TrainerClient().list_jobs()`` raise for every job
    in the namespace; ``rules.SDK_DEVICE_KEYS``)."""
    limits = needs.get("limits") or {}
    if set(limits) == {"memory"}:
        return {"requests": needs["requests"]}
    return needs


# -- building ---------------------------------------------------------------------


def build_manifest(spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
    """The TrainJob for ``spec``; ``JobSpecInvalid`` naming the field for what a TrainJob
    cannot express or its admission would refuse."""
    problems = unsupported_problems(spec)
    if spec.kind != KIND:
        problems.insert(0, FieldError("kind", msg("build_kind", kind=KIND)))
    if problems:
        raise JobSpecInvalid(problems)
    metadata = job_metadata(spec, namespace)
    run, env = entrypoint(spec, SCRIPT_LAUNCHER, NODE)
    if tuple(spec.command[: len(TUNE_RUN)]) == TUNE_RUN:
        if spec.log_archive_base is not None:
            raise JobSpecInvalid([FieldError("logArchive", msg("tune_run_log_archive"))])
        # Exactly `tune run`, the config overrides as args: the torch plugin completes it.
        run = {"command": list(TUNE_RUN), "args": [*spec.command[2:], *spec.args]}
    # What the user left unset stays unset: the runtime decides it (its image; the torch
    # plugin's process rule).
    trainer: dict[str, Any] = {} if spec.image is None else {"image": spec.image}
    trainer.update(run)
    trainer["env"] = [*env, {"name": UNBUFFERED, "value": "1"}]
    trainer["numNodes"] = spec.nodes
    if spec.nproc_per_node is not None:
        trainer["numProcPerNode"] = spec.nproc_per_node
    needs = sdk_safe(resources(spec))
    if needs:
        trainer["resourcesPerNode"] = needs

    body: dict[str, Any] = {
        "runtimeRef": {
            "name": spec.runtime or DEFAULT_RUNTIME,
            "kind": RUNTIME_KIND,
            "apiGroup": GROUP,
        },
        "trainer": trainer,
    }
    initializer: dict[str, Any] = {}
    for part, uri, secret in (
        ("dataset", spec.dataset, spec.dataset_secret),
        ("model", spec.model, spec.model_secret),
    ):
        if uri is not None:
            initializer.setdefault(part, {})["storageUri"] = uri
        if secret is not None:
            initializer.setdefault(part, {})["secretRef"] = {"name": secret}
    if initializer:
        body["initializer"] = initializer
    if spec.deadline is not None:
        body["activeDeadlineSeconds"] = spec.deadline
    pod_patch = _pod_patch(spec)
    if pod_patch:
        body["runtimePatches"] = [
            {
                "manager": MANAGER,
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": NODE,
                                    "template": {"spec": {"template": pod_patch}},
                                }
                            ]
                        }
                    }
                },
            }
        ]
    manifest: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": body,
    }
    merge(manifest, copy.deepcopy(dict(spec.extras)))
    problems = check_manifest(manifest)
    if problems:
        raise JobSpecInvalid(problems)
    return manifest


def _pod_patch(spec: JobSpec) -> dict[str, Any]:
    """The pod template patch of the ``node`` replicated job: metadata, volumes, mounts,
    node selector and tolerations (nothing when there is none of them)."""
    volumes, mounts = volumes_and_mounts(spec)
    pod: dict[str, Any] = {}
    if volumes:
        pod["volumes"] = volumes
        pod["containers"] = [{"name": NODE, "volumeMounts": mounts}]
    write_pod_fields(spec, PLACES, pod)
    meta: dict[str, Any] = {"annotations": {ISTIO_INJECT: "false", **spec.annotations}}
    if spec.labels:
        meta["labels"] = dict(spec.labels)
    return {"metadata": meta, "spec": pod} if pod else {"metadata": meta}


# -- parsing ------------------------------------------------------------------------


def parse_manifest(manifest: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
    """Read a TrainJob back into a ``JobSpec`` (see the module's docstring)."""
    shape_errors = manifest_shape_errors(manifest, kind=KIND)
    if shape_errors:
        raise JobSpecInvalid(shape_errors)
    m = copy.deepcopy(dict(manifest))
    require_kind(m, API_VERSION, KIND)
    clean_metadata(m)
    wire = _form_fields(m, gpu_resource)
    wire["logArchive"] = archive_field(wire, wire["logArchive"])
    base = JobSpec.from_wire(wire)
    extras = patch(m, build_manifest(base))
    if extras is NOTHING:
        return base
    return JobSpec.from_wire({**wire, "extras": extras})


def _runtime_name(spec: Mapping[str, Any]) -> str | None:
    """The runtime's name, None for the default one (the form leaves it empty)."""
    name = (spec.get("runtimeRef") or {}).get("name")
    return None if name == DEFAULT_RUNTIME else name


def _initializer(spec: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    """``initializer.<part>`` (its ``env`` stays in ``extras``); empty without one."""
    initializer = spec.get("initializer")
    entry = initializer.get(part) if isinstance(initializer, Mapping) else None
    return entry if isinstance(entry, Mapping) else {}


def _our_pod_patch(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``node`` pod template of our own runtime patch (empty without one)."""
    for entry in spec.get("runtimePatches") or []:
        if not isinstance(entry, Mapping) or entry.get("manager") != MANAGER:
            continue
        template = (entry.get("trainingRuntimeSpec") or {}).get("template") or {}
        for rjob in (template.get("spec") or {}).get("replicatedJobs") or []:
            if isinstance(rjob, Mapping) and rjob.get("name") == NODE:
                pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
                return pod if isinstance(pod, Mapping) else {}
    return {}


def _form_fields(m: Mapping[str, Any], gpu_resource: str | None) -> dict[str, Any]:
    """The form's fields (the wire form of ``JobSpec``) read from ``trainer`` and our
    runtime patch."""
    read = read_metadata(m["metadata"])
    spec: Mapping[str, Any] = m.get("spec") or {}
    trainer: Mapping[str, Any] = spec.get("trainer") or {}
    run = read_entrypoint(trainer)
    if run["env"].get(UNBUFFERED) == "1":
        del run["env"][UNBUFFERED]

    needs: Mapping[str, Any] = trainer.get("resourcesPerNode") or {}
    limits = dict(needs.get("limits") or {})
    requests = dict(needs.get("requests") or {})
    gpu_name = gpu_key(limits, gpu_resource) or gpu_key(requests, gpu_resource)
    gpu_value = limits.get(gpu_name, requests.get(gpu_name)) if gpu_name else None
    gpus = gpu_count(gpu_value, gpu_name) if gpu_name else 0

    pod = _our_pod_patch(spec)
    pod_spec: Mapping[str, Any] = pod.get("spec") or {}
    containers: list[Mapping[str, Any]] = list(pod_spec.get("containers") or [])
    container = next((c for c in containers if c.get("name") == NODE), {})
    volumes = {v.get("name"): v for v in pod_spec.get("volumes") or []}
    pvc, shm = read_mounts(container, volumes)
    return {
        "name": m["metadata"].get("name"),
        "image": trainer.get("image"),
        "kind": KIND,
        "runtime": _runtime_name(spec),
        "dataset": _initializer(spec, "dataset").get("storageUri"),
        "model": _initializer(spec, "model").get("storageUri"),
        "datasetSecret": (_initializer(spec, "dataset").get("secretRef") or {}).get("name"),
        "modelSecret": (_initializer(spec, "model").get("secretRef") or {}).get("name"),
        "command": run["command"],
        "args": run["args"],
        "script": run["script"],
        "nodes": trainer.get("numNodes", 1),
        "gpus": gpus,
        "gpuResource": gpu_name or gpu_resource,
        "cpu": quantity_text(limits.get("cpu", requests.get("cpu"))),
        "memory": quantity_text(limits.get("memory", requests.get("memory"))),
        "shm": shm,
        "nprocPerNode": trainer.get("numProcPerNode"),
        "pvc": [p.to_wire() for p in pvc],
        "env": run["env"],
        "deadline": spec.get("activeDeadlineSeconds"),
        **read_pod_fields(pod_spec, PLACES),
        **read,
        "logdir": read["logdir"] or run["logdir"],
        "logArchive": run["archive"],  # the wrapper's directory: archive_field reads it
    }
