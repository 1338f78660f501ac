"""Kubeflow Trainer v2.3.0 as its API objects show it: the TrainJob admission, the Trainer
controller, the JobSet v0.12 and Job controllers under it, and the kubelet steps tests drive.

Written from ``shared/notes/trainjob.md`` (cited as §N) and the Go files it names, never
from our own code: nothing here imports ``jupyter_pytorchjob``, so the tests can catch our
mistakes. Paths in citations are relative to ``kubeflow/trainer`` v2.3.0 unless they
start with ``jobset``/``kubernetes``.

What the fake plays, row by row:

- **Admission** (``admit``): the CRD's CEL rules (``cel_errors``, the ``x-kubernetes-
  validations`` of the real CRD read from ``../shared/crds``; §2 "Checks the API server
  runs") answered 422 like the API server; then the validating webhook
  ``validator.trainjob.trainer.kubeflow.org`` (§2, ``pkg/webhooks/trainjob_webhook.go``,
  ``pkg/runtime/core/{cluster,}trainingruntime.go``, ``plugins/jobset/jobset.go``,
  ``plugins/torch/torch.go``) answered **403 Forbidden** ``admission webhook "…" denied the
  request: …``, because it returns a plain ``field.ErrorList`` aggregate, which
  controller-runtime's ``admission.Denied`` turns into 403.
- **Trainer controller** (``reconcile``; §3–§5, ``pkg/controller/trainjob_controller.go``):
  JobSet of the TrainJob's name built from the runtime + ``runtimePatches`` (strategic
  merge, §1) + ``trainer`` overrides + the torch plugin's env (§3); ``spec.suspend``
  mirrored; ``Suspended``/``Resumed`` conditions; ``Complete``/``Failed`` copied from the
  JobSet; ``jobsStatus`` from ``JobSet.status.replicatedJobsStatus``;
  ``activeDeadlineSeconds`` deleting the JobSet (``reconcileDeadline``); a JobSet the
  JobSet webhook refuses (names too long, §2) leaves the TrainJob with an empty status
  and Warning events ``TrainJobResourcesCreationFailed``.
- **JobSet controller** (§4, jobset ``pkg/controllers/jobset_controller.go``,
  ``failure_policy.go``): one Job ``<name>-<rjob>-<i>`` per replica, the headless Service
  ``<name>``, ``Completed``/``Failed`` (``FailedJobs``; ``maxRestarts`` 0 for the shipped
  runtimes, §6).
- **Job controller** (kubernetes ``pkg/controller/job``): Indexed pods
  ``<job>-<index>-<5 chars>`` with the labels/annotations of §4; ``OnFailure`` restarts
  in place counting toward ``backoffLimit`` 6 (§6: restarts summed over the Job's pods,
  ``>= backoffLimit`` fails it, ``BackoffLimitExceeded``); a pod in phase Failed is
  replaced by a new pod (new suffix) and counts as a failure too; suspended Jobs delete
  their pods.
- **kubelet** steps (hooks, as ``operator.py`` offers them for PyTorchJob pods; the
  kubelet itself, restarts and back-off included, is ``kubelet.py``):
  ``run``, ``succeed``, ``exit`` (in-place restart under ``OnFailure``: the first at
  once, later ones into CrashLoopBackOff), ``back_off_over``, ``fail`` (pod phase
  Failed), ``elapse`` (the clock for ``activeDeadlineSeconds``), ``suspend``/``resume``
  (what a PATCH of ``spec.suspend`` does, also reachable through the API).

- **status server** (§5, gate ``TrainJobStatus`` on): ``report`` takes what a pod POSTs
  (``{"trainerStatus": {...}}``, at most 64 KiB, the CRD's bounds) and applies it to
  ``status.trainerStatus`` as the server-side apply of field manager ``trainer-status``
  does (the whole ``trainerStatus`` replaced); the token check is left out.

- **torchtune**: the webhook's ``validateTorchTune`` (model, nodes, immutable configs) and
  the torch plugin completing ``tune run`` (rendezvous, ``getRecipeAndConfig``, the
  runtime's paths; no ``PET_MASTER_*``).
- **Initializers**: the webhook's initializer checks, ``STORAGE_URI``/env/``envFrom`` into
  the initializer containers (``Builder.Initializer``), JobSet's ``dependsOn`` (the node job
  made once the initializers completed); the kubelet hooks take a replicated job.

Left out: the runtime snapshot ConfigMap (KEP-2599), MPI/JAX/XGBoost plugins, JobSet
``maxRestarts`` > 0, ``startupPolicy`` ordering, Kueue/``managedBy`` other than the default
(such jobs are skipped, as the controller does), and the webhook's torchtune checks.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .kubelet import container_status
from .logs import parse_rfc3339, rfc3339

if TYPE_CHECKING:
    from .server import FakeKube

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
CLUSTER_RUNTIME, RUNTIME = "ClusterTrainingRuntime", "TrainingRuntime"
# trainjob_types.go: managedBy values (CEL) and the default controller.
MANAGED_BY = "trainer.kubeflow.org/trainjob-controller"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"  # §3, §8
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"  # §3, on the Job
NODE = "node"  # the trainer replicatedJob and its container (§3)
INITIALIZERS = ("dataset-initializer", "model-initializer")  # ancestor labels and jobs (§8)
MASTER_PORT = 29500  # constants.ContainerTrainerPort (§3)
# constants.TorchRunReservedEnvNames (§2)
RESERVED_ENV = (
    "PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE",
)  # fmt: skip
WEBHOOK = "validator.trainjob.trainer.kubeflow.org"  # §2
JOBSET_WEBHOOK = "vjobset.kb.io"  # jobset config/components/webhook
# jobset pkg/webhooks/jobset_webhook.go (§2 "Name limits")
JOB_NAME_TOO_LONG = (
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
)
POD_NAME_TOO_LONG = (
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)
BACKOFF_LIMIT = 6  # the Job's default backoffLimit (§6)

# JobSet labels, set as labels and annotations on Jobs and pods (§4, jobset
# ``labelAndAnnotateObject``) and the Job controller's (kubernetes batch/v1 types.go).
JS = "jobset.sigs.k8s.io/"
JOBSET_NAME, RJOB_NAME, RESTART_ATTEMPT = (
    f"{JS}jobset-name",
    f"{JS}replicatedjob-name",
    (f"{JS}restart-attempt"),
)
JOB_NAME, CONTROLLER_UID = "batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

# Conditions (§5 table): key -> (type, status, reason, message).
CONDITIONS = {
    "suspended": ("Suspended", "True", "Suspended", "TrainJob is suspended"),
    "resumed": ("Suspended", "False", "Resumed", "TrainJob is resumed"),
    "complete": ("Complete", "True", "AllJobsCompleted", "jobset completed successfully"),
    "failed": (
        "Failed",
        "True",
        "FailedJobs",
        "jobset failed due to one or more job failures (first failed job: {job})",
    ),
    "deadline": ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline"),
}
# The Job controller's Failed condition (kubernetes pkg/controller/job/job_controller.go).
JOB_BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")

# CEL rules of the trainer CRDs (§2), as Python predicates on (self, oldSelf). A rule not
# listed here is not checked (none of the TrainJob CRD's rules is missing).
_CEL: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Callable[[Any, Any], bool]]]] = [
    (re.compile(r"self == oldSelf"), lambda m: lambda s, o: bool(s == o)),
    (
        re.compile(r"self == '' \|\| self\.matches\('(.*)'\)"),
        lambda m: lambda s, o: s == "" or re.search(m[1], s) is not None,
    ),
    (
        re.compile(r"self in \[(.*)\]"),
        lambda m: lambda s, o: s in re.findall(r"'([^']*)'", m[1]),
    ),
    (
        re.compile(r"self\.metadata\.name\.matches\('(.*)'\)"),
        lambda m: lambda s, o: re.search(m[1], s["metadata"].get("name", "")) is not None,
    ),
    (
        re.compile(r"size\(self\.metadata\.name\) <= (\d+)"),
        lambda m: lambda s, o: len(s["metadata"].get("name", "")) <= int(m[1]),
    ),
    (re.compile(r"has\(self\.(\w+)\)"), lambda m: lambda s, o: m[1] in s),
    (re.compile(r"self >= (\d+)"), lambda m: lambda s, o: s >= int(m[1])),
    (re.compile(r"!self\.exists\(c, c == '(\w+)'\)"), lambda m: lambda s, o: m[1] not in s),
    (
        re.compile(r"\[(has\(self\.\w+\),\s*)+has\(self\.\w+\)\]\.filter\(x, x\)\.size\(\) <= 1"),
        lambda m: lambda s, o: sum(k in s for k in re.findall(r"has\(self\.(\w+)\)", m[0])) <= 1,
    ),
]


def _cel(rule: str) -> Callable[[Any, Any], bool] | None:
    for pattern, build in _CEL:
        match = pattern.fullmatch(rule.strip())
        if match:
            return build(match)
    return None


def _schema_type(schema: Mapping[str, Any], value: Any) -> str:
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return str(schema.get("type") or names.get(type(value), "object"))


def cel_errors(schema: Mapping[str, Any], obj: Any, old: Any = None) -> list[tuple[str, str]]:
    """The ``x-kubernetes-validations`` of ``schema`` on ``obj`` (``old`` on update), worded
    as the API server words them: ``spec.trainer: Invalid value: "object": field is
    immutable``, ``<nil>`` for the root. Transition rules (``oldSelf``) only run where the
    old object has the field; list items correlate by ``x-kubernetes-list-map-keys``."""
    errors: list[tuple[str, str]] = []

    def walk(sch: Mapping[str, Any], value: Any, before: Any, path: str) -> None:
        for entry in sch.get("x-kubernetes-validations") or []:
            rule = entry["rule"]
            if "oldSelf" in rule and before is None:
                continue
            check = _cel(rule)
            if check is None:
                continue
            try:
                ok = check(value, before)
            except (KeyError, TypeError):
                ok = True  # the rule does not apply to this shape
            if not ok:
                message = entry.get("message") or f"failed rule: {rule}"
                errors.append(
                    (path or "<nil>", f'Invalid value: "{_schema_type(sch, value)}": {message}')
                )
        if isinstance(value, dict):
            for key, sub in (sch.get("properties") or {}).items():
                if key in value and not (path == "" and key == "metadata"):
                    old_sub = before.get(key) if isinstance(before, dict) else None
                    walk(sub, value[key], old_sub, f"{path}.{key}" if path else key)
        elif isinstance(value, list) and isinstance(sch.get("items"), dict):
            keys = sch.get("x-kubernetes-list-map-keys") or []
            for index, item in enumerate(value):
                old_item = None
                if keys and isinstance(before, list) and isinstance(item, dict):
                    old_item = next(
                        (
                            b
                            for b in before
                            if isinstance(b, dict) and all(b.get(k) == item.get(k) for k in keys)
                        ),
                        None,
                    )
                walk(sch["items"], item, old_item, f"{path}[{index}]")

    walk(schema, obj, old, "")
    return errors


def read_yaml(path: Path) -> Any:
    """A YAML file, parsed once per process (the CRDs are ~10,000 lines each: the C loader
    where PyYAML has it)."""
    return _read_yaml(str(path), path.stat().st_mtime)


@functools.cache
def _read_yaml(path: str, _mtime: float) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=loader)


def trainer_schemas() -> dict[str, dict[str, Any] | None]:
    """The three Trainer CRDs' ``openAPIV3Schema`` from ``../shared/crds`` (None where the
    file is missing: a bare clone; the tests that need them skip through tests/crd.py)."""
    try:
        from tests.crd import CRDS_DIR
    except ImportError:
        return {}
    out: dict[str, dict[str, Any] | None] = {}
    for plural in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        path = Path(CRDS_DIR) / f"{GROUP}_{plural}.yaml"
        crd = read_yaml(path) if path.exists() else None
        out[plural] = None
        for version in (crd or {}).get("spec", {}).get("versions", []):
            if version["name"] == VERSION:
                out[plural] = version["schema"]["openAPIV3Schema"]
    return out


def shipped_runtimes() -> list[dict[str, Any]]:
    """The runtimes v2.3.0 ships (``manifests/base/runtimes``), read from
    ``../shared/runtimes`` beside the checkout and its ``more/`` (the torchtune ones with
    their initializer jobs, ``torch-distributed-with-cache``, jax, mlx, xgboost); none in
    a bare clone."""
    try:
        from tests.crd import CRDS_DIR
    except ImportError:
        return []
    folder = Path(CRDS_DIR).parent / "runtimes"
    files = [*sorted(folder.glob("*.yaml")), *sorted((folder / "more").glob("*.yaml"))]
    return [copy.deepcopy(read_yaml(p)) for p in files]


# -- strategic merge (§1) -------------------------------------------------------------------

# Merge keys of the lists a runtime patch touches (k8s.io/api core/v1 patchMergeKey tags,
# JobSet ``replicatedJobs`` by name). A list not named here is replaced (``tolerations``
# has no merge key, §1).
MERGE_KEYS = {
    "replicatedJobs": "name", "containers": "name", "initContainers": "name",
    "volumes": "name", "env": "name", "volumeMounts": "mountPath", "ports": "containerPort",
    "imagePullSecrets": "name",
}  # fmt: skip


def strategic_merge(target: Any, patch: Any, key: str = "") -> Any:
    if isinstance(patch, dict) and isinstance(target, dict):
        out = dict(target)
        for k, v in patch.items():
            out[k] = None if v is None else strategic_merge(target.get(k), v, k)
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(patch, list) and isinstance(target, list) and key in MERGE_KEYS:
        merge_key = MERGE_KEYS[key]
        out_list = [copy.deepcopy(t) for t in target]
        for item in patch:
            index = next(
                (
                    i
                    for i, t in enumerate(out_list)
                    if isinstance(item, dict) and t.get(merge_key) == item.get(merge_key)
                ),
                None,
            )
            if index is None:
                out_list.append(copy.deepcopy(item))
            else:
                out_list[index] = strategic_merge(out_list[index], item, "")
        return out_list
    return copy.deepcopy(patch)


def _upsert_env(container: dict[str, Any], env: list[dict[str, Any]]) -> None:
    current = container.setdefault("env", [])
    for var in env:
        for i, existing in enumerate(current):
            if existing.get("name") == var["name"]:
                current[i] = copy.deepcopy(var)
                break
        else:
            current.append(copy.deepcopy(var))


def _quantity_ceil(text: Any) -> int:
    """A CPU quantity rounded up (``500m`` -> 1, ``2`` -> 2)."""
    value = str(text)
    if value.endswith("m"):
        return -(-int(value[:-1]) // 1000)
    return int(-(-float(value) // 1))


def nproc_per_node(trainjob: Mapping[str, Any], resources: Mapping[str, Any]) -> str:
    """``PET_NPROC_PER_NODE`` (§3; Trainer v2.3.0 pkg/runtime/framework/plugins/torch/
    torch.go:121-134): ``numProcPerNode``, else ``auto`` when ``GetNumGPUPerNode`` > 0
    (pkg/runtime/runtime.go:280-297: the count of the first resource name containing
    ``gpu`` in the requests, the limits' when that is 0; only ``resourcesPerNode`` is
    inspected when the TrainJob sets it), else ``max(1, ceil(cpu))`` (``getNumCPUPerNode``,
    torch.go:228-240: the request unless it is 0, else the limit)."""
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    if trainer.get("numProcPerNode") is not None:
        return str(trainer["numProcPerNode"])
    if gpus_per_node(trainjob, resources) > 0:
        return "auto"
    requested = (resources.get("requests") or {}).get("cpu")
    limit = (resources.get("limits") or {}).get("cpu")
    if requested is not None and _quantity_ceil(requested) != 0:
        return str(max(1, _quantity_ceil(requested)))
    return str(max(1, _quantity_ceil(limit))) if limit is not None else "1"


def gpus_per_node(trainjob: Mapping[str, Any], resources: Mapping[str, Any]) -> int:
    """``GetNumGPUPerNode`` as ``nproc_per_node`` reads it (``gpuQ`` in torch.go:131)."""
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    inspected = trainer.get("resourcesPerNode") or resources
    gpus = 0
    for part in ("requests", "limits"):
        named = [v for k, v in (inspected.get(part) or {}).items() if "gpu" in k.lower()]
        if named and not gpus:
            gpus = _quantity_ceil(named[0])
    return gpus


# torchtune (pkg/constants/constants.go:205-318 at v2.3.0)
TUNE_RUN = ["tune", "run"]  # TorchTuneEntrypoint
TUNE_IMMUTABLE = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir",
                  "tokenizer.merges_file")  # TorchTuneImmutableConfigs  # fmt: skip


def _tune_model(runtime_name: str) -> str:
    """``getModelFromRuntimeRef`` (torchtune.go:199-205): torchtune-llama3.2-1b ->
    llama3_2/1B."""
    fields = runtime_name.split("-")
    return f"{fields[1].replace('.', '_')}/{fields[2].upper()}" if len(fields) == 3 else ""


def _tune_arg_set(args: list[str], item: str) -> bool:
    """``isBoolArgEnabled`` (torchtune.go:149-161)."""
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep and item in name and value.strip().lower() == "true":
            return True
    return False


def tune_recipe_and_config(
    runtime_name: str, nodes: int, nproc: str, gpus: int, args: list[str]
) -> tuple[str, str]:
    """``getRecipeAndConfig`` (torchtune.go:108-134)."""
    lora = any("model.lora_attn_modules" in a for a in args)  # isLoraConfigEnabled
    qlora = not _tune_arg_set(args, "model.use_dora") and _tune_arg_set(
        args, "model.quantize_base"
    )  # isUseQLoraFinetune
    recipe, suffix = "full_finetune_distributed", "_full"
    if nodes == 1 and (nproc == "1" or gpus == 1):
        if qlora:
            recipe, suffix = "lora_finetune_single_device", "_qlora_single_device"
        elif lora:
            recipe, suffix = "lora_finetune_single_device", "_lora_single_device"
        else:
            recipe, suffix = "full_finetune_single_device", "_full_single_device"
    elif nodes == 1 and qlora:
        recipe, suffix = "lora_finetune_distributed", "_qlora"
    elif nodes == 1 and lora:
        recipe, suffix = "lora_finetune_distributed", "_lora"
    elif nodes > 1:
        suffix = "_full_multinode"
    return recipe, f"{_tune_model(runtime_name)}{suffix}"


def _suffix() -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))


def _is_dns1035(name: str) -> bool:
    return len(name) <= 63 and re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name) is not None


def _domain_prefixed(value: str) -> str | None:
    """apimachinery ``IsDomainPrefixedPath``: the problem, or None."""
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return 'must be a domain-prefixed path (such as "acme.io/foo")'
    if len(host) > 253 or not re.fullmatch(
        r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", host
    ):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character"
        )
    return None


def _go(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _pod_template(rjob: dict[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = rjob.setdefault("template", {}).setdefault("spec", {})
    return template.setdefault("template", {})  # type: ignore[no-any-return]


# -- the simulation -----------------------------------------------------------------------


class Trainer:
    """Admission, the controllers, and the kubelet steps tests drive (module docstring)."""

    def __init__(self, fake: FakeKube, *, enabled: bool = True) -> None:
        self.fake = fake
        self.enabled = enabled
        self.schemas = trainer_schemas()
        self._clock: dict[str, float] = {}  # seconds elapsed on top of the wall clock, per uid
        self._deadline_from: dict[str, float] = {}  # uid -> when the deadline clock started
        self._events: set[tuple[str, str, str]] = set()

    # -- admission -------------------------------------------------------------------------

    def schema_rules(self, plural: str, obj: dict[str, Any], old: Any) -> list[tuple[str, str]]:
        schema = self.schemas.get(plural)
        return cel_errors(schema, obj, old) if schema else []

    def webhook(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
        """The TrainJob validating webhook (§2), as ``field.Error`` texts; ``[]`` admits."""
        spec = obj.get("spec") or {}
        ref = spec.get("runtimeRef") or {}
        kind = ref.get("kind") or CLUSTER_RUNTIME
        group = ref.get("apiGroup") or GROUP
        if group != GROUP or kind not in (CLUSTER_RUNTIME, RUNTIME):
            return [f"unsupported runtime: {kind}.{group}"]
        runtime = self.runtime(obj)
        if runtime is None:
            if kind == CLUSTER_RUNTIME:
                path, what, text = (
                    "spec.RuntimeRef",
                    "clustertrainingruntimes",
                    "clusterTrainingRuntime",
                )
            else:
                path, what, text = "spec.runtimeRef", "trainingruntimes", "trainingRuntime"
            return [
                f'{path}: Invalid value: {_go(ref)}: {what}.{GROUP} "{ref.get("name")}" not '
                f"found: specified {text} must be created before the TrainJob is created"
            ]
        errors: list[str] = []
        rjobs = {r["name"]: r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
        for i, patch in enumerate(spec.get("runtimePatches") or []):
            where = f"spec.runtimePatches[{i}]"
            problem = _domain_prefixed(str(patch.get("manager", "")))
            if problem:
                errors.append(
                    f"{where}.manager: Invalid value: {_go(patch.get('manager'))}: {problem}"
                )
            patched = (
                ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}
            ).get("replicatedJobs") or []
            for j, rpatch in enumerate(patched):
                rwhere = f"{where}.trainingRuntimeSpec.template.spec.replicatedJobs[{j}]"
                rjob = rjobs.get(rpatch.get("name"))
                if rjob is None:
                    errors.append(
                        f"{rwhere}.name: Invalid value: {_go(rpatch.get('name'))}: must not have "
                        "replicatedJob that doesn't exist in the runtime job template"
                    )
                    continue
                pod = _pod_template(copy.deepcopy(rjob)).get("spec") or {}
                ppod = (
                    ((rpatch.get("template") or {}).get("spec") or {}).get("template") or {}
                ).get("spec") or {}
                for key in ("containers", "initContainers"):
                    names = {c["name"] for c in pod.get(key) or []}
                    for k, cpatch in enumerate(ppod.get(key) or []):
                        cwhere = f"{rwhere}.template.spec.template.spec.{key}[{k}]"
                        if cpatch.get("name") not in names:
                            errors.append(
                                f"{cwhere}.name: Invalid value: {_go(cpatch.get('name'))}: must "
                                f"not have {key[:-1]} that doesn't exist in the runtime job "
                                f"{rpatch.get('name')}"
                            )
                        elif cpatch.get("env") and cpatch["name"] in (
                            NODE,
                            "dataset-initializer",
                            "model-initializer",
                        ):
                            errors.append(
                                f"{cwhere}.env: Invalid value: {_go(cpatch['env'])}: must not "
                                f"have env patches for the {cpatch['name']} container"
                            )
        errors += self._initializer_errors(spec, rjobs)
        if old is not None and spec.get("runtimePatches") != (old.get("spec") or {}).get(
            "runtimePatches"
        ):
            suspended = bool(spec.get("suspend")) or bool((old.get("spec") or {}).get("suspend"))
            jobset = self.fake.get("jobsets", obj["metadata"]["namespace"], obj["metadata"]["name"])
            active = any(
                r.get("active")
                for r in ((jobset or {}).get("status") or {}).get("replicatedJobsStatus") or []
            )
            if not suspended or active:
                errors.append(
                    "spec.runtimePatches: Forbidden: runtimePatches can only be modified when "
                    "the TrainJob is suspended and no replicatedJob is active"
                )
        if "torch" in (runtime["spec"].get("mlPolicy") or {}):
            reserved = sorted(
                {e.get("name") for e in (spec.get("trainer") or {}).get("env") or []}
                & set(RESERVED_ENV)
            )
            if reserved:
                errors.append(
                    f"spec.trainer.env: Invalid value: {_go(spec['trainer']['env'])}: must not "
                    f"have reserved envs, invalid envs configured: [{' '.join(reserved)}]"
                )
            if (spec.get("trainer") or {}).get("command") == TUNE_RUN:
                errors += self._torchtune_errors(spec)
        return errors

    @staticmethod
    def _torchtune_errors(spec: Mapping[str, Any]) -> list[str]:
        """``validateTorchTune`` (torchtune.go:35-106 at v2.3.0): a supported model, one
        node but for 70B, no immutable config in the args (LoRA/QLoRA rules left out)."""
        errors = []
        ref, trainer = spec["runtimeRef"], spec["trainer"]
        model = _tune_model(ref.get("name", ""))
        if model not in ("llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"):
            errors.append(
                f"spec.runtimeRef.name: Invalid value: {_go(ref.get('name'))}: must have a "
                f"supported pretrained model, invalid model configured: {model}"
            )
        nodes = int(trainer.get("numNodes") or 1)
        if nodes > 1 and model != "llama3_3/70B":
            errors.append(
                f"spec.trainer.numNodes: Invalid value: {nodes}: must be 1 for {model} model"
            )
        for i, arg in enumerate(trainer.get("args") or []):
            key = arg.split("=", 1)[0]
            if key in TUNE_IMMUTABLE:
                errors.append(
                    f"spec.trainer.args[{i}]: Invalid value: {_go(arg)}: must not set immutable "
                    f'config "{key}" in trainer args; it is managed by the runtime'
                )
        return errors

    @staticmethod
    def _initializer_errors(spec: Mapping[str, Any], rjobs: Mapping[str, Any]) -> list[str]:
        """An initializer needs its job, container and ``initializer`` volume mount in the
        runtime (plugins/jobset/jobset.go:112-170 at v2.3.0)."""
        errors = []
        where = f"spec.runtimeRef: Invalid value: {_go(spec.get('runtimeRef'))}"
        for part in ("dataset", "model"):
            if (spec.get("initializer") or {}).get(part) is None:
                continue
            rjob = f"{part}-initializer"
            containers = {
                c["name"]: c
                for c in (_pod_template(copy.deepcopy(rjobs[rjob])).get("spec") or {}).get(
                    "containers"
                )
                or []
            } if rjob in rjobs else {}  # fmt: skip
            if rjob not in rjobs:
                errors.append(
                    f"{where}: must have {rjob} job when trainJob is configured with input "
                    f"{part}Config"
                )
            elif rjob not in containers:
                errors.append(f"{where}: must have container with name - {rjob} in the {rjob} job")
            elif not any(
                m.get("name") == "initializer" for m in containers[rjob].get("volumeMounts") or []
            ):
                errors.append(
                    f"{where}: must have volumeMount with name - initializer in container "
                    f"{rjob} of the {rjob} job"
                )
        return errors

    def runtime(self, trainjob: Mapping[str, Any]) -> dict[str, Any] | None:
        ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
        if (ref.get("kind") or CLUSTER_RUNTIME) == CLUSTER_RUNTIME:
            return self.fake.get("clustertrainingruntimes", "", ref.get("name", ""))
        return self.fake.get(
            "trainingruntimes", trainjob["metadata"]["namespace"], ref.get("name", "")
        )

    def seed_runtimes(self) -> None:
        """The shipped ClusterTrainingRuntimes (``shipped_runtimes``) and the
        ``kubeflow-trainer-public`` ConfigMap the SDK reads (§7)."""
        for runtime in shipped_runtimes():
            self.fake.add(runtime)
        self.fake.add_namespace("kubeflow-system")
        self.fake.add({
            "kind": "ConfigMap",
            "metadata": {"name": "kubeflow-trainer-public", "namespace": "kubeflow-system"},
            "data": {"kubeflow_trainer_version": "2.3.0"},
        })  # fmt: skip

    # -- helpers ---------------------------------------------------------------------------

    def _trainjob(self, ns: str, name: str) -> dict[str, Any]:
        job = self.fake.get("trainjobs", ns, name)
        if job is None:
            raise KeyError(f"no TrainJob {ns}/{name}")
        return job

    def pods(self, ns: str, name: str, rjob: str = NODE) -> list[dict[str, Any]]:
        """The pods of ``rjob`` (§4 selector), by completion index then creation."""
        pods = self.fake.list("pods", ns, f"{JOBSET_NAME}={name},{RJOB_NAME}={rjob}")
        return sorted(pods, key=lambda p: int(p["metadata"]["labels"].get(COMPLETION_INDEX, 0)))

    def pod(self, ns: str, name: str, index: int = 0) -> dict[str, Any]:
        """The live (not Failed) pod of node ``index``."""
        for pod in self.pods(ns, name):
            labels = pod["metadata"]["labels"]
            if (
                labels.get(COMPLETION_INDEX) == str(index)
                and pod["status"].get("phase") != "Failed"
            ):
                return pod
        raise KeyError(f"no pod for node {index} of TrainJob {ns}/{name}")

    def now(self, uid: str) -> float:
        return time.time() + self._clock.get(uid, 0.0)

    def _event(
        self, kind: str, obj: Mapping[str, Any], etype: str, reason: str, message: str,
        component: str,
    ) -> None:  # fmt: skip
        meta = obj["metadata"]
        key = (meta["uid"], reason, message)
        if key in self._events:
            return
        self._events.add(key)
        event = self.fake.add_event(
            meta["namespace"], kind, meta["name"], reason, message, etype, component=component
        )
        if component == "trainjob-controller":
            # The Trainer records through the events.k8s.io recorder: read as core/v1 such an
            # event has eventTime but no firstTimestamp/lastTimestamp/source (§7: the SDK's
            # get_job_events drops it).
            old = copy.deepcopy(event)
            event.update(firstTimestamp=None, lastTimestamp=None, count=None, source={})
            event.update(eventTime=rfc3339(nano=True)[:-4] + "Z", action="Reconcile")
            event["reportingComponent"] = "trainer.kubeflow.org/trainjob-controller"
            event["reportingInstance"] = "kubeflow-trainer-controller-manager"
            self.fake._emit("events", "MODIFIED", event, old)

    @staticmethod
    def _owner(obj: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
        }  # fmt: skip

    @staticmethod
    def _set_condition(
        status: dict[str, Any], ctype: str, cstatus: str, reason: str, message: str
    ) -> None:
        """apimachinery ``meta.SetStatusCondition``: the transition time moves only when the
        status changes."""
        conditions = status.setdefault("conditions", [])
        for cond in conditions:
            if cond["type"] == ctype:
                if cond["status"] != cstatus:
                    cond["lastTransitionTime"] = rfc3339()
                cond.update(status=cstatus, reason=reason, message=message)
                return
        conditions.append({"type": ctype, "status": cstatus, "reason": reason,
                           "message": message, "lastTransitionTime": rfc3339()})  # fmt: skip

    @staticmethod
    def _true(obj: Mapping[str, Any], ctype: str) -> bool:
        return any(
            c["type"] == ctype and c["status"] == "True"
            for c in (obj.get("status") or {}).get("conditions") or []
        )

    def _save(self, resource: str, obj: dict[str, Any], status: dict[str, Any]) -> bool:
        if status == (obj.get("status") or {}):
            return False
        old = copy.deepcopy(obj)
        obj["status"] = status
        self.fake._emit(resource, "MODIFIED", obj, old)
        return True

    # -- the JobSet the Trainer builds (§3, §4) ----------------------------------------------

    def build_jobset(
        self, trainjob: Mapping[str, Any], runtime: Mapping[str, Any]
    ) -> dict[str, Any]:
        meta, spec = trainjob["metadata"], trainjob.get("spec") or {}
        name = meta["name"]
        template = copy.deepcopy(runtime["spec"]["template"])
        for patch in spec.get("runtimePatches") or []:  # mergeRuntimePatches, list order
            template = strategic_merge(template, (patch.get("trainingRuntimeSpec") or {}).get(
                "template") or {})  # fmt: skip
        js_spec = template.setdefault("spec", {})
        trainer = spec.get("trainer") or {}
        ml_policy = runtime["spec"].get("mlPolicy") or {}
        nodes = int(trainer.get("numNodes") or ml_policy.get("numNodes") or 1)
        for rjob in js_spec.get("replicatedJobs") or []:
            job_template = rjob.setdefault("template", {})
            job_spec = job_template.setdefault("spec", {})
            ancestor = (job_template.get("metadata") or {}).get("labels", {}).get(ANCESTOR_LABEL)
            if ancestor:
                rjob["replicas"] = 1
            rjob.setdefault("replicas", 1)
            job_spec.setdefault("completionMode", "Indexed")  # JobSet defaults (§4)
            pod = _pod_template(rjob).setdefault("spec", {})
            pod.setdefault("restartPolicy", "OnFailure")
            if ancestor == "trainer":
                job_spec["parallelism"] = job_spec["completions"] = nodes
                for container in pod.get("containers") or []:
                    if container.get("name") != NODE:
                        continue
                    runtime_command = list(container.get("command") or [])
                    for key in ("image", "command", "args"):
                        if trainer.get(key) is not None:
                            container[key] = copy.deepcopy(trainer[key])
                    _upsert_env(container, trainer.get("env") or [])
                    if trainer.get("resourcesPerNode"):
                        container["resources"] = strategic_merge(
                            container.get("resources") or {}, trainer["resourcesPerNode"]
                        )
                    if "torch" in ml_policy:
                        self._torch_env(trainjob, container, nodes, runtime_command)
            else:
                job_spec.setdefault("parallelism", 1)
                job_spec.setdefault("completions", 1)
                if ancestor in INITIALIZERS:
                    self._initializer_env(spec, ancestor, pod)
        network = js_spec.setdefault("network", {})
        network.setdefault("enableDNSHostnames", True)
        network.setdefault("publishNotReadyAddresses", True)
        js_spec.setdefault("successPolicy", {"operator": "All"})
        js_spec["suspend"] = bool(spec.get("suspend"))
        return {
            "apiVersion": JOBSET_API,
            "kind": "JobSet",
            "metadata": {
                "name": name, "namespace": meta["namespace"],
                "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                "ownerReferences": [self._owner(trainjob)],
            },
            "spec": js_spec,
            "status": {},
        }  # fmt: skip

    @staticmethod
    def _initializer_env(spec: Mapping[str, Any], ancestor: str, pod: dict[str, Any]) -> None:
        """``Builder.Initializer`` (plugins/jobset/builder.go:41-97 at v2.3.0): the
        TrainJob's ``storageUri`` as ``STORAGE_URI``, its env upserted, its secret as
        ``envFrom`` - into the container named as the initializer."""
        wanted = (spec.get("initializer") or {}).get(ancestor.removesuffix("-initializer"))
        if not wanted:
            return
        for container in pod.get("containers") or []:
            if container.get("name") != ancestor:
                continue
            if wanted.get("storageUri") is not None:
                _upsert_env(container, [{"name": "STORAGE_URI", "value": wanted["storageUri"]}])
            _upsert_env(container, wanted.get("env") or [])
            if wanted.get("secretRef"):
                container.setdefault("envFrom", []).append(
                    {"secretRef": {"name": wanted["secretRef"]["name"]}}
                )

    @staticmethod
    def _torch_env(
        trainjob: Mapping[str, Any],
        container: dict[str, Any],
        nodes: int,
        runtime_command: list[str],
    ) -> None:
        """``EnforceMLPolicy``, plugins/torch/torch.go (§3); a ``tune run`` command gets no
        ``PET_MASTER_*`` but the rendezvous, recipe, config and the runtime's immutable
        overrides appended (torch.go:175-200 at v2.3.0)."""
        name = trainjob["metadata"]["name"]
        resources = container.get("resources") or {}
        nproc = nproc_per_node(trainjob, resources)
        _upsert_env(container, [
            {"name": "PET_NNODES", "value": str(nodes)},
            {"name": "PET_NPROC_PER_NODE", "value": nproc},
            {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
                "apiVersion": "v1",
                "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}},
        ])  # fmt: skip
        trainer = (trainjob.get("spec") or {}).get("trainer") or {}
        if trainer.get("command") == TUNE_RUN:
            gpus = gpus_per_node(trainjob, resources)
            words = []
            if nodes > 1 or (nproc.isdigit() and int(nproc) > 1) or (nproc == "auto" and gpus > 1):
                words.append(f"--rdzv_endpoint={name}-{NODE}-0-0.{name}:{MASTER_PORT}")
            recipe, config = tune_recipe_and_config(
                trainjob["spec"]["runtimeRef"]["name"], nodes, nproc, gpus,
                list(trainer.get("args") or []),
            )  # fmt: skip
            words += [recipe, "--config", config]
            words += [w for w in runtime_command if w.split("=")[0] in TUNE_IMMUTABLE]
            container["command"] = [*TUNE_RUN, *words]
        else:
            _upsert_env(container, [
                {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
                {"name": "PET_MASTER_PORT", "value": str(MASTER_PORT)},
            ])  # fmt: skip
        ports = container.setdefault("ports", [])
        if not any(p.get("containerPort") == MASTER_PORT for p in ports):
            ports.append({"containerPort": MASTER_PORT, "protocol": "TCP"})

    @staticmethod
    def jobset_name_errors(jobset: Mapping[str, Any]) -> list[str]:
        """jobset pkg/webhooks/jobset_webhook.go ``ValidateCreate`` name checks (§2)."""
        errors = []
        name = jobset["metadata"]["name"]
        for i, rjob in enumerate(jobset["spec"].get("replicatedJobs") or []):
            replicas = int(rjob.get("replicas", 1))
            longest_job = f"{name}-{rjob['name']}-{replicas - 1}"
            where = f"spec.replicatedJobs[{i}].name"
            if not _is_dns1035(longest_job):
                errors.append(f'{where}: Invalid value: "{longest_job}": {JOB_NAME_TOO_LONG}')
            completions = int(rjob["template"]["spec"].get("completions", 1))
            longest_pod = f"{longest_job}-{completions - 1}-abcde"
            if not _is_dns1035(longest_pod):
                errors.append(f'{where}: Invalid value: "{longest_job}": {POD_NAME_TOO_LONG}')
        return errors

    # -- the Trainer controller (§5) ----------------------------------------------------------

    def on_written(self, trainjob: dict[str, Any]) -> None:
        """A TrainJob created or updated: reconcile (the controller's watch)."""
        if self.enabled:
            self.reconcile(trainjob["metadata"]["namespace"], trainjob["metadata"]["name"])

    def reconcile(self, ns: str, name: str) -> None:
        """Reconcile the TrainJob and everything under it until nothing changes."""
        for _ in range(10):
            trainjob = self.fake.get("trainjobs", ns, name)
            if trainjob is None or not self._reconcile_once(trainjob):
                return

    def _reconcile_once(self, trainjob: dict[str, Any]) -> bool:
        meta, spec = trainjob["metadata"], trainjob.get("spec") or {}
        ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
        if (spec.get("managedBy") or MANAGED_BY) != MANAGED_BY:
            return False
        if self._true(trainjob, "Complete") or self._true(trainjob, "Failed"):
            return False  # finished: the controller stops reconciling (§6)
        status = copy.deepcopy(trainjob.get("status") or {})
        suspended = bool(spec.get("suspend"))
        if suspended:
            self._set_condition(status, *CONDITIONS["suspended"][:2], *CONDITIONS["suspended"][2:])
            self._deadline_from.pop(uid, None)
        elif self._true(trainjob, "Suspended"):
            self._set_condition(status, *CONDITIONS["resumed"])
            self._deadline_from[uid] = self.now(uid)
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and not suspended:  # reconcileDeadline
            start = self._deadline_from.get(uid, parse_rfc3339(meta["creationTimestamp"]) / 1e9)
            if self.now(uid) - start >= int(deadline):
                jobset = self.fake.get("jobsets", ns, name)
                if jobset is not None:
                    self.fake._delete("jobsets", jobset)
                self._set_condition(status, *CONDITIONS["deadline"])
                return self._save("trainjobs", trainjob, status)
        jobset = self.fake.get("jobsets", ns, name)
        changed = False
        if jobset is None:
            runtime = self.runtime(trainjob)  # later edits or deletion don't touch a built job
            if runtime is None:
                return self._save("trainjobs", trainjob, status)
            built = self.build_jobset(trainjob, runtime)
            problems = self.jobset_name_errors(built)
            if problems:
                text = "\n".join(problems)
                self._event("TrainJob", trainjob, "Warning", "TrainJobResourcesCreationFailed",
                            "TrainJob resources reconciliation failed: admission webhook "
                            f'"{JOBSET_WEBHOOK}" denied the request: {text}',
                            "trainjob-controller")  # fmt: skip
                return False  # the status stays as it was (empty)
            jobset = self.fake._stored("jobsets", built)
            changed = True
        elif bool(jobset["spec"].get("suspend")) != suspended:
            old = copy.deepcopy(jobset)
            jobset["spec"]["suspend"] = suspended
            self.fake._emit("jobsets", "MODIFIED", jobset, old)
            changed = True
        changed |= self._reconcile_jobset(jobset)
        jobset = self.fake.get("jobsets", ns, name) or jobset
        js_status = jobset.get("status") or {}
        if js_status.get("replicatedJobsStatus") is not None:
            status["jobsStatus"] = copy.deepcopy(js_status["replicatedJobsStatus"])
        for cond in js_status.get("conditions") or []:
            if cond["status"] != "True":
                continue
            if cond["type"] == "Completed":
                self._set_condition(status, "Complete", "True", cond["reason"], cond["message"])
            elif cond["type"] == "Failed":
                self._set_condition(status, "Failed", "True", cond["reason"], cond["message"])
        return self._save("trainjobs", trainjob, status) or changed

    # -- JobSet controller ---------------------------------------------------------------------

    def _reconcile_jobset(self, jobset: dict[str, Any]) -> bool:
        meta, spec = jobset["metadata"], jobset["spec"]
        ns, name = meta["namespace"], meta["name"]
        status = copy.deepcopy(jobset.get("status") or {})
        if any(c["status"] == "True" and c["type"] in ("Completed", "Failed")
               for c in status.get("conditions") or []):  # fmt: skip
            return False
        changed = False
        if self.fake.get("services", ns, name) is None:  # the headless Service (§4)
            self.fake._stored("services", {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": ns, "labels": {JOBSET_NAME: name},
                             "ownerReferences": [self._owner(jobset)]},
                "spec": {"clusterIP": "None", "selector": {JOBSET_NAME: name},
                         "publishNotReadyAddresses": True},
            })  # fmt: skip
            changed = True
        rjobs_status = []
        first_failed = None
        all_complete = True
        global_index = 0
        total = sum(int(r.get("replicas", 1)) for r in spec.get("replicatedJobs") or [])
        before = {r["name"]: r for r in status.get("replicatedJobsStatus") or []}
        for rjob in spec.get("replicatedJobs") or []:
            counts = {"name": rjob["name"], "ready": 0, "succeeded": 0, "failed": 0,
                      "active": 0, "suspended": 0}  # fmt: skip
            for index in range(int(rjob.get("replicas", 1))):
                job_name = f"{name}-{rjob['name']}-{index}"
                job = self.fake.get("jobs", ns, job_name)
                if job is None and not self._dependencies_reached(rjob, spec, before):
                    all_complete = False  # not made until what it dependsOn is done
                    global_index += 1
                    continue
                if job is None:
                    job = self._create_job(jobset, rjob, index, global_index, total)
                    changed = True
                global_index += 1
                if bool(job["spec"].get("suspend")) != bool(spec.get("suspend")):
                    old = copy.deepcopy(job)
                    job["spec"]["suspend"] = bool(spec.get("suspend"))
                    self.fake._emit("jobs", "MODIFIED", job, old)
                    changed = True
                changed |= self._reconcile_job(job)
                if self._true(job, "Failed"):
                    counts["failed"] += 1
                    first_failed = first_failed or job_name
                elif self._true(job, "Complete"):
                    counts["succeeded"] += 1
                elif self._true(job, "Suspended") or job["spec"].get("suspend"):
                    counts["suspended"] += 1
                else:
                    jstatus = job.get("status") or {}
                    if jstatus.get("active"):
                        counts["active"] += 1
                    if int(jstatus.get("ready", 0)) + int(jstatus.get("succeeded", 0)) >= int(
                        job["spec"].get("parallelism", 1)
                    ):
                        counts["ready"] += 1
                if not self._true(job, "Complete"):
                    all_complete = False
            rjobs_status.append(counts)
        status["replicatedJobsStatus"] = rjobs_status
        status.setdefault("restarts", 0)
        if first_failed:  # executeFailurePolicy with maxRestarts 0 (§6)
            message = CONDITIONS["failed"][3].format(job=first_failed)
            self._set_condition(status, "Failed", "True", "FailedJobs", message)
            self._event("JobSet", jobset, "Warning", "FailedJobs", message, "jobset")
        elif all_complete:
            self._set_condition(status, "Completed", "True", "AllJobsCompleted",
                                "jobset completed successfully")  # fmt: skip
            self._event("JobSet", jobset, "Normal", "AllJobsCompleted",
                        "jobset completed successfully", "jobset")  # fmt: skip
        return self._save("jobsets", jobset, status) or changed

    @staticmethod
    def _dependencies_reached(
        rjob: Mapping[str, Any], spec: Mapping[str, Any], before: Mapping[str, Any]
    ) -> bool:
        """``dependencyReachedStatus`` (jobset v0.12.0 pkg/controllers/depends_on.go:9-27):
        every ``dependsOn`` job reached its status in the last ``replicatedJobsStatus`` -
        Complete: all its Jobs succeeded; Ready: all ready, failed or succeeded."""
        replicas = {r["name"]: int(r.get("replicas", 1)) for r in spec.get("replicatedJobs") or []}
        for dep in rjob.get("dependsOn") or []:
            got = before.get(dep["name"]) or {}
            if dep.get("status") == "Complete":
                reached = got.get("succeeded", 0) == replicas.get(dep["name"])
            else:
                done = got.get("ready", 0) + got.get("failed", 0) + got.get("succeeded", 0)
                reached = done == replicas.get(dep["name"])
            if not reached:
                return False
        return True

    def _create_job(
        self,
        jobset: dict[str, Any],
        rjob: Mapping[str, Any],
        index: int,
        global_index: int,
        total: int,
    ) -> dict[str, Any]:
        name = jobset["metadata"]["name"]
        template = copy.deepcopy(rjob["template"])
        job_name = f"{name}-{rjob['name']}-{index}"
        js_labels = {
            JOBSET_NAME: name, f"{JS}jobset-uid": jobset["metadata"]["uid"],
            RJOB_NAME: rjob["name"], f"{JS}replicatedjob-replicas": str(rjob.get("replicas", 1)),
            f"{JS}global-replicas": str(total), f"{JS}job-index": str(index),
            f"{JS}job-global-index": str(global_index),
            f"{JS}job-key": f"{jobset['metadata']['namespace']}/{job_name}",
            RESTART_ATTEMPT: str((jobset.get("status") or {}).get("restarts", 0)),
            f"{JS}group-name": "default", f"{JS}group-replicas": "1",
            f"{JS}job-group-index": str(index),
        }  # fmt: skip
        tmeta = template.get("metadata") or {}
        job: dict[str, Any] = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name, "namespace": jobset["metadata"]["namespace"],
                "labels": {**(tmeta.get("labels") or {}), **js_labels},
                "annotations": {**(tmeta.get("annotations") or {}), **js_labels},
                "ownerReferences": [self._owner(jobset)],
            },
            "spec": {**template["spec"], "backoffLimit": template["spec"].get(
                "backoffLimit", BACKOFF_LIMIT), "suspend": bool(jobset["spec"].get("suspend"))},
            "status": {},
        }  # fmt: skip
        pod_template = job["spec"].setdefault("template", {})
        pmeta = pod_template.setdefault("metadata", {})
        pmeta["labels"] = {**(pmeta.get("labels") or {}), **js_labels}
        pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **js_labels}
        pspec = pod_template.setdefault("spec", {})
        if jobset["spec"].get("network", {}).get("enableDNSHostnames"):
            pspec["subdomain"] = jobset["spec"]["network"].get("subdomain") or name
        return self.fake._stored("jobs", job)

    # -- Job controller ----------------------------------------------------------------------

    def _reconcile_job(self, job: dict[str, Any]) -> bool:
        meta, spec = job["metadata"], job["spec"]
        ns = meta["namespace"]
        status = copy.deepcopy(job.get("status") or {})
        if self._true(job, "Complete") or self._true(job, "Failed"):
            return False
        pods = self.fake.list("pods", ns, f"{CONTROLLER_UID}={meta['uid']}")
        changed = False
        if spec.get("suspend"):
            for pod in pods:
                if pod["status"].get("phase") in ("Pending", "Running"):
                    self.fake._delete("pods", pod)
                    changed = True
            self._set_condition(status, "Suspended", "True", "JobSuspended", "Job suspended")
            status["active"], status["ready"] = 0, 0
            return self._save("jobs", job, status) or changed
        if self._true(job, "Suspended"):
            self._set_condition(status, "Suspended", "False", "JobResumed", "Job resumed")
        status.setdefault("startTime", rfc3339())
        completions = int(spec.get("completions", 1))
        live = [p for p in pods if p["status"].get("phase") in ("Pending", "Running")]
        failed = [p for p in pods if p["status"].get("phase") == "Failed"]
        done = {p["metadata"]["labels"][COMPLETION_INDEX] for p in pods
                if p["status"].get("phase") == "Succeeded"}  # fmt: skip
        # pastBackoffLimitOnFailure: restarts of the pods' containers, plus failed pods.
        restarts = sum(
            int(s.get("restartCount", 0))
            for p in live
            for key in ("initContainerStatuses", "containerStatuses")
            for s in p["status"].get(key) or []
        )
        limit = int(spec.get("backoffLimit", BACKOFF_LIMIT))
        if len(failed) > limit or (restarts > 0 if limit == 0 else restarts >= limit):
            for pod in live:
                self.fake._delete("pods", pod)
            self._set_condition(status, "Failed", "True", *JOB_BACKOFF)
            status.update(active=0, ready=0, failed=len(failed) + len(live))
            self._event("Job", job, "Warning", *JOB_BACKOFF, "job-controller")
            return self._save("jobs", job, status) or True
        have = {p["metadata"]["labels"][COMPLETION_INDEX] for p in live} | done
        for index in range(completions):
            if str(index) not in have:
                pod = self._create_pod(job, index)
                self._event(
                    "Job",
                    job,
                    "Normal",
                    "SuccessfulCreate",
                    f"Created pod: {pod['metadata']['name']}",
                    "job-controller",
                )
                changed = True
        pods = self.fake.list("pods", ns, f"{CONTROLLER_UID}={meta['uid']}")
        live = [p for p in pods if p["status"].get("phase") in ("Pending", "Running")]
        status["active"] = len(live)
        status["ready"] = sum(
            1 for p in live
            if any(c["type"] == "Ready" and c["status"] == "True"
                   for c in p["status"].get("conditions") or [])
        )  # fmt: skip
        status["succeeded"] = len(done)
        status["failed"] = len(failed)
        if done:
            status["completedIndexes"] = ",".join(sorted(done, key=int))
        if len(done) >= completions:
            status["completionTime"] = rfc3339()
            self._set_condition(status, "Complete", "True", "", "")
            self._event("Job", job, "Normal", "Completed", "Job completed", "job-controller")
        return self._save("jobs", job, status) or changed

    def _create_pod(self, job: dict[str, Any], index: int) -> dict[str, Any]:
        template = copy.deepcopy(job["spec"]["template"])
        tmeta, spec = template.get("metadata") or {}, template.get("spec") or {}
        job_name = job["metadata"]["name"]
        uid = job["metadata"]["uid"]
        labels = {**(tmeta.get("labels") or {}), JOB_NAME: job_name, CONTROLLER_UID: uid,
                  "job-name": job_name, "controller-uid": uid,
                  COMPLETION_INDEX: str(index)}  # fmt: skip
        annotations = {**(tmeta.get("annotations") or {}), COMPLETION_INDEX: str(index)}
        spec["hostname"] = f"{job_name}-{index}"
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("serviceAccountName", "default")
        spec["nodeName"] = "node-1"
        for container in spec.get("containers") or []:
            for port in container.get("ports") or []:
                port.setdefault("protocol", "TCP")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{job_name}-{index}-{_suffix()}",
                "namespace": job["metadata"]["namespace"],
                "labels": labels, "annotations": annotations,
                "ownerReferences": [self._owner(job)],
            },
            "spec": spec,
            "status": {"phase": "Pending"},
        }  # fmt: skip
        stored = self.fake._stored("pods", pod)
        self._event("Pod", stored, "Normal", "Scheduled",
                    f"Successfully assigned {stored['metadata']['namespace']}/"
                    f"{stored['metadata']['name']} to {spec['nodeName']}",
                    "default-scheduler")  # fmt: skip
        return stored

    # -- the kubelet and the clock: test hooks ---------------------------------------------------

    def run(self, ns: str, name: str, rjob: str = NODE) -> None:
        """Every live pod's containers of ``rjob`` running; then the controllers reconcile."""
        for pod in self.pods(ns, name, rjob):
            if pod["status"].get("phase") not in ("Pending", "Running"):
                continue
            for container in pod["spec"].get("containers") or []:
                entry = container_status(pod, container["name"])
                if entry is not None and "running" not in (entry.get("state") or {}):
                    self.fake.kubelet.set_state(pod, entry, {"running": {"startedAt": rfc3339()}})
                    self._event("Pod", pod, "Normal", "Started",
                                f"Started container {container['name']}", "kubelet")  # fmt: skip
        self.reconcile(ns, name)

    def succeed(self, ns: str, name: str, index: int | None = None, rjob: str = NODE) -> None:
        """Pod ``index`` (every one when None) of ``rjob`` exits 0: it ends Succeeded."""
        for pod in self.pods(ns, name, rjob):
            labels = pod["metadata"]["labels"]
            if pod["status"].get("phase") not in ("Pending", "Running"):
                continue
            if index is None or labels.get(COMPLETION_INDEX) == str(index):
                self._terminate(pod, 0)
        self.reconcile(ns, name)

    def _terminate(self, pod: dict[str, Any], code: int, reason: str | None = None) -> None:
        ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
        # The main container: an initializer's is named as its job (§8).
        rjob = pod["metadata"]["labels"].get(RJOB_NAME)
        container = rjob if rjob in INITIALIZERS else NODE
        entry = container_status(pod, container)
        if entry is None or "running" not in (entry.get("state") or {}):
            self.fake.append_log(ns, pname, container, b"")
        self.fake.terminate(ns, pname, container, code, reason)

    def exit(self, ns: str, name: str, index: int = 0, exit_code: int = 1) -> None:
        """Node ``index``'s container exits non-zero: under ``OnFailure`` the kubelet restarts
        it in place (``Kubelet.crash_loop``: the first time at once, later after
        CrashLoopBackOff, which ``back_off_over`` ends); the restarts count toward the Job's
        ``backoffLimit`` (§6). Then the controllers reconcile."""
        pod = self.pod(ns, name, index)
        pname = pod["metadata"]["name"]
        self._terminate(pod, exit_code)
        pod = self.fake.get("pods", ns, pname) or pod
        if pod["spec"].get("restartPolicy", "OnFailure") == "OnFailure" and exit_code != 0:
            self.fake.kubelet.crash_loop(pod, NODE)
        self.reconcile(ns, name)

    def back_off_over(self, ns: str, name: str, index: int = 0) -> None:
        self.fake.kubelet.back_off_over(self.pod(ns, name, index), NODE)
        self.reconcile(ns, name)

    def fail(self, ns: str, name: str, index: int = 0, exit_code: int = 1) -> None:
        """Node ``index``'s pod ends in phase Failed (evicted, or its node lost); the Job
        controller counts a failure and creates a replacement pod (a new name suffix)."""
        pod = self.pod(ns, name, index)
        self._terminate(pod, exit_code)
        self.fake.set_pod_phase(ns, pod["metadata"]["name"], "Failed")
        self.reconcile(ns, name)

    def elapse(self, ns: str, name: str, seconds: float) -> None:
        """``seconds`` pass for the TrainJob (``activeDeadlineSeconds``); then reconcile."""
        uid = self._trainjob(ns, name)["metadata"]["uid"]
        self._clock[uid] = self._clock.get(uid, 0.0) + seconds
        self.reconcile(ns, name)

    def suspend(self, ns: str, name: str) -> None:
        self._patch_suspend(ns, name, True)

    def resume(self, ns: str, name: str) -> None:
        self._patch_suspend(ns, name, False)

    def report(self, ns: str, name: str, body: Any) -> tuple[int, dict[str, Any]]:
        """A pod's POST to the status server (§5): 200 and the body echoed, else a
        ``metav1.Status`` (422 for a status outside the CRD's bounds)."""

        def status(code: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
            return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "reason": reason, "message": message, "code": code}  # fmt: skip

        if len(json.dumps(body)) > 64 * 1024:
            return status(413, "RequestEntityTooLarge", "body larger than 64 KiB")
        trainjob = self.fake.get("trainjobs", ns, name)
        if trainjob is None:
            return status(404, "NotFound", f'trainjobs "{name}" not found')
        if not isinstance(body, dict) or not isinstance(body.get("trainerStatus"), dict):
            return status(400, "BadRequest", "body must be {trainerStatus: {...}}")
        ts = body["trainerStatus"]
        percent, eta = ts.get("progressPercentage"), ts.get("estimatedRemainingSeconds")
        metrics = ts.get("metrics") or []
        problems = []
        if percent is not None and not (isinstance(percent, int) and 0 <= percent <= 100):
            problems.append("progressPercentage: must be 0..100")
        if eta is not None and not (isinstance(eta, int) and eta >= 0):
            problems.append("estimatedRemainingSeconds: must be >= 0")
        if not isinstance(metrics, list) or len(metrics) > 256 or not all(
            isinstance(m, dict) and all(isinstance(m.get(k), str) and 1 <= len(m[k]) <= 64
                                        for k in ("name", "value"))
            for m in metrics
        ):  # fmt: skip
            problems.append("metrics: at most 256 {name, value} strings of 1-64 characters")
        if not ts.get("lastUpdatedTime"):
            problems.append("lastUpdatedTime: Required value")
        if problems:
            return status(422, "Invalid", "; ".join(problems))
        old = copy.deepcopy(trainjob)
        trainjob.setdefault("status", {})["trainerStatus"] = copy.deepcopy(ts)
        self.fake._emit("trainjobs", "MODIFIED", trainjob, old)
        return 200, body

    def _patch_suspend(self, ns: str, name: str, value: bool) -> None:
        trainjob = self._trainjob(ns, name)
        old = copy.deepcopy(trainjob)
        trainjob["spec"]["suspend"] = value
        trainjob["metadata"]["generation"] = int(trainjob["metadata"].get("generation", 1)) + 1
        self.fake._emit("trainjobs", "MODIFIED", trainjob, old)
        self.reconcile(ns, name)


TRAINER_HOOKS = {
    "run", "succeed", "exit", "back_off_over", "fail", "elapse", "suspend", "resume",
    "reconcile", "seed_runtimes", "report",
}  # fmt: skip
