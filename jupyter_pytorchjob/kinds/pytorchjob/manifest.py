"""``JobSpec`` -> ``kubeflow.org/v1`` PyTorchJob manifest, and the way back.

The builder writes what the Training Operator v1.9.4 needs, nothing left to its
defaults: node 0 is the Master with ``replicas: 1`` written out, nodes - 1 Workers (none for one
node; a Worker-only job has ``nodes`` Workers and no Master), a container named
``pytorch`` with the GPUs as limits, the PVCs and a memory-backed ``/dev/shm`` in
every replica, ``nprocPerNode`` as a string, every run-policy value explicit, and
``sidecar.istio.io/inject: "false"``.

``parse_manifest`` reads a manifest (edited YAML, or a job from the cluster) back
into a ``JobSpec``. Whatever of the manifest the form's fields would not write
back as it is (fields the form does not know, and anything a replica has that
differs from the replica the form builds: another image, restart policy,
``tolerationSeconds``, a sidecar...) is kept in ``JobSpec.extras``, a
manifest-shaped patch that ``build_manifest`` merges back in, so nothing the user
wrote is dropped.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from ...job.errors import FieldError, JobSpecInvalid
from ...job.fields import DEFAULT_RDZV_BACKEND
from ...job.messages import msg
from ...job.shape import manifest_shape_errors
from ...job.spec import SHM_MOUNT, JobSpec
from ..manifests import (
    ISTIO_INJECT,
    NODE_SELECTOR,
    NOTHING,
    SHM_VOLUME,
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
    pvc_volume_name,
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
from .webhook import CONTAINER_NAME, check_manifest

API_VERSION = "kubeflow.org/v1"
KIND = "PyTorchJob"

_CONTAINER = Bespoke("every replica's container 'pytorch'")
_RUN_POLICY = Bespoke("spec.runPolicy")
_ELASTIC = Bespoke("spec.elasticPolicy")
_METADATA = Bespoke("metadata (the job's and the pod template's)")

# Where each field of the job body lives in a PyTorchJob (tests/test_manifest.py holds
# it to the field table): a key of every replica's pod spec, written and read by
# ``write_pod_fields``/``read_pod_fields``; or written by this module's own code.
PLACES: dict[str, Place] = {
    "name": _METADATA,
    "image": _CONTAINER,
    "kind": Bespoke("kind"),
    "runtime": CannotExpress(None, msg("only_trainjob_runtime")),
    "dataset": CannotExpress(None, msg("only_trainjob_dataset")),
    "model": CannotExpress(None, msg("only_trainjob_model")),
    "datasetSecret": CannotExpress(None, msg("only_trainjob_initializers")),
    "modelSecret": CannotExpress(None, msg("only_trainjob_initializers")),
    "command": _CONTAINER,
    "args": _CONTAINER,
    "script": _CONTAINER,
    "workdir": _CONTAINER,
    "nodes": Bespoke("spec.pytorchReplicaSpecs: Master 1, Worker nodes - 1"),
    "master": Bespoke("spec.pytorchReplicaSpecs.Master"),
    "gpus": _CONTAINER,
    "gpuResource": _CONTAINER,
    "cpu": _CONTAINER,
    "memory": _CONTAINER,
    "shm": Bespoke("every replica's volume dshm"),
    "nprocPerNode": Bespoke("spec.nprocPerNode"),
    "pvc": Bespoke("every replica's volumes and mounts"),
    "env": _CONTAINER,
    "restartPolicy": Bespoke("every replica's restartPolicy"),
    "backoffLimit": _RUN_POLICY,
    "deadline": _RUN_POLICY,
    "ttl": _RUN_POLICY,
    "cleanPodPolicy": _RUN_POLICY,
    "nodeSelector": NODE_SELECTOR,
    "tolerations": TOLERATIONS,
    "labels": _METADATA,
    "annotations": _METADATA,
    "queue": _METADATA,
    "priorityClassName": PodSpecKey("priorityClassName"),
    "serviceAccount": PodSpecKey("serviceAccountName"),
    "imagePullSecrets": PodSpecKey.refs("imagePullSecrets"),
    "logdir": _METADATA,
    "logArchive": _CONTAINER,
    "minNodes": _ELASTIC,
    "maxNodes": _ELASTIC,
    "maxRestarts": _ELASTIC,
    "rdzvBackend": _ELASTIC,
    "extras": Bespoke("merged into the whole manifest"),
}

# -- building ---------------------------------------------------------------------


def build_manifest(spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
    """The PyTorchJob for ``spec``; raises ``JobSpecInvalid`` if the result would be
    refused by the operator's webhook (possible only through ``extras``)."""
    trainjob_only = cannot_express(spec, PLACES, KIND)
    if spec.kind != KIND or trainjob_only:
        wrong_kind = FieldError("kind", msg("build_kind", kind=KIND))
        raise JobSpecInvalid(trainjob_only or [wrong_kind])
    metadata = job_metadata(spec, namespace)
    run_policy: dict[str, Any] = {"cleanPodPolicy": spec.clean_pod_policy}
    if spec.backoff_limit is not None:
        run_policy["backoffLimit"] = spec.backoff_limit
    if spec.deadline is not None:
        run_policy["activeDeadlineSeconds"] = spec.deadline
    if spec.ttl is not None:
        run_policy["ttlSecondsAfterFinished"] = spec.ttl

    replica_specs: dict[str, Any] = {}
    if spec.master:
        replica_specs["Master"] = {
            "replicas": 1,
            "restartPolicy": spec.restart_policy,
            "template": _pod_template(spec),
        }
    if spec.workers:
        replica_specs["Worker"] = {
            "replicas": spec.workers,
            "restartPolicy": spec.restart_policy,
            "template": _pod_template(spec),
        }
    manifest: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": {
            "nprocPerNode": str(_nproc(spec)),
            "runPolicy": run_policy,
            "pytorchReplicaSpecs": replica_specs,
        },
    }
    if spec.elastic:
        manifest["spec"]["elasticPolicy"] = _elastic_policy(spec)
    extras = copy.deepcopy(dict(spec.extras))
    legacy = (extras.get("spec") or {}).get("elasticPolicy")
    if isinstance(legacy, dict) and legacy.get("nProcPerNode") is not None:
        # The deprecated elasticPolicy.nProcPerNode, which v1.9.4 accepts with a warning
        # but never beside spec.nprocPerNode (pytorchjob_webhook.go:101-107): the process
        # count stays where the job keeps it.
        del manifest["spec"]["nprocPerNode"]
        legacy["nProcPerNode"] = _nproc(spec)
    extra_replicas = (extras.get("spec") or {}).get("pytorchReplicaSpecs") or {}
    for rtype in list(extra_replicas):
        if rtype not in replica_specs:  # e.g. fewer nodes now: no Worker to extend
            del extra_replicas[rtype]
    merge(manifest, extras)
    problems = check_manifest(manifest)
    if problems:
        raise JobSpecInvalid(
            [
                FieldError("extras", msg("in_extras", path=p.field, problem=p.problem))
                for p in problems
            ]
        )
    return manifest


def _elastic_policy(spec: JobSpec) -> dict[str, Any]:
    """What the form sets of ``elasticPolicy``; unset bounds are the operator's (both
    the Worker count)."""
    policy: dict[str, Any] = {"rdzvBackend": spec.rdzv_backend}
    for key, value in (
        ("minReplicas", spec.min_nodes),
        ("maxReplicas", spec.max_nodes),
        ("maxRestarts", spec.max_restarts),
    ):
        if value is not None:
            policy[key] = value
    return policy


def script_launcher(spec: JobSpec) -> str:
    """A script starts through torchrun only when a node runs several processes."""
    return "torchrun" if _nproc(spec) > 1 else "python"


def _nproc(spec: JobSpec) -> int:
    """``from_wire`` resolves a PyTorchJob's process count (only a TrainJob's may be
    left to its runtime)."""
    return spec.nproc_per_node or max(spec.gpus, 1)


def _pod_template(spec: JobSpec) -> dict[str, Any]:
    run, env = entrypoint(spec, script_launcher(spec))
    container: dict[str, Any] = {"name": CONTAINER_NAME, "image": spec.image, **run}
    if spec.workdir:
        container["workingDir"] = spec.workdir
    if env:
        container["env"] = env
    needs = resources(spec)
    if needs:
        container["resources"] = needs

    volumes, mounts = volumes_and_mounts(spec)
    if mounts:
        container["volumeMounts"] = mounts

    pod_spec: dict[str, Any] = {"containers": [container]}
    if volumes:
        pod_spec["volumes"] = volumes
    write_pod_fields(spec, PLACES, pod_spec)
    template_meta: dict[str, Any] = {"annotations": {ISTIO_INJECT: "false", **spec.annotations}}
    if spec.labels:
        template_meta["labels"] = dict(spec.labels)
    return {"metadata": template_meta, "spec": pod_spec}


# -- parsing ------------------------------------------------------------------------


def parse_manifest(manifest: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
    """Read a PyTorchJob back into a ``JobSpec``.

    Form fields come from the Master, or from the Worker of a Worker-only job (the
    form edits all replicas alike). ``extras`` is what ``build_manifest`` must add
    to the replicas it builds from those fields to give back every field of
    ``manifest``: ``build_manifest(parse_manifest(m))`` keeps every field of ``m``
    (named lists compared by name) except what the form deliberately rewrites: a
    non-numeric ``nprocPerNode`` becomes the GPU count (``auto`` means one process
    per host CPU on a CPU pod, trainer#2407), PVC and ``/dev/shm`` volumes take the
    builder's names, and unset defaults are written out. Server-set metadata and
    ``status`` are dropped, so the result can be submitted as a clone.
    """
    shape_errors = manifest_shape_errors(manifest)
    if shape_errors:
        raise JobSpecInvalid(shape_errors)
    m = copy.deepcopy(dict(manifest))
    require_kind(m, API_VERSION, KIND)
    clean_metadata(m)
    wire = _form_fields(m, gpu_resource)
    wire["logArchive"] = archive_field(wire, wire["logArchive"])
    base = JobSpec.from_wire(wire)
    extras = patch(_builder_volume_names(m, base), build_manifest(base))
    if extras is NOTHING:
        return base
    # An absent backoffLimit stays absent (null): the operator's default, unlimited.
    return JobSpec.from_wire({**wire, "extras": extras})


def _form_fields(m: Mapping[str, Any], gpu_resource: str | None) -> dict[str, Any]:
    """The form's fields (the wire form of ``JobSpec``) read from the primary replica."""
    meta = m["metadata"]
    read = read_metadata(meta)
    spec: Mapping[str, Any] = m.get("spec") or {}
    replica_specs: Mapping[str, Any] = spec.get("pytorchReplicaSpecs") or {}
    master = replica_specs.get("Master")
    worker = replica_specs.get("Worker")
    primary_type = "Master" if "Master" in replica_specs else "Worker"
    primary = replica_specs.get(primary_type)
    where = f"spec.pytorchReplicaSpecs.{primary_type}"
    if not isinstance(primary, Mapping):
        present = ", ".join(map(str, replica_specs)) or "none"
        raise JobSpecInvalid(
            [FieldError("spec.pytorchReplicaSpecs", msg("master_or_worker", got=present))]
        )
    workers = int(worker.get("replicas", 1)) if isinstance(worker, Mapping) else 0
    run_policy: Mapping[str, Any] = spec.get("runPolicy") or {}

    pod = (primary.get("template") or {}).get("spec") or {}
    container: Mapping[str, Any] | None = next(
        (c for c in pod.get("containers") or [] if c.get("name") == CONTAINER_NAME), None
    )
    if container is None:
        raise JobSpecInvalid(
            [
                FieldError(
                    f"{where}.template.spec.containers",
                    msg("container_named", name=repr(CONTAINER_NAME)),
                )
            ]
        )
    run = read_entrypoint(container)

    limits = dict((container.get("resources") or {}).get("limits") or {})
    requests = dict((container.get("resources") or {}).get("requests") or {})
    gpu_name = gpu_key(limits, gpu_resource)
    gpus = gpu_count(limits[gpu_name], gpu_name) if gpu_name else 0
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    pvc, shm = read_mounts(container, volumes)
    nproc_text = str(spec.get("nprocPerNode", "") or "")
    legacy_nproc = (spec.get("elasticPolicy") or {}).get("nProcPerNode")
    # 'auto'/'gpu'/'cpu' cannot be shown in the form: they mean one process per GPU
    # (or per host CPU, the trainer#2407 trap), so the form offers the GPU count.
    if re.fullmatch("[0-9]{1,9}", nproc_text):  # isdigit() passes '²', int() does not
        nproc = int(nproc_text)
    elif not nproc_text and isinstance(legacy_nproc, int) and legacy_nproc >= 1:
        nproc = legacy_nproc
    else:
        nproc = max(gpus, 1)
    elastic: Mapping[str, Any] = spec.get("elasticPolicy") or {}
    return {
        "name": meta.get("name"),
        "image": container.get("image"),
        "command": run["command"],
        "args": run["args"],
        "script": run["script"],
        "workdir": container.get("workingDir"),
        "nodes": 1 + workers if isinstance(master, Mapping) else workers,
        "master": isinstance(master, Mapping),
        "gpus": gpus,
        "gpuResource": gpu_name or gpu_resource,
        "cpu": quantity_text(limits.get("cpu", requests.get("cpu"))),
        "memory": quantity_text(limits.get("memory", requests.get("memory"))),
        "shm": shm,
        "nprocPerNode": nproc,
        "pvc": [p.to_wire() for p in pvc],
        "env": run["env"],
        "restartPolicy": primary.get("restartPolicy"),
        "backoffLimit": run_policy.get("backoffLimit"),
        "deadline": run_policy.get("activeDeadlineSeconds"),
        "ttl": run_policy.get("ttlSecondsAfterFinished"),
        # Absent means the operator's default, None (not ours, Running).
        "cleanPodPolicy": run_policy.get("cleanPodPolicy") or "None",
        **read_pod_fields(pod, PLACES),
        **read,
        "logdir": read["logdir"] or run["logdir"],
        "logArchive": run["archive"],  # the wrapper's directory: archive_field reads it
        "minNodes": elastic.get("minReplicas"),
        "maxNodes": elastic.get("maxReplicas"),
        "maxRestarts": elastic.get("maxRestarts"),
        # An elasticPolicy without a backend is c10d, the operator's default.
        "rdzvBackend": (elastic.get("rdzvBackend") or DEFAULT_RDZV_BACKEND) if elastic else None,
    }


def _builder_volume_names(m: Mapping[str, Any], spec: JobSpec) -> dict[str, Any]:
    """``m`` with the volumes the form owns renamed as the builder names them
    (``pvc-<claim>``, ``dshm``) in every replica, so they compare by name."""
    out = copy.deepcopy(dict(m))
    owned = {(p.claim, p.mount_path, p.sub_path, p.read_only) for p in spec.pvc}
    for rspec in ((out.get("spec") or {}).get("pytorchReplicaSpecs") or {}).values():
        pod = ((rspec or {}).get("template") or {}).get("spec") or {}
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        container = next(
            (c for c in pod.get("containers") or [] if c.get("name") == CONTAINER_NAME), None
        )
        if not volumes or container is None:
            continue
        renames: dict[str, str] = {}
        for mount in container.get("volumeMounts") or []:
            volume = volumes.get(mount.get("name")) or {}
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            read_only = bool(mount.get("readOnly")) or bool(
                (volume.get("persistentVolumeClaim") or {}).get("readOnly")
            )
            key = (claim, mount.get("mountPath"), mount.get("subPath") or "", read_only)
            if claim and key in owned:
                renames[mount["name"]] = pvc_volume_name(claim)
            elif (
                spec.shm
                and mount.get("mountPath") == SHM_MOUNT
                and (volume.get("emptyDir") or {}).get("medium") == "Memory"
            ):
                renames[mount["name"]] = SHM_VOLUME
        taken = set(volumes) - set(renames)
        if any(new in taken for new in renames.values()):
            continue  # the builder's name is someone else's here: keep the user's names
        for volume in pod.get("volumes") or []:
            volume["name"] = renames.get(volume.get("name"), volume.get("name"))
        for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
            for mount in c.get("volumeMounts") or []:
                mount["name"] = renames.get(mount.get("name"), mount.get("name"))
    return out
