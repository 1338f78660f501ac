"""``JobSpec``: every field of the job form, validated, with concrete defaults.

The wire form (``from_wire``/``to_wire``) is the JSON body of the ``render`` and
``jobs`` endpoints; its keys are the CLI's long flags in camelCase. ``from_wire``
checks everything and raises ``JobSpecInvalid`` naming each bad field, so that an
invalid job never reaches a manifest. Defaults are resolved there (e.g.
``nprocPerNode`` becomes the GPU count, or 1), so a PyTorchJob's ``JobSpec`` is always
concrete and a round trip through a manifest gives back the same object. A TrainJob's
image and process count stay None when not given: its training runtime decides them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import k8s_rules as rules
from .errors import FieldError, JobSpecInvalid
from .fields import (
    CLEAN_POD_POLICIES,
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_CLEAN_POD_POLICY,
    DEFAULT_GPU_RESOURCE,
    DEFAULT_IMAGE,
    DEFAULT_RDZV_BACKEND,
    DEFAULT_RESTART_POLICY,
    DEFAULT_SHM,
    FIELD,
    FIELDS,
    LOG_ARCHIVE_OFF,
    RESTART_POLICIES,
    TOLERATION_EFFECTS,
    TOLERATION_OPERATORS,
    TRAINJOB_KIND,
    WIRE_FIELDS,
    JobField,
)
from .messages import Message, msg
from .shape import manifest_shape_errors

# Re-exported: the table in fields.py declares them.
__all__ = [
    "CLEAN_POD_POLICIES",
    "DEFAULT_BACKOFF_LIMIT",
    "DEFAULT_CLEAN_POD_POLICY",
    "DEFAULT_GPU_RESOURCE",
    "DEFAULT_IMAGE",
    "DEFAULT_RESTART_POLICY",
    "DEFAULT_SHM",
    "RESTART_POLICIES",
    "TOLERATION_EFFECTS",
    "TOLERATION_OPERATORS",
    "WIRE_FIELDS",
    "JobSpec",
    "PvcMount",
    "Toleration",
]

# What to tell a user who picks Always (shown by the form and the CLI): the operator
# passes it to the pod, so the kubelet restarts a node even after it exits 0.
ALWAYS_RESTART_WARNING = msg("warn_restart_always")

# The operator appends these to every container, so a user value would be silently
# overridden; ours carry the script and the log directory.
OPERATOR_ENV = ("PYTHONUNBUFFERED", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")
RESERVED_ENV_PREFIXES = ("PET_", "PTJOB_")
# Of ours, the one a user sets: the checkpoint a clone resumes from (``job.run``).
USER_PTJOB_ENV = ("PTJOB_RESUME_FROM",)
# A single environment string may not exceed MAX_ARG_STRLEN (128 KiB) on Linux; the
# script travels as one, inside the PyTorchJob object itself.
SCRIPT_MAX_BYTES = 120 * 1024
# Linux's limit on one argument or one NAME=value environment string, its NUL included:
# a longer one makes exec fail (E2BIG) after the job was accepted.
MAX_ARG_STRLEN = 131072
# A TrainJob's initializer ``storageUri`` (Trainer v2.3.0 CRD trainer.kubeflow.org_trainjobs
# .yaml, spec.initializer.{dataset,model}.storageUri: maxLength and the CEL rule).
STORAGE_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://.+$")
MAX_STORAGE_URI = 2048
SHM_MOUNT = "/dev/shm"  # noqa: S108 - a path inside the pod, not a temp file


@dataclass(frozen=True)
class PvcMount:
    """A PersistentVolumeClaim mounted into every replica."""

    claim: str
    mount_path: str
    sub_path: str = ""
    read_only: bool = False

    def to_wire(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "mountPath": self.mount_path,
            "subPath": self.sub_path,
            "readOnly": self.read_only,
        }


@dataclass(frozen=True)
class Toleration:
    """A pod toleration; ``operator`` Exists matches any value of ``key``."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    seconds: int | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "key": self.key,
            "operator": self.operator,
            "value": self.value,
            "effect": self.effect,
        }
        if self.seconds is not None:
            wire["tolerationSeconds"] = self.seconds
        return wire


def writable_mount(mounts: tuple[PvcMount, ...], path: str) -> PvcMount | None:
    """The writable PVC mount that holds ``path`` in the pods, if any."""
    for mount in sorted(mounts, key=lambda m: -len(m.mount_path)):
        if path == mount.mount_path or path.startswith(mount.mount_path.rstrip("/") + "/"):
            return None if mount.read_only else mount
    return None


@dataclass(frozen=True)
class JobSpec:
    """A job as the form, the CLI and the magic describe it.

    ``kind`` is the object it becomes: a PyTorchJob (Training Operator v1), or a
    TrainJob (Kubeflow Trainer v2) on the training runtime ``runtime``.

    ``nodes`` counts pods: node 0 is the Master, the other ``nodes - 1`` are
    Workers; with ``master`` false (a Worker-only job, e.g. elastic, as the Kubeflow
    SDK or upstream examples write them) every node is a Worker. ``gpus``, ``cpu``
    and ``memory`` are per node. Exactly one of ``command`` (a command line;
    ``args`` optional) or ``script`` (Python source shipped inside the job;
    ``args`` go to the script) is set. ``extras`` holds what of a manifest the
    form's fields do not write, so it survives a round trip.
    """

    name: str
    image: str | None  # None: the runtime's (a TrainJob only)
    kind: str = "PyTorchJob"
    runtime: str | None = None
    dataset: str | None = None  # a TrainJob's initializer.dataset.storageUri
    model: str | None = None  # a TrainJob's initializer.model.storageUri
    dataset_secret: str | None = None  # initializer.dataset.secretRef.name
    model_secret: str | None = None  # initializer.model.secretRef.name
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    script: str | None = None
    workdir: str | None = None
    nodes: int = 1
    master: bool = True
    gpus: int = 0
    gpu_resource: str = DEFAULT_GPU_RESOURCE
    cpu: str | None = None
    memory: str | None = None
    shm: str | None = DEFAULT_SHM
    nproc_per_node: int | None = 1  # None: the runtime's rule (a TrainJob only)
    pvc: tuple[PvcMount, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    restart_policy: str = DEFAULT_RESTART_POLICY
    backoff_limit: int | None = DEFAULT_BACKOFF_LIMIT
    deadline: int | None = None
    ttl: int | None = None
    clean_pod_policy: str = DEFAULT_CLEAN_POD_POLICY
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    queue: str | None = None
    priority_class_name: str | None = None
    service_account: str | None = None
    image_pull_secrets: tuple[str, ...] = ()
    logdir: str | None = None
    log_archive: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    max_restarts: int | None = None
    rdzv_backend: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def workers(self) -> int:
        """Worker replicas: every node but the Master (every node without one)."""
        return self.nodes - 1 if self.master else self.nodes

    @property
    def warnings(self) -> list[Message]:
        """What the user should know about this job as it stands (traps a cluster will
        spring the same way): shown by the form, the CLI and the magic."""
        return [ALWAYS_RESTART_WARNING] if self.restart_policy == "Always" else []

    @property
    def elastic(self) -> bool:
        """Whether the job has an ``elasticPolicy`` (any elastic field set)."""
        return self.rdzv_backend is not None

    @property
    def log_archive_base(self) -> str | None:
        """Where the log archive goes in the pods (``<it>/.ptjob-logs/<job>/``), None
        when off: ``logArchive``, else the log directory when it is on a writable PVC
        (the wrapper needs a command or a script to wrap: the image's own entrypoint
        cannot be wrapped)."""
        if self.log_archive == LOG_ARCHIVE_OFF or not (self.command or self.script is not None):
            return None
        if self.log_archive:
            return self.log_archive
        return self.logdir if self.logdir and writable_mount(self.pvc, self.logdir) else None

    def replica_names(self) -> list[str]:
        """``master-0``, ``worker-0`` ... as the views and log prefixes name them."""
        masters = ["master-0"] if self.master else []
        return masters + [f"worker-{i}" for i in range(self.workers)]

    def with_changes(self, **changes: Any) -> JobSpec:
        """A copy with some fields replaced, validated again."""
        wire_of = {f.attr: f.wire for f in FIELDS}
        return JobSpec.from_wire({**self.to_wire(), **{wire_of[k]: v for k, v in changes.items()}})

    # -- wire form ---------------------------------------------------------------

    @classmethod
    def from_wire(
        cls, body: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
    ) -> JobSpec:
        """Validate a job body; ``defaults`` (image, gpuResource, shm) fill gaps."""
        return _WireReader(body, defaults or {}).read()

    def to_wire(self) -> dict[str, Any]:
        """The job body, with every default spelled out."""
        return {f.wire: _wire_value(getattr(self, f.attr)) for f in FIELDS}


def _wire_value(value: Any) -> Any:
    """A ``JobSpec`` attribute as JSON: tuples as lists (of wire models), maps as dicts."""
    if isinstance(value, tuple):
        return [v.to_wire() if hasattr(v, "to_wire") else v for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


def max_name_length(nodes: int, *, master: bool = True) -> int:
    """How long a job name may be so that every pod and Service name fits 63 chars.

    The operator names them ``<job>-master-0`` and ``<job>-worker-<i>`` with i up to
    ``nodes - 2`` (``nodes - 1`` without a Master); the webhook checks only the job
    name, so a longer one is admitted and then hangs when the Services cannot be
    created (trainer#1101).
    """
    return rules.LABEL_MAX - len(_longest_suffix(nodes, master=master))


def _longest_suffix(nodes: int, *, master: bool) -> str:
    workers = nodes - 1 if master else nodes
    suffixes = ([f"-worker-{workers - 1}"] if workers else []) + (["-master-0"] if master else [])
    return max(suffixes, key=len)  # a tie names the worker


def suggest_name(hint: str | None = None) -> str:
    """A fresh, valid job name derived from a script or command name."""
    import secrets  # here: it loads OpenSSL's hashes, which reading jobs never needs

    base = (hint or "").rsplit("/", 1)[-1]
    base = re.sub(r"\.(py|sh|ipynb)$", "", base).lower()
    base = re.sub(r"[^a-z0-9-]+", "-", base).strip("-")
    base = re.sub(r"^[^a-z]+", "", base)[:40].rstrip("-") or "ptjob"
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return f"{base}-{''.join(secrets.choice(alphabet) for _ in range(5))}"


def exec_string_problem(text: str, env_key: str | None = None) -> Message | None:
    """Why ``text`` cannot be one argument (or, with ``env_key``, the environment
    string ``KEY=value``) of a process."""
    if "\x00" in text:
        return msg("exec_nul")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size >= MAX_ARG_STRLEN:
        if env_key is None:
            return msg("argument_size", size=size, maximum=MAX_ARG_STRLEN - 1)
        return msg("env_size", key=env_key, size=size, maximum=MAX_ARG_STRLEN - 1)
    return None


class _WireReader:
    """Reads one job body, collecting every ``FieldError`` before raising."""

    def __init__(self, body: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
        self.body = body
        self.defaults = defaults
        self.errors: list[FieldError] = []

    def fail(self, name: str, code: str, **params: Any) -> None:
        self.errors.append(FieldError(name, Message(code, params)))

    def fail_with(self, name: str, problem: Message) -> None:
        self.errors.append(FieldError(name, problem))

    def read(self) -> JobSpec:
        if not isinstance(self.body, Mapping):
            raise JobSpecInvalid([FieldError("body", msg("json_object"))])
        for key in self.body:
            if key not in FIELD:
                self.fail(str(key), "unknown_field", known=", ".join(WIRE_FIELDS))
        values = {f.attr: getattr(self, f"read_{f.read}")(f) for f in FIELDS}
        # What one field means depends on another:
        self.resolve_runtime_defaults(values)
        if values["name"] is not None:
            self.check_name_length(values["name"], values["nodes"], master=values["master"])
        runtime_command = values["kind"] == TRAINJOB_KIND and values["runtime"] is not None
        self.check_entrypoint(
            values["command"], values["args"], values["script"], optional=runtime_command
        )
        self.check_elastic(values)
        self.check_log_archive(values)
        logdir, shm = values["logdir"], values["shm"]
        if logdir and shm and logdir.startswith(SHM_MOUNT + "/"):
            self.fail("logdir", "logdir_in_shm")
        if self.errors:
            raise JobSpecInvalid(self.errors)
        return JobSpec(**values)

    def resolve_runtime_defaults(self, values: dict[str, Any]) -> None:
        """A TrainJob leaves an image and a process count not given to its runtime (its
        node container's image; the torch plugin's rule: GPUs, else CPUs); a PyTorchJob
        gets ours (the configured image; the GPU count, or 1)."""
        trainjob = values["kind"] == TRAINJOB_KIND
        if values["image"] is None or (trainjob and values["image"] == ""):
            values["image"] = None if trainjob else self.defaults.get("image", DEFAULT_IMAGE)
        image = values["image"]
        if image is not None and (not image or any(c.isspace() for c in image)):
            self.fail("image", "image_reference")
        if values["nproc_per_node"] is None and not trainjob:
            values["nproc_per_node"] = max(values["gpus"], 1)

    # -- the readers of the field table (fields.py: JobField.read) ----------------------

    def read_name(self, f: JobField) -> str | None:
        value = self.text(f.wire, default=None)
        if not value:
            self.fail(f.wire, "name_required")
            return None
        problem = rules.check_dns1035_label(value)
        if problem:
            self.fail_with(f.wire, problem)
            return None
        return value

    def read_image(self, f: JobField) -> str | None:
        """As given (None when absent): ``resolve_runtime_defaults`` checks it."""
        return self.text(f.wire, default=None)

    def read_kind(self, f: JobField) -> str:
        """One of the kinds, in any case (``--kind trainjob``), as the kind spells it."""
        value = self.body.get(f.wire, f.default)
        if value is None:
            return str(f.default)
        chosen = next(
            (k for k in f.choices if isinstance(value, str) and k.lower() == value.lower()),
            None,
        )
        if chosen is None:
            self.fail(f.wire, "one_of", choices=", ".join(f.choices), got=repr(value))
            return str(f.default)
        return chosen

    def read_runtime(self, f: JobField) -> str | None:
        value = self.text(f.wire, default=None)
        if value is None:
            return None
        problem = rules.check_dns1123_subdomain(value)
        if problem:
            self.fail(f.wire, "runtime_name", problem=problem)
            return None
        return value

    def read_storage_uri(self, f: JobField) -> str | None:
        """A URI as the TrainJob CRD takes it (``storageUri``: ``scheme://...``, at most
        2048 characters); an empty one is unset."""
        value = self.text(f.wire, default=None)
        if not value:
            return None
        if len(value) > MAX_STORAGE_URI or not STORAGE_URI.match(value):
            self.fail(f.wire, "storage_uri", maximum=MAX_STORAGE_URI, got=repr(value[:80]))
            return None
        return value

    def read_secret_name(self, f: JobField) -> str | None:
        return self.object_name(f.wire, "secret_name")

    def read_resource_name(self, f: JobField) -> str:
        value = self.text(f.wire, default=self.defaults.get(f.wire, f.default))
        if value is not None and (not value or rules.check_qualified_name(value)):
            self.fail(f.wire, "resource_name")
        return value or f.default

    def read_words(self, f: JobField) -> tuple[str, ...]:
        return self.string_list(f.wire)

    def read_script(self, f: JobField) -> str | None:
        script = self.body.get(f.wire)
        if script is not None and not isinstance(script, str):
            self.fail(f.wire, "script_text")
            return None
        return script

    def read_path(self, f: JobField) -> str | None:
        return self.path(f.wire)

    def read_count(self, f: JobField) -> int:
        return self.integer(f.wire, default=f.default, minimum=f.minimum, maximum=f.maximum)

    def read_nproc(self, f: JobField) -> int | None:
        """None when absent: resolved in ``resolve_runtime_defaults``."""
        return self.optional_integer(f.wire, default=None, minimum=f.minimum, maximum=f.maximum)

    def read_optional_count(self, f: JobField) -> int | None:
        return self.optional_integer(
            f.wire, default=f.default, minimum=f.minimum, maximum=f.maximum
        )

    def read_flag(self, f: JobField) -> bool:
        return self.boolean(f.wire, default=f.default)

    def read_choice(self, f: JobField) -> str | None:
        """One of the choices; the default (None for a nullable one) when absent."""
        value: str | None = self.choice(f.wire, f.choices, f.default)
        return value

    def read_quantity(self, f: JobField) -> str | None:
        return self.quantity(f.wire, default=f.default, memory=False)

    def read_memory(self, f: JobField) -> str | None:
        return self.quantity(f.wire, default=f.default, memory=True)

    def read_shm(self, f: JobField) -> str | None:
        default = self.defaults.get(f.wire, f.default) or None
        return self.quantity(f.wire, default=default, memory=True, off_values=("", "0", "off"))

    def read_label_map(self, f: JobField) -> dict[str, str]:
        return self.label_map(f.wire, values_are_labels=True)

    def read_annotation_map(self, f: JobField) -> dict[str, str]:
        return self.label_map(f.wire, values_are_labels=False)

    def read_env(self, f: JobField) -> dict[str, str]:
        return self.env()

    def read_pvc(self, f: JobField) -> tuple[PvcMount, ...]:
        return self.pvc_mounts()

    def read_tolerations(self, f: JobField) -> tuple[Toleration, ...]:
        return self.tolerations()

    def read_log_archive(self, f: JobField) -> str | None:
        if self.body.get(f.wire) == LOG_ARCHIVE_OFF:
            return LOG_ARCHIVE_OFF
        return self.path(f.wire)

    def read_queue(self, f: JobField) -> str | None:
        return self.queue()

    def read_priority_class(self, f: JobField) -> str | None:
        return self.object_name(f.wire, "priority_class_name")

    def read_object_name(self, f: JobField) -> str | None:
        return self.object_name(f.wire, "object_name")

    def read_names(self, f: JobField) -> tuple[str, ...]:
        """Names of Kubernetes objects, each a DNS-1123 subdomain, duplicates dropped."""
        names = self.string_list(f.wire)
        for index, name in enumerate(names):
            problem = rules.check_dns1123_subdomain(name.strip())
            if problem:
                self.fail(f"{f.wire}[{index}]", "object_name", problem=problem)
        return tuple(dict.fromkeys(name.strip() for name in names))

    def read_extras(self, f: JobField) -> dict[str, Any]:
        return self.extras()

    # -- scalars -----------------------------------------------------------------

    def text(self, name: str, *, default: str | None) -> str | None:
        value = self.body.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            self.fail(name, "string_type", got=type(value).__name__)
            return default
        return value.strip()

    def integer(self, name: str, *, default: int, minimum: int, maximum: int | None = None) -> int:
        value = self.optional_integer(name, default=default, minimum=minimum, maximum=maximum)
        return default if value is None else value

    def optional_integer(
        self, name: str, *, default: int | None, minimum: int, maximum: int | None = None
    ) -> int | None:
        """Absent or ``""``: the default; an explicit ``null``: unset."""
        if name not in self.body or self.body[name] == "":
            return default
        value = self.body[name]
        if value is None:
            return None
        number: int | None = None
        if isinstance(value, bool):
            number = None
        elif isinstance(value, int):
            number = value
        elif isinstance(value, str) and re.fullmatch("[+-]?[0-9]+", value.strip(" \t\r\n")):
            # Only blanks around (int() takes no '\x1f', which \s allows). Past Python's
            # digit limit int() raises; any such number is out of range anyway.
            number = int(value) if len(value) < 100 else rules.INT32_MAX + 1
        if number is None:
            self.fail(name, "whole_number", minimum=minimum, got=repr(value))
            return default
        if number < minimum:
            self.fail(name, "whole_number", minimum=minimum, got=number)
            return default
        if number > (rules.INT32_MAX if maximum is None else maximum):
            self.fail(name, "at_most", maximum=maximum or rules.INT32_MAX, got=number)
            return default
        return number

    def boolean(self, name: str, *, default: bool) -> bool:
        value = self.body.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(name, "true_or_false", got=repr(value))
            return default
        return value

    def choice(self, name: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        value = self.body.get(name)
        if value is None or value == "":
            return default
        if value not in allowed:
            self.fail(name, "one_of", choices=", ".join(allowed), got=repr(value))
            return default
        return str(value)

    def quantity(
        self,
        name: str,
        *,
        default: str | None,
        memory: bool,
        off_values: tuple[str, ...] = (),
    ) -> str | None:
        if name not in self.body:
            return default
        value = self.body[name]
        if value is None or value in off_values:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.fail(name, "quantity_string", got=repr(value))
            return default
        problem = rules.check_quantity(value, what=name, memory=memory)
        if problem:
            self.fail_with(name, problem)
            return default
        return value

    def object_name(self, name: str, code: str) -> str | None:
        """The name of a Kubernetes object (a DNS-1123 subdomain), None when empty;
        ``code``: the message that says what is wrong around the rule's ``problem``."""
        value = self.text(name, default=None)
        problem = rules.check_dns1123_subdomain(value) if value else None
        if problem:
            self.fail(name, code, problem=problem)
        return value or None

    def path(self, name: str) -> str | None:
        value = self.text(name, default=None)
        if not value:
            return None
        problem = rules.check_absolute_path(value)
        if problem:
            self.fail_with(name, problem)
            return None
        return rules.normalise_path(value)

    def check_name_length(self, name: str, nodes: int, *, master: bool) -> None:
        limit = max_name_length(nodes, master=master)
        if len(name) > limit:
            last = name + _longest_suffix(nodes, master=master)
            self.fail("name", "name_length", maximum=limit, nodes=nodes, length=len(name), pod=last)

    def queue(self) -> str | None:
        value = self.text("queue", default=None)
        if not value:
            return None
        problem = rules.check_label_value(value)
        if problem:
            self.fail("queue", "queue_name", problem=problem)
            return None
        return value

    # -- command or script ----------------------------------------------------------

    def string_list(self, name: str) -> tuple[str, ...]:
        value = self.body.get(name)
        if value is None:
            return ()
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            self.fail(name, "string_list")
            return ()
        for index, word in enumerate(value):
            problem = exec_string_problem(word)
            if problem:
                self.fail_with(f"{name}[{index}]", problem)
        return tuple(value)

    def check_elastic(self, values: dict[str, Any]) -> None:
        """Elastic: the rendezvous backend defaults to c10d once any elastic field is
        set; the Worker count must lie within [minNodes, maxNodes], or torchrun waits
        for Workers that never come (or turns extra ones away)."""
        elastic = ("min_nodes", "max_nodes", "max_restarts", "rdzv_backend")
        if all(values[k] is None for k in elastic):
            return
        if values["rdzv_backend"] is None:
            values["rdzv_backend"] = DEFAULT_RDZV_BACKEND
        workers = values["nodes"] - 1 if values["master"] else values["nodes"]
        low, high = values["min_nodes"], values["max_nodes"]
        if workers < 1:
            first = next(FIELD[f.wire] for f in FIELDS if f.attr in elastic and values[f.attr])
            self.fail(first.wire, "elastic_needs_workers")
        elif low is not None and low > workers:
            self.fail("minNodes", "min_nodes_above_workers", workers=workers)
        elif high is not None and high < max(workers, low or 1):
            self.fail("maxNodes", "max_nodes_below_workers", workers=workers)

    def check_log_archive(self, values: Mapping[str, Any]) -> None:
        """A chosen archive directory must be on a writable PVC of the job, and there
        must be a command or a script to wrap."""
        chosen = values["log_archive"]
        if not chosen or chosen == LOG_ARCHIVE_OFF:
            return
        if not values["command"] and values["script"] is None:
            self.fail("logArchive", "log_archive_needs_command", off=repr(LOG_ARCHIVE_OFF))
        pvc = tuple(values["pvc"] or ())
        if writable_mount(pvc, chosen) is None:
            mounts = ", ".join(m.mount_path for m in pvc if not m.read_only)
            off = repr(LOG_ARCHIVE_OFF)
            if mounts:
                self.fail("logArchive", "log_archive_mounts", mounts=mounts, off=off, got=chosen)
            else:
                self.fail("logArchive", "log_archive_no_pvc", off=off, got=chosen)

    def check_entrypoint(
        self,
        command: tuple[str, ...],
        args: tuple[str, ...],
        script: str | None,
        *,
        optional: bool = False,
    ) -> None:
        """One of a command and a script; neither only where the runtime has its own
        (``optional``: a TrainJob on a named runtime, e.g. a torchtune one, runs the
        runtime's command as written)."""
        if script is not None and command:
            self.fail("command", "command_and_script")
        elif script is not None:
            if not script.strip():
                self.fail("script", "script_empty")
            if "\x00" in script:
                self.fail("script", "script_nul")
            size = len(script.encode("utf-8"))
            if size > SCRIPT_MAX_BYTES:
                self.fail("script", "script_size", size=size, maximum=SCRIPT_MAX_BYTES)
        elif not command and not args and not optional:
            self.fail("command", "command_required")
        elif command and not command[0].strip():
            self.fail("command", "command_empty_word")

    # -- collections ---------------------------------------------------------------

    def mapping(self, name: str) -> Mapping[str, Any]:
        value = self.body.get(name)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(name, "string_map")
            return {}
        return value

    def label_map(self, name: str, *, values_are_labels: bool) -> dict[str, str]:
        result: dict[str, str] = {}
        for key, value in self.mapping(name).items():
            where = f"{name}[{key}]"
            problem = rules.check_qualified_name(str(key))
            if problem:
                self.fail(where, "map_key", key=repr(key), problem=problem)
                continue
            if not isinstance(value, str):
                self.fail(where, "map_value_string")
                continue
            if values_are_labels:
                problem = rules.check_label_value(value)
                if problem:
                    self.fail(where, "map_value", value=repr(value), problem=problem)
                    continue
            result[str(key)] = value
        return result

    def env(self) -> dict[str, str]:
        result: dict[str, str] = {}
        for key, value in self.mapping("env").items():
            where = f"env[{key}]"
            problem = rules.check_env_name(str(key))
            if problem:
                self.fail(where, "env_name", key=repr(key), problem=problem)
                continue
            if key in OPERATOR_ENV or (
                str(key).startswith(RESERVED_ENV_PREFIXES) and key not in USER_PTJOB_ENV
            ):
                self.fail(where, "env_reserved", key=key)
                continue
            if not isinstance(value, str):
                self.fail(where, "map_value_string")
                continue
            problem = exec_string_problem(f"{key}={value}", env_key=str(key))
            if problem:
                self.fail_with(where, problem)
                continue
            result[str(key)] = value
        return result

    def pvc_mounts(self) -> tuple[PvcMount, ...]:
        value = self.body.get("pvc")
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            self.fail("pvc", "pvc_list")
            return ()
        mounts: list[PvcMount] = []
        seen: dict[str, int] = {}
        for index, item in enumerate(value):
            where = f"pvc[{index}]"
            if not isinstance(item, Mapping):
                self.fail(where, "pvc_item")
                continue
            errors_before = len(self.errors)
            claim = item.get("claim")
            if not isinstance(claim, str) or not claim:
                self.fail(f"{where}.claim", "pvc_claim_required")
            else:
                problem = rules.check_dns1123_subdomain(claim)
                if problem:
                    self.fail_with(f"{where}.claim", problem)
            mount = item.get("mountPath")
            if not isinstance(mount, str) or not mount:
                self.fail(f"{where}.mountPath", "mount_path_required")
                mount = ""
            else:
                problem = rules.check_absolute_path(mount)
                if problem:
                    self.fail_with(f"{where}.mountPath", problem)
                else:
                    mount = rules.normalise_path(mount)
                    if mount == "/":
                        self.fail(f"{where}.mountPath", "mount_root")
                    elif mount == SHM_MOUNT or mount.startswith(SHM_MOUNT + "/"):
                        self.fail(f"{where}.mountPath", "mount_shm")
                    elif mount in seen:
                        self.fail(
                            f"{where}.mountPath", "mount_repeated", path=mount, index=seen[mount]
                        )
                    else:
                        seen[mount] = index
            sub_path = item.get("subPath") or ""
            if not isinstance(sub_path, str):
                self.fail(f"{where}.subPath", "must_be_string")
                sub_path = ""
            elif sub_path:
                problem = rules.check_relative_path(sub_path)
                if problem:
                    self.fail_with(f"{where}.subPath", problem)
                else:
                    sub_path = rules.normalise_path("/" + sub_path)[1:]
            read_only = item.get("readOnly", False)
            if not isinstance(read_only, bool):
                self.fail(f"{where}.readOnly", "must_be_boolean")
            unknown = set(item) - {"claim", "mountPath", "subPath", "readOnly"}
            if unknown:
                self.fail(where, "unknown_keys", keys=str(sorted(unknown)))
            if len(self.errors) == errors_before:
                mounts.append(PvcMount(str(claim), mount, sub_path, bool(read_only)))
        return tuple(mounts)

    def tolerations(self) -> tuple[Toleration, ...]:
        value = self.body.get("tolerations")
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            self.fail("tolerations", "tolerations_list")
            return ()
        result: list[Toleration] = []
        for index, item in enumerate(value):
            where = f"tolerations[{index}]"
            if not isinstance(item, Mapping):
                self.fail(where, "toleration_item")
                continue
            errors_before = len(self.errors)
            key = item.get("key") or ""
            operator = item.get("operator") or ("Exists" if not item.get("value") else "Equal")
            value_ = item.get("value") or ""
            effect = item.get("effect") or ""
            seconds = item.get("tolerationSeconds")
            if not isinstance(key, str) or (key and rules.check_qualified_name(key)):
                self.fail(f"{where}.key", "toleration_key", key=repr(key))
            if operator not in TOLERATION_OPERATORS:
                self.fail(
                    f"{where}.operator",
                    "one_of",
                    choices=", ".join(TOLERATION_OPERATORS),
                    got=repr(operator),
                )
            if not isinstance(value_, str) or rules.check_label_value(value_):
                self.fail(f"{where}.value", "toleration_value", value=repr(value_))
            elif operator == "Exists" and value_:
                self.fail(f"{where}.value", "toleration_exists_value")
            if operator == "Equal" and not key:
                self.fail(f"{where}.key", "toleration_key_required")
            if effect and effect not in TOLERATION_EFFECTS:
                self.fail(
                    f"{where}.effect",
                    "toleration_effect",
                    choices=", ".join(TOLERATION_EFFECTS),
                    got=repr(effect),
                )
            if seconds is not None and (
                isinstance(seconds, bool) or not isinstance(seconds, int) or effect != "NoExecute"
            ):
                self.fail(f"{where}.tolerationSeconds", "toleration_seconds")
            unknown = set(item) - {"key", "operator", "value", "effect", "tolerationSeconds"}
            if unknown:
                self.fail(where, "unknown_keys", keys=str(sorted(unknown)))
            if len(self.errors) == errors_before:
                result.append(Toleration(key, operator, value_, effect, seconds))
        return tuple(result)

    def extras(self) -> dict[str, Any]:
        value = self.body.get("extras")
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail("extras", "extras_object")
            return {}
        shape_errors = manifest_shape_errors(value, prefix="extras", kind=self.body.get("kind"))
        self.errors.extend(shape_errors)
        return {} if shape_errors else dict(value)
