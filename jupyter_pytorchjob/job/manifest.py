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
import hashlib
import re
import sys
from collections.abc import Mapping
from typing import Any

import yaml

from . import k8s_rules as rules
from .errors import FieldError, JobSpecInvalid
from .fields import DEFAULT_RDZV_BACKEND
from .shape import manifest_shape_errors, plain_problem
from .spec import SHM_MOUNT, JobSpec, PvcMount, Toleration
from .webhook import CONTAINER_NAME, check_manifest

API_VERSION = "kubeflow.org/v1"
KIND = "PyTorchJob"
SHM_VOLUME = "dshm"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ISTIO_INJECT = "sidecar.istio.io/inject"
LOGDIR_ANNOTATION = "pytorchjob.jupyter.org/logdir"
SCRIPT_ENV = "PTJOB_SCRIPT"
LOGDIR_ENV = "PTJOB_LOGDIR"

# The script travels in the PTJOB_SCRIPT env var; this bootstrap writes it to a
# file and execs the launcher on it, so no shell ever sees user text. ``args`` are
# ``[launcher, "--", *script_args]`` with launcher ``python`` or ``torchrun``.
BOOTSTRAP = (
    "import os,sys,tempfile;"
    "d=tempfile.mkdtemp(prefix='ptjob-');p=os.path.join(d,'main.py');"
    "f=open(p,'w');f.write(os.environ.pop('PTJOB_SCRIPT'));f.close();"
    "a=sys.argv[1:];i=a.index('--');"
    "l={'python':['-u'],'torchrun':['-m','torch.distributed.run']}[a[0]];"
    "os.execv(sys.executable,[sys.executable,*l,p,*a[i+1:]])"
)
BOOTSTRAP_COMMAND = ("python3", "-c", BOOTSTRAP)

# Set by the API server; a manifest read back for cloning must not carry them.
_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "namespace",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
)
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_NOTHING: Any = object()  # _patch: nothing to add


# -- building ---------------------------------------------------------------------


def build_manifest(spec: JobSpec, *, namespace: str | None = None) -> dict[str, Any]:
    """The PyTorchJob for ``spec``; raises ``JobSpecInvalid`` if the result would be
    refused by the operator's webhook (possible only through ``extras``)."""
    metadata: dict[str, Any] = {"name": spec.name}
    if namespace:
        metadata["namespace"] = namespace
    labels = dict(spec.labels)
    if spec.queue:
        labels[QUEUE_LABEL] = spec.queue
    if labels:
        metadata["labels"] = labels
    annotations = dict(spec.annotations)
    if spec.logdir:
        annotations[LOGDIR_ANNOTATION] = spec.logdir
    if annotations:
        metadata["annotations"] = annotations

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
            "nprocPerNode": str(spec.nproc_per_node),
            "runPolicy": run_policy,
            "pytorchReplicaSpecs": replica_specs,
        },
    }
    if spec.elastic:
        manifest["spec"]["elasticPolicy"] = _elastic_policy(spec)
    extras = copy.deepcopy(dict(spec.extras))
    extra_replicas = (extras.get("spec") or {}).get("pytorchReplicaSpecs") or {}
    for rtype in list(extra_replicas):
        if rtype not in replica_specs:  # e.g. fewer nodes now: no Worker to extend
            del extra_replicas[rtype]
    _merge(manifest, extras)
    problems = check_manifest(manifest)
    if problems:
        raise JobSpecInvalid([FieldError("extras", str(p)) for p in problems])
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


def _pod_template(spec: JobSpec) -> dict[str, Any]:
    container: dict[str, Any] = {"name": CONTAINER_NAME, "image": spec.image}
    if spec.script is not None:
        launcher = "torchrun" if spec.nproc_per_node > 1 else "python"
        container["command"] = list(BOOTSTRAP_COMMAND)
        container["args"] = [launcher, "--", *spec.args]
    else:
        if spec.command:
            container["command"] = list(spec.command)
        if spec.args:
            container["args"] = list(spec.args)
    if spec.workdir:
        container["workingDir"] = spec.workdir
    env = [{"name": k, "value": v} for k, v in spec.env.items()]
    if spec.logdir:
        env.append({"name": LOGDIR_ENV, "value": spec.logdir})
    if spec.script is not None:
        env.append({"name": SCRIPT_ENV, "value": spec.script})
    if env:
        container["env"] = env
    resources = _resources(spec)
    if resources:
        container["resources"] = resources

    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for claim in dict.fromkeys(m.claim for m in spec.pvc):
        volumes.append(
            {"name": pvc_volume_name(claim), "persistentVolumeClaim": {"claimName": claim}}
        )
    for pvc in spec.pvc:
        mount: dict[str, Any] = {"name": pvc_volume_name(pvc.claim), "mountPath": pvc.mount_path}
        if pvc.sub_path:
            mount["subPath"] = pvc.sub_path
        if pvc.read_only:
            mount["readOnly"] = True
        mounts.append(mount)
    if spec.shm:
        volumes.append(
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": spec.shm}}
        )
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_MOUNT})
    if mounts:
        container["volumeMounts"] = mounts

    pod_spec: dict[str, Any] = {"containers": [container]}
    if volumes:
        pod_spec["volumes"] = volumes
    if spec.node_selector:
        pod_spec["nodeSelector"] = dict(spec.node_selector)
    if spec.tolerations:
        pod_spec["tolerations"] = [_toleration(t) for t in spec.tolerations]
    if spec.priority_class_name:
        pod_spec["priorityClassName"] = spec.priority_class_name
    template_meta: dict[str, Any] = {"annotations": {ISTIO_INJECT: "false", **spec.annotations}}
    if spec.labels:
        template_meta["labels"] = dict(spec.labels)
    return {"metadata": template_meta, "spec": pod_spec}


def _resources(spec: JobSpec) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, value in (("cpu", spec.cpu), ("memory", spec.memory)):
        if value:
            requests[key] = limits[key] = value
    if spec.gpus:
        limits[spec.gpu_resource] = spec.gpus
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return resources


def _toleration(t: Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": t.operator}
    if t.key:
        out["key"] = t.key
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.seconds is not None:
        out["tolerationSeconds"] = t.seconds
    return out


def pvc_volume_name(claim: str) -> str:
    """A DNS-1123 label naming the volume of ``claim`` (claims may be longer, dotted)."""
    name = f"pvc-{claim}"
    if len(name) <= rules.LABEL_MAX and rules.DNS1123_LABEL.match(name):
        return name
    digest = hashlib.sha256(claim.encode()).hexdigest()[:8]
    stem = re.sub(r"[^a-z0-9-]", "-", claim)[:50].strip("-")
    return f"pvc-{stem}-{digest}"


# -- YAML ---------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings, so an embedded script stays readable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Literal style only where it round-trips: printable lines, no trailing blanks.
    lines = value.split("\n")
    literal = len(lines) > 1 and all(line.isprintable() and line == line.rstrip() for line in lines)
    plain_text = all(line.isprintable() for line in lines)
    # Anything unusual (NEL, LS, control characters) goes double-quoted, escaped.
    style = "|" if literal else (None if plain_text else '"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def manifest_to_yaml(manifest: Mapping[str, Any]) -> str:
    """The manifest as YAML, in the builder's key order."""
    return yaml.dump(
        manifest, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def manifest_from_yaml(text: str) -> dict[str, Any]:
    """Parse one YAML document into a manifest dict; ``JobSpecInvalid`` if it is not one."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise JobSpecInvalid([FieldError("yaml", f"is not valid YAML: {err}")]) from err
    except RecursionError as err:
        raise JobSpecInvalid([FieldError("yaml", "is nested too deeply")]) from err
    except ValueError as err:  # an integer past Python's digit limit
        message = f"holds a number with more than {sys.get_int_max_str_digits()} digits"
        raise JobSpecInvalid([FieldError("yaml", message)]) from err
    if not isinstance(data, dict):
        raise JobSpecInvalid([FieldError("yaml", "must be a single PyTorchJob object")])
    problem = plain_problem(data)
    if problem:
        raise JobSpecInvalid([FieldError("yaml", problem)])
    return data


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
    if m.get("apiVersion") != API_VERSION or m.get("kind") != KIND:
        raise JobSpecInvalid(
            [
                FieldError(
                    "kind",
                    f"must be a {KIND} of {API_VERSION}, got "
                    f"{m.get('kind')!r} of {m.get('apiVersion')!r}",
                )
            ]
        )
    m.pop("status", None)
    meta = dict(m.get("metadata") or {})
    for key in _SERVER_METADATA:
        meta.pop(key, None)
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(_LAST_APPLIED, None)
    meta["annotations"] = annotations
    _drop_if_empty(meta, "annotations")
    m["metadata"] = meta
    wire = _form_fields(m, gpu_resource)
    base = JobSpec.from_wire(wire)
    extras = _patch(_builder_volume_names(m, base), build_manifest(base))
    if extras is _NOTHING:
        return base
    # An absent backoffLimit stays absent (null): the operator's default, unlimited.
    return JobSpec.from_wire({**wire, "extras": extras})


def _form_fields(m: Mapping[str, Any], gpu_resource: str | None) -> dict[str, Any]:
    """The form's fields (the wire form of ``JobSpec``) read from the primary replica."""
    meta = m["metadata"]
    labels = dict(meta.get("labels") or {})
    queue = labels.pop(QUEUE_LABEL, None)
    annotations = dict(meta.get("annotations") or {})
    logdir = annotations.pop(LOGDIR_ANNOTATION, None)
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
            [FieldError("spec.pytorchReplicaSpecs", f"needs a Master or a Worker, got {present}")]
        )
    workers = int(worker.get("replicas", 1)) if isinstance(worker, Mapping) else 0
    run_policy: Mapping[str, Any] = spec.get("runPolicy") or {}

    pod = (primary.get("template") or {}).get("spec") or {}
    container: Mapping[str, Any] | None = next(
        (c for c in pod.get("containers") or [] if c.get("name") == CONTAINER_NAME), None
    )
    if container is None:
        raise JobSpecInvalid(
            [FieldError(f"{where}.template.spec.containers", "must include a container 'pytorch'")]
        )
    env_list = container.get("env") or []
    plain_env = {
        e["name"]: e["value"]
        for e in env_list
        if set(e) == {"name", "value"} and isinstance(e.get("value"), str)
    }
    script = plain_env.pop(SCRIPT_ENV, None)
    env_logdir = plain_env.pop(LOGDIR_ENV, None)
    command: list[str] = list(container.get("command") or [])
    args: list[str] = list(container.get("args") or [])
    if script is not None and tuple(command) == BOOTSTRAP_COMMAND and "--" in args:
        command, args = [], args[args.index("--") + 1 :]
    else:
        script = None

    limits = dict((container.get("resources") or {}).get("limits") or {})
    requests = dict((container.get("resources") or {}).get("requests") or {})
    gpu_key = _gpu_key(limits, gpu_resource)
    gpus = _gpu_count(limits[gpu_key], gpu_key) if gpu_key else 0
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    pvc, shm = _read_mounts(container, volumes)
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
        "command": command,
        "args": args,
        "script": script,
        "workdir": container.get("workingDir"),
        "nodes": 1 + workers if isinstance(master, Mapping) else workers,
        "master": isinstance(master, Mapping),
        "gpus": gpus,
        "gpuResource": gpu_key or gpu_resource,
        "cpu": _quantity_text(limits.get("cpu", requests.get("cpu"))),
        "memory": _quantity_text(limits.get("memory", requests.get("memory"))),
        "shm": shm,
        "nprocPerNode": nproc,
        "pvc": [p.to_wire() for p in pvc],
        "env": plain_env,
        "restartPolicy": primary.get("restartPolicy"),
        "backoffLimit": run_policy.get("backoffLimit"),
        "deadline": run_policy.get("activeDeadlineSeconds"),
        "ttl": run_policy.get("ttlSecondsAfterFinished"),
        # Absent means the operator's default, None (not ours, Running).
        "cleanPodPolicy": run_policy.get("cleanPodPolicy") or "None",
        "nodeSelector": dict(pod.get("nodeSelector") or {}),
        "tolerations": [dict(t) for t in pod.get("tolerations") or []],
        "labels": labels,
        "annotations": annotations,
        "queue": queue,
        "priorityClassName": pod.get("priorityClassName"),
        "logdir": logdir or env_logdir,
        "minNodes": elastic.get("minReplicas"),
        "maxNodes": elastic.get("maxReplicas"),
        "maxRestarts": elastic.get("maxRestarts"),
        # An elasticPolicy without a backend is c10d, the operator's default.
        "rdzvBackend": (elastic.get("rdzvBackend") or DEFAULT_RDZV_BACKEND) if elastic else None,
    }


def _gpu_key(limits: Mapping[str, Any], hint: str | None) -> str | None:
    if hint and hint in limits:
        return hint
    for key in limits:
        if key.lower().endswith("/gpu"):
            return key
    return None


def _gpu_count(value: Any, key: str) -> int:
    """A GPU limit: a whole number (Kubernetes refuses fractions of extended resources)."""
    text = str(value)
    if isinstance(value, bool) or not re.fullmatch("[0-9]{1,9}", text):
        raise JobSpecInvalid(
            [
                FieldError(
                    "gpus", f"the container's {key} limit must be a whole number, got {text!r}"
                )
            ]
        )
    return int(text)


def _quantity_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _read_mounts(
    container: Mapping[str, Any], volumes: Mapping[str, Any]
) -> tuple[list[PvcMount], str | None]:
    pvc: list[PvcMount] = []
    shm: str | None = None
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        empty_dir = volume.get("emptyDir")
        if mount.get("mountPath") == SHM_MOUNT and isinstance(empty_dir, Mapping):
            if empty_dir.get("medium") == "Memory":
                shm = str(empty_dir.get("sizeLimit") or "") or None
            continue
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and set(mount) <= {"name", "mountPath", "subPath", "readOnly"}:
            read_only = bool(mount.get("readOnly")) or bool(
                volume["persistentVolumeClaim"].get("readOnly")
            )
            pvc.append(PvcMount(claim, mount["mountPath"], mount.get("subPath") or "", read_only))
    return pvc, shm


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


def _patch(actual: Any, built: Any) -> Any:
    """What ``_merge(built, patch)`` needs to keep every field of ``actual``: its values
    where they differ, compared key by key and named lists item by item (by name);
    ``_NOTHING`` when ``built`` already has all of it."""
    if actual == built:
        return _NOTHING
    if isinstance(actual, Mapping) and isinstance(built, Mapping):
        out: dict[str, Any] = {}
        for key, value in actual.items():
            sub = _patch(value, built[key]) if key in built else copy.deepcopy(value)
            if sub is not _NOTHING:
                out[key] = sub
        return out or _NOTHING
    if isinstance(actual, list) and isinstance(built, list):
        mine, theirs = _by_name(actual), _by_name(built)
        if mine is None or theirs is None:
            return copy.deepcopy(actual)
        # In the order _merge gives them (the built ones, then the new), so that a patch
        # read back from its own result is the same patch.
        items = []
        for name, item in theirs.items():
            sub = _patch(mine[name], item) if name in mine else _NOTHING
            if sub is not _NOTHING:
                items.append({"name": name, **sub})
        items += [copy.deepcopy(item) for name, item in mine.items() if name not in theirs]
        return items or _NOTHING
    return copy.deepcopy(actual)


def _by_name(items: list[Any]) -> dict[str, Any] | None:
    """The items by ``name`` if every item is an object with a unique string name."""
    if not all(isinstance(i, Mapping) and isinstance(i.get("name"), str) for i in items):
        return None
    by_name = {i["name"]: i for i in items}
    return by_name if len(by_name) == len(items) else None


def _drop_if_empty(parent: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in parent and parent[key] in ({}, [], None):
            del parent[key]


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Deep-merge ``extra`` into ``base``; lists of uniquely named objects merge by ``name``."""
    for key, value in extra.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            by_name, added = _by_name(current), _by_name(value)
            if by_name is None or added is None:
                base[key] = copy.deepcopy(value)
                continue
            for name, item in added.items():
                if name in by_name:
                    _merge(by_name[name], item)
                else:
                    current.append(copy.deepcopy(item))
        else:
            base[key] = copy.deepcopy(value)
