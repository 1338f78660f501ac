"""``JobSpec`` -> ``kubeflow.org/v1`` PyTorchJob manifest, and the way back.

The builder follows the rules of PRODUCT.md (see ``notes/operator.md``): node 0
is the Master with ``replicas: 1`` written out, nodes - 1 Workers (none for one
node), a container named ``pytorch`` with the GPUs as limits, the PVCs and a
memory-backed ``/dev/shm`` in every replica, ``nprocPerNode`` as a string, every
run-policy value explicit, and ``sidecar.istio.io/inject: "false"``.

``parse_manifest`` reads a manifest (edited YAML, or a job from the cluster) back
into a ``JobSpec``. What the form does not know is kept in ``JobSpec.extras``, a
manifest-shaped residue that ``build_manifest`` merges back in, so nothing the
user wrote is dropped.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping
from typing import Any

import yaml

from . import k8s_rules as rules
from .errors import FieldError, JobSpecInvalid
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

    replica_specs: dict[str, Any] = {
        "Master": {
            "replicas": 1,
            "restartPolicy": spec.restart_policy,
            "template": _pod_template(spec),
        }
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
    if not isinstance(data, dict):
        raise JobSpecInvalid([FieldError("yaml", "must be a single PyTorchJob object")])
    return data


# -- parsing ------------------------------------------------------------------------


def parse_manifest(manifest: Mapping[str, Any], *, gpu_resource: str | None = None) -> JobSpec:
    """Read a PyTorchJob back into a ``JobSpec``.

    Form fields come from the Master (the form edits all replicas alike); every
    other field, in any replica, is kept in ``extras``. Server-set metadata and
    ``status`` are dropped, so the result can be submitted as a clone.
    """
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
    m.pop("apiVersion")
    m.pop("kind")
    m.pop("status", None)
    meta = dict(m.pop("metadata", None) or {})
    for key in _SERVER_METADATA:
        meta.pop(key, None)
    name = meta.pop("name", None)
    labels = dict(meta.pop("labels", None) or {})
    queue = labels.pop(QUEUE_LABEL, None)
    annotations = dict(meta.pop("annotations", None) or {})
    annotations.pop(_LAST_APPLIED, None)
    logdir = annotations.pop(LOGDIR_ANNOTATION, None)

    spec = dict(m.pop("spec", None) or {})
    replica_specs = dict(spec.pop("pytorchReplicaSpecs", None) or {})
    master = replica_specs.get("Master")
    if not isinstance(master, Mapping):
        raise JobSpecInvalid(
            [FieldError("spec.pytorchReplicaSpecs.Master", "is required: node 0 is the Master")]
        )
    worker = replica_specs.get("Worker")
    workers = int((worker or {}).get("replicas", 1)) if worker else 0
    run_policy = dict(spec.pop("runPolicy", None) or {})

    template = master.get("template") or {}
    pod = template.get("spec") or {}
    container: Mapping[str, Any] = next(
        (c for c in pod.get("containers") or [] if c.get("name") == CONTAINER_NAME), {}
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
    gpus = int(limits[gpu_key]) if gpu_key else 0
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    pvc, shm, owned_volumes = _read_mounts(container, volumes)
    nproc_text = str(spec.pop("nprocPerNode", "") or "")
    # 'auto'/'gpu'/'cpu' cannot be shown in the form: they mean one process per GPU
    # (or per host CPU, the trainer#2407 trap), so the form offers the GPU count.
    nproc = int(nproc_text) if nproc_text.isdigit() else max(gpus, 1)

    wire: dict[str, Any] = {
        "name": name,
        "image": container.get("image"),
        "command": command,
        "args": args,
        "script": script,
        "workdir": container.get("workingDir"),
        "nodes": 1 + workers,
        "gpus": gpus,
        "gpuResource": gpu_key or gpu_resource,
        "cpu": _quantity_text(limits.get("cpu", requests.get("cpu"))),
        "memory": _quantity_text(limits.get("memory", requests.get("memory"))),
        "shm": shm,
        "nprocPerNode": nproc,
        "pvc": [p.to_wire() for p in pvc],
        "env": plain_env,
        "restartPolicy": master.get("restartPolicy"),
        "backoffLimit": run_policy.pop("backoffLimit", None),
        "deadline": run_policy.pop("activeDeadlineSeconds", None),
        "ttl": run_policy.pop("ttlSecondsAfterFinished", None),
        # Absent means the operator's default, None (not ours, Running).
        "cleanPodPolicy": run_policy.pop("cleanPodPolicy", None) or "None",
        "nodeSelector": dict(pod.get("nodeSelector") or {}),
        "tolerations": [dict(t) for t in pod.get("tolerations") or []],
        "labels": labels,
        "annotations": annotations,
        "queue": queue,
        "logdir": logdir or env_logdir,
    }
    extras: dict[str, Any] = {}
    if meta:
        extras["metadata"] = meta
    residual_spec: dict[str, Any] = dict(spec)
    if run_policy:
        residual_spec["runPolicy"] = run_policy
    residual_replicas: dict[str, Any] = {}
    for rtype, rspec in replica_specs.items():
        residue = _replica_residue(rspec or {}, labels, annotations, gpu_key, owned_volumes)
        if residue:
            residual_replicas[rtype] = residue
    if residual_replicas:
        residual_spec["pytorchReplicaSpecs"] = residual_replicas
    if residual_spec:
        extras["spec"] = residual_spec
    if extras:
        wire["extras"] = extras
    # An absent backoffLimit stays absent (null): the operator's default, unlimited.
    return JobSpec.from_wire(wire)


def _gpu_key(limits: Mapping[str, Any], hint: str | None) -> str | None:
    if hint and hint in limits:
        return hint
    for key in limits:
        if key.lower().endswith("/gpu"):
            return key
    return None


def _quantity_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _read_mounts(
    container: Mapping[str, Any], volumes: Mapping[str, Any]
) -> tuple[list[PvcMount], str | None, set[str]]:
    pvc: list[PvcMount] = []
    shm: str | None = None
    owned: set[str] = set()
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        empty_dir = volume.get("emptyDir")
        if mount.get("mountPath") == SHM_MOUNT and isinstance(empty_dir, Mapping):
            if empty_dir.get("medium") == "Memory":
                shm = str(empty_dir.get("sizeLimit") or "") or None
                owned.add(str(mount["name"]))
            continue
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and set(mount) <= {"name", "mountPath", "subPath", "readOnly"}:
            read_only = bool(mount.get("readOnly")) or bool(
                volume["persistentVolumeClaim"].get("readOnly")
            )
            pvc.append(PvcMount(claim, mount["mountPath"], mount.get("subPath") or "", read_only))
            owned.add(str(mount["name"]))
    return pvc, shm, owned


def _replica_residue(
    rspec: Mapping[str, Any],
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    gpu_key: str | None,
    owned_volumes: set[str],
) -> dict[str, Any]:
    """What of one replica spec the form does not own.

    Only containers emptied by taking the form's fields out are dropped; an empty
    object the user wrote elsewhere (``affinity: {}``) is kept as written.
    """
    residue = copy.deepcopy(dict(rspec))
    residue.pop("replicas", None)
    residue.pop("restartPolicy", None)
    template = residue.get("template") or {}
    tmeta = template.get("metadata") or {}
    for key in labels:
        (tmeta.get("labels") or {}).pop(key, None)
    for key in (*annotations, ISTIO_INJECT):
        (tmeta.get("annotations") or {}).pop(key, None)
    _drop_if_empty(tmeta, "labels", "annotations")
    _drop_if_empty(template, "metadata")
    pod = template.get("spec") or {}
    pod.pop("nodeSelector", None)
    pod.pop("tolerations", None)
    pod["volumes"] = [v for v in pod.get("volumes") or [] if v.get("name") not in owned_volumes]
    containers = []
    for container in pod.get("containers") or []:
        if container.get("name") == CONTAINER_NAME:
            _strip_pytorch_container(container, gpu_key, owned_volumes)
            if container == {"name": CONTAINER_NAME}:
                continue  # nothing but its name is left: nothing to keep
        containers.append(container)
    pod["containers"] = containers
    _drop_if_empty(pod, "volumes", "containers")
    _drop_if_empty(template, "spec")
    _drop_if_empty(residue, "template")
    return residue


def _strip_pytorch_container(
    container: dict[str, Any], gpu_key: str | None, owned_volumes: set[str]
) -> None:
    for field in ("image", "command", "args", "workingDir"):
        container.pop(field, None)
    container["env"] = [e for e in container.get("env") or [] if set(e) != {"name", "value"}]
    resources = container.get("resources") or {}
    for part in ("limits", "requests"):
        amounts = resources.get(part) or {}
        for resource in ("cpu", "memory", gpu_key):
            amounts.pop(resource, None)
        _drop_if_empty(resources, part)
    container["volumeMounts"] = [
        v for v in container.get("volumeMounts") or [] if v.get("name") not in owned_volumes
    ]
    _drop_if_empty(container, "env", "resources", "volumeMounts")


def _drop_if_empty(parent: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in parent and parent[key] in ({}, [], None):
            del parent[key]


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Deep-merge ``extra`` into ``base``; lists of named objects merge by ``name``."""
    for key, value in extra.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(current, value)
        elif isinstance(current, list) and isinstance(value, list) and _named(current + value):
            by_name = {item["name"]: item for item in current}
            for item in value:
                if item["name"] in by_name:
                    _merge(by_name[item["name"]], item)
                else:
                    current.append(copy.deepcopy(item))
        else:
            base[key] = copy.deepcopy(value)


def _named(items: list[Any]) -> bool:
    return all(isinstance(i, Mapping) and isinstance(i.get("name"), str) for i in items)
