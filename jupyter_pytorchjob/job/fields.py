"""The fields of a job, declared once.

Each row names a field of the REST job body (``wire``, camelCase of the CLI's long
flag), how it is read and checked (``read``: a ``spec._WireReader`` method), its
default and choices, the CLI flag that sets it, the form section it sits in and its
help. Derived from this table: ``JobSpec.from_wire``/``to_wire`` (spec.py), the job
flags of ``ptjob``/``%ptjob`` and their messages (arguments.py), the ``fields`` of
``GET config`` (the form's choices and defaults), and the ``JobBody`` schema that
tests/test_fields.py holds ``api/openapi.yaml`` and ``src/tokens.ts`` to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_SHM = "2Gi"
DEFAULT_RESTART_POLICY = "OnFailure"
DEFAULT_BACKOFF_LIMIT = 3
# None, as the operator's own default (pytorch_defaults.go:78-80 at v1.9.4): Running
# deletes Running pods, and a replica that reached the backoff limit under OnFailure is
# one (CrashLoopBackOff), so the only log of the failure would go with it.
DEFAULT_CLEAN_POD_POLICY = "None"

RESTART_POLICIES = ("OnFailure", "Never", "Always", "ExitCode")
CLEAN_POD_POLICIES = ("Running", "All", "None")
TOLERATION_OPERATORS = ("Equal", "Exists")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# torchrun's rendezvous backends the operator passes on (PET_RDZV_BACKEND); c10d needs
# nothing but the job itself.
RDZV_BACKENDS = ("c10d", "etcd", "etcd-v2")
DEFAULT_RDZV_BACKEND = "c10d"

# logArchive's value that keeps no archive (kinds/log_archive.py).
LOG_ARCHIVE_OFF = "off"

# The job kinds (jupyter_pytorchjob.kinds registers one for each; tests/test_kinds.py
# holds the two lists together).
TRAINJOB_KIND = "TrainJob"
KINDS = ("PyTorchJob", TRAINJOB_KIND)

#: The form's sections, in order.
SECTIONS = ("basics", "resources", "storage", "elastic", "advanced")


# The most nodes (pods) a job may have: Kubernetes supports clusters of at most 5,000
# nodes (kubernetes.io/docs/setup/best-practices/cluster-large), and a job's pods beyond
# that cannot all run; the local backend's own limit (per CPU) is lower still.
MAX_NODES = 5000


@dataclass(frozen=True)
class JobField:
    """One field of the job body.

    ``read`` names the reader (``spec._WireReader.read_<read>``) and with it the
    field's JSON type; ``nullable``: an explicit ``null`` is a value (unset).
    ``cli`` says how the flag becomes the wire value: ``value`` (as typed),
    ``pairs`` (repeatable K=V), ``pvc``/``toleration`` (repeatable, parsed),
    ``false`` (a switch that sets false), ``list`` (repeatable, each a value),
    ``script``/``command`` (handled by the parser itself) or ``""`` (no flag).

    The form: ``form`` names its codec (how the form edits it, ``FORM_CODECS``;
    default: its reader's), ``label`` and ``hint`` what it says of a field that
    ``src/form/texts.ts`` does not describe (translated through the zh_CN catalogue).
    ``local``: whether the field changes anything on the local backend (which says
    so when one that does not is set).
    """

    wire: str
    read: str
    section: str
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: int = 0
    maximum: int | None = None  # None: any int32
    nullable: bool = False
    flag: str = ""
    metavar: str | None = None
    cli: str = "value"
    form: str = ""
    label: str = ""
    hint: str = ""
    local: bool = True

    @property
    def attr(self) -> str:
        """The ``JobSpec`` attribute: the wire name in snake_case."""
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in self.wire)

    @property
    def repeatable(self) -> bool:
        return self.cli in ("pairs", "pvc", "toleration", "list")

    @property
    def codec(self) -> str:
        """How the form edits it: one of ``FORM_CODECS``."""
        return self.form or _FORM_OF_READER[self.read]


FIELDS: tuple[JobField, ...] = (
    JobField(
        "name",
        "name",
        "basics",
        "job name (default: derived from the script, plus a random suffix)",
        flag="--name",
    ),
    JobField(
        "image",
        "image",
        "basics",
        "container image of every replica (a TrainJob's default: its runtime's)",
        default=DEFAULT_IMAGE,
        nullable=True,
        flag="--image",
    ),
    JobField(
        "kind",
        "kind",
        "basics",
        "the kind of job object: PyTorchJob (Kubeflow Training Operator v1) or TrainJob "
        "(Kubeflow Trainer v2), any case",
        default="PyTorchJob",
        choices=KINDS,
        flag="--kind",
        metavar="KIND",
    ),
    JobField(
        "runtime",
        "runtime",
        "basics",
        "the Kubeflow Trainer runtime a TrainJob runs on (default: torch-distributed)",
        nullable=True,
        flag="--runtime",
        metavar="NAME",
    ),
    JobField(
        "command",
        "words",
        "basics",
        "the command line, one word per item",
        flag="COMMAND (after --)",
        cli="command",
    ),
    JobField(
        "args",
        "words",
        "basics",
        "arguments of the command or of the script",
        flag="ARGS (after --)",
        cli="command",
    ),
    JobField(
        "script",
        "script",
        "basics",
        "ship this Python file inside the job and run it",
        nullable=True,
        flag="--script",
        metavar="FILE",
        cli="script",
    ),
    JobField(
        "workdir",
        "path",
        "basics",
        "working directory in the container",
        nullable=True,
        flag="--workdir",
        metavar="DIR",
    ),
    JobField(
        "nodes",
        "count",
        "resources",
        "pods: node 0 is the Master, the rest Workers",
        default=1,
        minimum=1,
        maximum=MAX_NODES,
        flag="--nodes",
        metavar="N",
    ),
    JobField(
        "master",
        "flag",
        "resources",
        "every node a Worker, no Master (the operator then sets no RANK, WORLD_SIZE, "
        "MASTER_ADDR; e.g. elastic jobs)",
        default=True,
        flag="--no-master",
        cli="false",
    ),
    JobField(
        "gpus",
        "count",
        "resources",
        "GPUs per node",
        default=0,
        flag="--gpus",
        metavar="G",
    ),
    JobField(
        "gpuResource",
        "resource_name",
        "resources",
        "GPU resource name",
        default=DEFAULT_GPU_RESOURCE,
        flag="--gpu-resource",
        metavar="R",
    ),
    JobField(
        "cpu",
        "quantity",
        "resources",
        "CPU per node, a quantity such as 4 or 500m",
        nullable=True,
        flag="--cpu",
        metavar="Q",
    ),
    JobField(
        "memory",
        "memory",
        "resources",
        "memory per node, a quantity such as 16Gi",
        nullable=True,
        flag="--memory",
        metavar="Q",
    ),
    JobField(
        "shm",
        "shm",
        "storage",
        "size of /dev/shm, e.g. 8Gi; 0 or off for none",
        default=DEFAULT_SHM,
        nullable=True,
        flag="--shm",
        metavar="SIZE",
    ),
    JobField(
        "nprocPerNode",
        "nproc",
        "resources",
        "processes per node (torchrun); default GPUs or 1 (a TrainJob's: its runtime's "
        "rule, GPUs else CPUs)",
        minimum=1,
        nullable=True,
        flag="--nproc-per-node",
        metavar="N",
    ),
    JobField(
        "pvc",
        "pvc",
        "storage",
        "mount a PersistentVolumeClaim in every replica (repeatable)",
        flag="--pvc",
        metavar="CLAIM:MOUNT[:SUBPATH][:ro]",
        cli="pvc",
    ),
    JobField(
        "env",
        "env",
        "advanced",
        "env var (repeatable)",
        flag="--env",
        metavar="K=V",
        cli="pairs",
    ),
    JobField(
        "restartPolicy",
        "choice",
        "advanced",
        "what the operator does when a replica exits",
        default=DEFAULT_RESTART_POLICY,
        choices=RESTART_POLICIES,
        flag="--restart-policy",
        metavar="P",
    ),
    JobField(
        "backoffLimit",
        "optional_count",
        "advanced",
        "restarts before the job fails",
        default=DEFAULT_BACKOFF_LIMIT,
        nullable=True,
        flag="--backoff-limit",
        metavar="N",
    ),
    JobField(
        "deadline",
        "optional_count",
        "advanced",
        "fail the job after this many seconds",
        minimum=1,
        nullable=True,
        flag="--deadline",
        metavar="SECONDS",
    ),
    JobField(
        "ttl",
        "optional_count",
        "advanced",
        "delete the finished job after this many seconds",
        nullable=True,
        flag="--ttl",
        metavar="SECONDS",
    ),
    JobField(
        "cleanPodPolicy",
        "choice",
        "advanced",
        "which pods to delete when the job ends",
        default=DEFAULT_CLEAN_POD_POLICY,
        choices=CLEAN_POD_POLICIES,
        flag="--clean-pod-policy",
        metavar="P",
    ),
    JobField(
        "nodeSelector",
        "label_map",
        "advanced",
        "node label every replica needs (repeatable)",
        flag="--node-selector",
        metavar="K=V",
        cli="pairs",
    ),
    JobField(
        "tolerations",
        "tolerations",
        "advanced",
        "tolerate a node taint (repeatable)",
        flag="--toleration",
        metavar="KEY[=VALUE]:EFFECT",
        cli="toleration",
    ),
    JobField(
        "labels",
        "label_map",
        "advanced",
        "label of the job and its pods (repeatable)",
        flag="--label",
        metavar="K=V",
        cli="pairs",
    ),
    JobField(
        "annotations",
        "annotation_map",
        "advanced",
        "annotation of the job and its pods (repeatable)",
        flag="--annotation",
        metavar="K=V",
        cli="pairs",
    ),
    JobField(
        "queue",
        "queue",
        "advanced",
        "Kueue LocalQueue name",
        nullable=True,
        flag="--queue",
        metavar="Q",
    ),
    JobField(
        "priorityClassName",
        "priority_class",
        "advanced",
        "PriorityClass of every pod (preemption; Kueue's workload priority)",
        nullable=True,
        flag="--priority-class",
        metavar="NAME",
    ),
    JobField(
        "serviceAccount",
        "object_name",
        "advanced",
        "ServiceAccount every pod runs as (e.g. workload identity to reach S3 or GCS)",
        nullable=True,
        flag="--service-account",
        metavar="NAME",
        label="Service account",
        hint="The pods run as this ServiceAccount: its workload identity reaches S3 or GCS.",
        local=False,
    ),
    JobField(
        "imagePullSecrets",
        "names",
        "advanced",
        "Secret with the credentials of a private registry (repeatable)",
        flag="--image-pull-secret",
        metavar="NAME",
        cli="list",
        label="Image pull secrets",
        hint="Secrets with the credentials of private registries, separated by spaces.",
        local=False,
    ),
    JobField(
        "logdir",
        "path",
        "storage",
        "TensorBoard log directory (on a PVC) the job writes to",
        nullable=True,
        flag="--logdir",
        metavar="DIR",
    ),
    JobField(
        "logArchive",
        "log_archive",
        "storage",
        "keep each replica's output, line-timestamped, in DIR/.ptjob-logs/<job>/ on a PVC, so "
        "its logs outlive its pods; 'off' to keep none (default: the log directory; off "
        "without one)",
        nullable=True,
        flag="--log-archive",
        metavar="DIR|off",
    ),
    # Elastic (spec.elasticPolicy): set any of them and the job is elastic.
    JobField(
        "minNodes",
        "optional_count",
        "elastic",
        "elastic: fewest Worker nodes the job runs with (elasticPolicy.minReplicas)",
        minimum=1,
        maximum=MAX_NODES,
        nullable=True,
        flag="--min-nodes",
        metavar="N",
    ),
    JobField(
        "maxNodes",
        "optional_count",
        "elastic",
        "elastic: most Worker nodes (elasticPolicy.maxReplicas)",
        minimum=1,
        maximum=MAX_NODES,
        nullable=True,
        flag="--max-nodes",
        metavar="N",
    ),
    JobField(
        "maxRestarts",
        "optional_count",
        "elastic",
        "elastic: times torchrun restarts the worker group before failing (maxRestarts)",
        nullable=True,
        flag="--max-restarts",
        metavar="N",
    ),
    JobField(
        "rdzvBackend",
        "choice",
        "elastic",
        f"elastic: torchrun's rendezvous backend ({DEFAULT_RDZV_BACKEND} when elastic)",
        choices=RDZV_BACKENDS,
        nullable=True,
        flag="--rdzv-backend",
        metavar="B",
    ),
    JobField(
        "extras",
        "extras",
        "advanced",
        "parts of a manifest the form does not know",
        cli="",
    ),
)

FIELD = {f.wire: f for f in FIELDS}
WIRE_FIELDS = tuple(FIELD)

# The sub-fields with choices of the list fields (pvc and toleration rows).
ITEM_CHOICES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "tolerations": {"operator": TOLERATION_OPERATORS, "effect": ("", *TOLERATION_EFFECTS)},
}

# How the form edits a field (``JobField.codec``): one line of text, a whole number
# (digits; anything else goes to the server as typed, which names the problem), a
# Kubernetes quantity, a list of key/value rows, a choice among ``choices``, a list of
# names (one line, separated by spaces or commas), rows of several properties (PVCs,
# tolerations), or a control of its own.
FORM_CODECS = ("text", "number", "quantity", "map", "choice", "list", "rows", "custom")

# Each reader's codec, unless its field names another.
_FORM_OF_READER: Mapping[str, str] = {
    "name": "text",
    "image": "custom",
    "resource_name": "text",
    "words": "custom",
    "script": "custom",
    "path": "text",
    "log_archive": "text",
    "quantity": "quantity",
    "memory": "quantity",
    "shm": "custom",
    "queue": "text",
    "priority_class": "text",
    "object_name": "text",
    "names": "list",
    "kind": "choice",
    "runtime": "custom",
    "count": "number",
    "nproc": "number",
    "optional_count": "number",
    "flag": "custom",
    "choice": "choice",
    "pvc": "rows",
    "tolerations": "rows",
    "label_map": "map",
    "annotation_map": "map",
    "env": "map",
    "extras": "custom",
}

# The JSON Schema of each reader's values, as the OpenAPI ``JobBody`` declares them.
_SCHEMA_OF_READER: Mapping[str, dict[str, Any]] = {
    "name": {"type": "string"},
    "image": {"type": "string"},
    "resource_name": {"type": "string"},
    "words": {"type": "array", "items": {"type": "string"}},
    "script": {"type": "string"},
    "path": {"type": "string"},
    "log_archive": {"type": "string"},
    "quantity": {"type": "string"},
    "memory": {"type": "string"},
    "shm": {"type": "string"},
    "queue": {"type": "string"},
    "priority_class": {"type": "string"},
    "object_name": {"type": "string"},
    "names": {"type": "array", "items": {"type": "string"}},
    "kind": {"type": "string"},
    "runtime": {"type": "string"},
    "count": {"type": ["integer", "string"]},
    "nproc": {"type": ["integer", "string"]},
    "optional_count": {"type": ["integer", "string"]},
    "flag": {"type": "boolean"},
    "choice": {"type": "string"},
    "pvc": {"type": "array", "items": {"$ref": "#/components/schemas/PvcMount"}},
    "tolerations": {"type": "array", "items": {"$ref": "#/components/schemas/Toleration"}},
    "label_map": {"$ref": "#/components/schemas/StringMap"},
    "annotation_map": {"$ref": "#/components/schemas/StringMap"},
    "env": {"$ref": "#/components/schemas/StringMap"},
    "extras": {"type": "object"},
}


def json_schema(field: JobField) -> dict[str, Any]:
    """The JSON Schema of ``field`` in the REST job body (no descriptions)."""
    schema = dict(_SCHEMA_OF_READER[field.read])
    if field.choices:
        schema["enum"] = [*field.choices, *([None] if field.nullable else [])]
    if field.nullable:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        schema["type"] = [*kinds, "null"]
    return schema


def config_fields() -> dict[str, dict[str, Any]]:
    """``GET config``'s ``fields``: each field's section, default, choices and codec
    (and the label and hint of one the form does not describe itself), which the form
    shows instead of keeping its own copies."""
    out: dict[str, dict[str, Any]] = {}
    for f in FIELDS:
        entry: dict[str, Any] = {
            "section": f.section,
            "default": f.default,
            "nullable": f.nullable,
            "form": f.codec,
        }
        entry.update({k: v for k, v in (("label", f.label), ("hint", f.hint)) if v})
        if f.choices:
            entry["choices"] = list(f.choices)
        if f.wire in ITEM_CHOICES:
            entry["itemChoices"] = {k: list(v) for k, v in ITEM_CHOICES[f.wire].items()}
        out[f.wire] = entry
    return out
