"""Manifest pieces every kind writes and reads the same way: where a field lives
(``PodSpecKey``, ``Bespoke``, ``CannotExpress``: each kind's ``PLACES`` table), a PVC's
volume name, the ``/dev/shm`` volume, resources, tolerations, server-set metadata, and
the lossless round trip (``patch``: what a rebuilt manifest lacks of the original;
``merge``: put it back, named lists by name). Pure."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..job import k8s_rules as rules
from ..job.errors import FieldError, JobSpecInvalid
from ..job.fields import FIELD, LOG_ARCHIVE_OFF
from ..job.messages import Message, msg
from ..job.spec import SHM_MOUNT, JobSpec, PvcMount, Toleration
from . import log_archive

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
SERVER_METADATA = (
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
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NOTHING: Any = object()  # patch: nothing to add


# -- where each field lives: each kind declares it for every field in one table -------


def _as_is(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class PodSpecKey:
    """A field that is one key of the job's pod spec (every replica's; a TrainJob's in
    its runtime patch): written when set, read back with ``read`` (absent: ``None``)."""

    key: str
    write: Callable[[Any], Any] = _as_is
    read: Callable[[Any], Any] = _as_is

    @classmethod
    def refs(cls, key: str) -> PodSpecKey:
        """A list of names the pod spec holds as references ``[{name}]``."""
        return cls(
            key,
            write=lambda names: [{"name": name} for name in names],
            read=lambda refs: [r.get("name") for r in refs or [] if isinstance(r, Mapping)],
        )


@dataclass(frozen=True)
class Bespoke:
    """A field the kind's builder and parser write themselves, at ``where``."""

    where: str


@dataclass(frozen=True)
class CannotExpress:
    """A field the kind cannot express: it must keep ``default``; ``why`` says what
    stands instead (the form hides it for the kind)."""

    default: Any
    why: Message


Place = PodSpecKey | Bespoke | CannotExpress


def write_pod_fields(spec: JobSpec, places: Mapping[str, Place], pod_spec: dict[str, Any]) -> None:
    """Put the set ``PodSpecKey`` fields of ``spec`` into ``pod_spec``."""
    for wire, place in places.items():
        value = getattr(spec, FIELD[wire].attr)
        if isinstance(place, PodSpecKey) and value:
            pod_spec[place.key] = place.write(value)


def read_pod_fields(pod_spec: Mapping[str, Any], places: Mapping[str, Place]) -> dict[str, Any]:
    """The ``PodSpecKey`` fields of a pod spec, by wire name."""
    return {
        wire: place.read(pod_spec.get(place.key))
        for wire, place in places.items()
        if isinstance(place, PodSpecKey)
    }


def cannot_express(spec: JobSpec, places: Mapping[str, Place], kind: str) -> list[FieldError]:
    """The fields of ``spec`` set to what ``kind`` cannot express, each named."""
    problems = []
    for wire, place in places.items():
        value = getattr(spec, FIELD[wire].attr)
        if isinstance(place, CannotExpress) and value != place.default:
            problems.append(
                FieldError(wire, msg("cannot_express", value=repr(value), kind=kind, why=place.why))
            )
    return problems


def unexpressed(places: Mapping[str, Place]) -> frozenset[str]:
    """The wire names of the fields a kind cannot express."""
    return frozenset(w for w, place in places.items() if isinstance(place, CannotExpress))


NODE_SELECTOR = PodSpecKey("nodeSelector", write=dict, read=lambda v: dict(v or {}))
TOLERATIONS = PodSpecKey(
    "tolerations",
    write=lambda items: [toleration(t) for t in items],
    read=lambda v: [dict(t) for t in v or []],
)


def require_kind(manifest: Mapping[str, Any], api_version: str, kind: str) -> None:
    """``JobSpecInvalid`` naming ``kind`` unless the manifest is a ``kind`` of ``api_version``."""
    if manifest.get("apiVersion") != api_version or manifest.get("kind") != kind:
        got = f"{manifest.get('kind')!r} of {manifest.get('apiVersion')!r}"
        raise JobSpecInvalid(
            [FieldError("kind", msg("manifest_kind", kind=kind, version=api_version, got=got))]
        )


def clean_metadata(manifest: dict[str, Any]) -> None:
    """Drop ``status`` and what the API server sets (uid, resourceVersion, kubectl's
    last-applied copy...) from a manifest read back, so it can be submitted again."""
    manifest.pop("status", None)
    meta = dict(manifest.get("metadata") or {})
    for key in SERVER_METADATA:
        meta.pop(key, None)
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)
    meta["annotations"] = annotations
    drop_if_empty(meta, "annotations")
    manifest["metadata"] = meta


def job_metadata(spec: JobSpec, namespace: str | None) -> dict[str, Any]:
    """The job object's metadata: name, namespace, labels with the Kueue queue,
    annotations with the TensorBoard log directory."""
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
    return metadata


def read_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``job_metadata`` read back: the job body's labels, queue, annotations, logdir."""
    labels = dict(meta.get("labels") or {})
    queue = labels.pop(QUEUE_LABEL, None)
    annotations = dict(meta.get("annotations") or {})
    logdir = annotations.pop(LOGDIR_ANNOTATION, None)
    return {"labels": labels, "queue": queue, "annotations": annotations, "logdir": logdir}


def entrypoint(
    spec: JobSpec, launcher: str, replica_type: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The main container's ``command``/``args`` (a script goes through the bootstrap,
    started by ``launcher``: ``python`` or ``torchrun``; with a log archive, all of it
    through the archive wrapper, told its replica by ``replica_type``: see
    ``log_archive.archive_env``) and its env list (the user's, then the log directory,
    the script and the archive's)."""
    run: dict[str, Any] = {}
    if spec.script is not None:
        run["command"] = list(BOOTSTRAP_COMMAND)
        run["args"] = [launcher, "--", *spec.args]
    else:
        if spec.command:
            run["command"] = list(spec.command)
        if spec.args:
            run["args"] = list(spec.args)
    env = [{"name": k, "value": v} for k, v in spec.env.items()]
    if spec.logdir:
        env.append({"name": LOGDIR_ENV, "value": spec.logdir})
    if spec.script is not None:
        env.append({"name": SCRIPT_ENV, "value": spec.script})
    archive = spec.log_archive_base
    if archive is not None and spec.name:
        run["command"] = log_archive.wrap(run["command"])
        env += log_archive.archive_env(archive, spec.name, replica_type)
    return run, env


def read_entrypoint(container: Mapping[str, Any]) -> dict[str, Any]:
    """``entrypoint`` read back from a container (or a TrainJob's ``trainer``): the job
    body's command, args, script, plain env and the log directory the env names."""
    plain_env = {
        e["name"]: e["value"]
        for e in container.get("env") or []
        if isinstance(e, Mapping)
        and set(e) == {"name", "value"}
        and isinstance(e.get("value"), str)
    }
    script = plain_env.pop(SCRIPT_ENV, None)
    logdir = plain_env.pop(LOGDIR_ENV, None)
    command, wrapped = log_archive.unwrap(container.get("command") or [])
    archive = plain_env.get(log_archive.ARCHIVE_ENV) if wrapped else None
    if wrapped:
        for name in log_archive.ARCHIVE_ENVS:
            plain_env.pop(name, None)
    args: list[str] = list(container.get("args") or [])
    if script is not None and tuple(command) == BOOTSTRAP_COMMAND and "--" in args:
        command, args = [], args[args.index("--") + 1 :]
    else:
        script = None
    return {
        "command": command,
        "args": args,
        "script": script,
        "env": plain_env,
        "logdir": logdir,
        "archive": log_archive.base_of(archive) if archive else None,
    }


def archive_field(wire: Mapping[str, Any], base: str | None) -> str | None:
    """``logArchive`` of a job body read back from a manifest whose wrapper writes under
    ``base`` (None: not wrapped): None where that is the default, else what was chosen."""
    default = JobSpec.from_wire({**wire, "logArchive": None}).log_archive_base
    if base is None:
        return LOG_ARCHIVE_OFF if default else None
    return None if base == default else base


def resources(spec: JobSpec) -> dict[str, Any]:
    """Requests and limits of one node: CPU and memory both ways, GPUs as limits."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, value in (("cpu", spec.cpu), ("memory", spec.memory)):
        if value:
            requests[key] = limits[key] = value
    if spec.gpus:
        limits[spec.gpu_resource] = spec.gpus
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def volumes_and_mounts(spec: JobSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The pod's volumes (one per claim, the memory-backed ``/dev/shm``) and the main
    container's mounts of them."""
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
    return volumes, mounts


def toleration(t: Toleration) -> dict[str, Any]:
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
    import hashlib  # here: it loads OpenSSL, which reading jobs never needs

    digest = hashlib.sha256(claim.encode()).hexdigest()[:8]
    stem = re.sub(r"[^a-z0-9-]", "-", claim)[:50].strip("-")
    return f"pvc-{stem}-{digest}"


def gpu_key(limits: Mapping[str, Any], hint: str | None) -> str | None:
    if hint and hint in limits:
        return hint
    for key in limits:
        if key.lower().endswith("/gpu"):
            return key
    return None


def gpu_count(value: Any, key: str) -> int:
    """A GPU limit: a whole number (Kubernetes refuses fractions of extended resources)."""
    text = str(value)
    if isinstance(value, bool) or not re.fullmatch("[0-9]{1,9}", text):
        raise JobSpecInvalid([FieldError("gpus", msg("gpu_limit", key=key, got=repr(text)))])
    return int(text)


def quantity_text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_mounts(
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


def patch(actual: Any, built: Any) -> Any:
    """What ``merge(built, patch)`` needs to keep every field of ``actual``: its values
    where they differ, compared key by key and named lists item by item (by name);
    ``NOTHING`` when ``built`` already has all of it."""
    if actual == built:
        return NOTHING
    if isinstance(actual, Mapping) and isinstance(built, Mapping):
        out: dict[str, Any] = {}
        for key, value in actual.items():
            sub = patch(value, built[key]) if key in built else copy.deepcopy(value)
            if sub is not NOTHING:
                out[key] = sub
        return out or NOTHING
    if isinstance(actual, list) and isinstance(built, list):
        mine, theirs = by_name(actual), by_name(built)
        if mine is None or theirs is None:
            return copy.deepcopy(actual)
        # In the order _merge gives them (the built ones, then the new), so that a patch
        # read back from its own result is the same patch.
        items = []
        for name, item in theirs.items():
            sub = patch(mine[name], item) if name in mine else NOTHING
            if sub is not NOTHING:
                items.append({"name": name, **sub})
        items += [copy.deepcopy(item) for name, item in mine.items() if name not in theirs]
        return items or NOTHING
    return copy.deepcopy(actual)


def by_name(items: list[Any]) -> dict[str, Any] | None:
    """The items by ``name`` if every item is an object with a unique string name."""
    if not all(isinstance(i, Mapping) and isinstance(i.get("name"), str) for i in items):
        return None
    by_name = {i["name"]: i for i in items}
    return by_name if len(by_name) == len(items) else None


def drop_if_empty(parent: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in parent and parent[key] in ({}, [], None):
            del parent[key]


def merge(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Deep-merge ``extra`` into ``base``; lists of uniquely named objects merge by ``name``."""
    for key, value in extra.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merge(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            present, added = by_name(current), by_name(value)
            if present is None or added is None:
                base[key] = copy.deepcopy(value)
                continue
            for name, item in added.items():
                if name in present:
                    merge(present[name], item)
                else:
                    current.append(copy.deepcopy(item))
        else:
            base[key] = copy.deepcopy(value)
