"""The rules a TrainJob must pass that the CRD schema does not check, or checks too late.

From Kubeflow Trainer v2.3.0 (``pkg/webhooks/trainjob_webhook.go`` and the plugins it runs)
and JobSet v0.12.0's webhook: the torch plugin reserves the ``PET_*`` names it injects
(``TorchRunReservedEnvNames``, ``pkg/constants/constants.go``); runtime patches need a
domain-prefixed manager (``IsDomainPrefixedPath``, ``plugins/jobset/jobset.go``). And the
name: the TrainJob admission allows 63 characters, but the JobSet it creates names pods
``<job>-<replicated job>-0-<index>-<5 chars>``, which must fit in 63 - a longer name is
admitted, gets no pods and only Warning events (``TrainJobResourcesCreationFailed``), so
it is refused here with the real limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...job import k8s_rules as rules
from ...job.errors import FieldError
from ...job.messages import Message, msg

RESERVED_ENV = (
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
)
# The replicated jobs a runtime may run besides ``node`` (torch_distributed.yaml has none;
# runtimes with initializers add them): the longest one bounds the name.
INITIALIZERS = ("dataset-initializer", "model-initializer")
# The limits keys the Kubeflow SDK (kubeflow 0.5.0, trainer/backends/kubernetes/utils.py
# get_container_devices) reads a pod's device from: a pod whose limits have none of them
# makes TrainerClient().list_jobs() raise for every job in the namespace.
SDK_DEVICE_KEYS = ("nvidia.com/gpu", "google.com/tpu", "huawei.com/Ascend910", "cpu")
SDK_DEVICE_PREFIX = "nvidia.com/mig-"
# A torchtune job's command, and the config items its runtime sets (pkg/constants/
# constants.go at v2.3.0: TorchTuneEntrypoint, TorchTuneImmutableConfigs).
TUNE_RUN = ("tune", "run")
TUNE_IMMUTABLE = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir",
                  "tokenizer.merges_file")  # fmt: skip
POD_SUFFIX = 6  # "-" and the five random characters of a Job's pod
_DOMAIN_PATH = re.compile(r"^(?P<domain>[^/]+)/(?P<path>.+)$")


def max_name_length(nodes: int, replicated_jobs: Iterable[str] = ("node",)) -> int:
    """The longest TrainJob name whose pods JobSet can create: the pod of the highest
    index of each replicated job (initializers run one pod) must fit a DNS label."""
    return rules.LABEL_MAX - len(_longest_pod_suffix(nodes, replicated_jobs)) - POD_SUFFIX


def _longest_pod_suffix(nodes: int, replicated_jobs: Iterable[str]) -> str:
    suffixes = [f"-{rjob}-0-{nodes - 1 if rjob == 'node' else 0}" for rjob in replicated_jobs]
    return max(suffixes, key=len, default=f"-node-0-{nodes - 1}")


def name_problems(
    manifest: Mapping[str, Any], runtime_jobs: Iterable[str] = ()
) -> list[FieldError]:
    """The name, if JobSet cannot name every pod of it: the replicated jobs of the job
    (``node`` and the initializers it asks for) and of its runtime (``runtime_jobs``,
    e.g. the torchtune runtimes' initializer jobs, which run whether the job sets
    ``initializer`` or not: JobSet's webhook checks every replicated job)."""
    spec: Mapping[str, Any] = manifest.get("spec") or {}
    nodes = (spec.get("trainer") or {}).get("numNodes", 1)
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        return []  # check_manifest names numNodes
    name = str((manifest.get("metadata") or {}).get("name") or "")
    jobs = dict.fromkeys([*_replicated_jobs(spec), *runtime_jobs])
    limit = max_name_length(nodes, jobs)
    if len(name) <= limit:
        return []
    pod = f"{name}{_longest_pod_suffix(nodes, jobs)}-xxxxx"
    return [FieldError("name", msg("trainjob_name_length", maximum=limit, nodes=nodes, pod=pod))]


def initializer_problems(
    manifest: Mapping[str, Any], initializers: Iterable[str], runtime: str
) -> list[FieldError]:
    """An initializer the job asks for whose job the runtime lacks (the Trainer's webhook
    refuses it: plugins/jobset/jobset.go:112-115,142-145 at v2.3.0), named by its field."""
    have = set(initializers)
    return [
        FieldError(
            rjob.removesuffix("-initializer"),
            msg("runtime_lacks_initializer", runtime=repr(runtime), job=rjob),
        )
        for rjob in _replicated_jobs(manifest.get("spec") or {})[1:]
        if rjob not in have
    ]


def sdk_reads_limits(limits: Mapping[str, Any]) -> bool:
    """Whether the Kubeflow SDK can read a device from pod ``limits`` (none at all: yes)."""
    return not limits or any(
        key in SDK_DEVICE_KEYS or str(key).startswith(SDK_DEVICE_PREFIX) for key in limits
    )


def sdk_limits_problem(limits: Mapping[str, Any]) -> Message | None:
    """Why ``limits`` would break the Kubeflow SDK for the namespace (None: they don't)."""
    if sdk_reads_limits(limits):
        return None
    return msg(
        "sdk_limits",
        limits=str(sorted(limits)),
        devices=", ".join(SDK_DEVICE_KEYS[:-1]),
        prefix=SDK_DEVICE_PREFIX,
    )


def check_manifest(manifest: Mapping[str, Any]) -> list[FieldError]:
    """Every rule the manifest breaks, each naming its field."""
    errors: list[FieldError] = []
    spec: Mapping[str, Any] = manifest.get("spec") or {}
    trainer: Mapping[str, Any] = spec.get("trainer") or {}
    for field in ("numNodes", "numProcPerNode"):
        value = trainer.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            errors.append(
                FieldError(f"spec.trainer.{field}", msg("whole_number", minimum=1, got=repr(value)))
            )
    errors += name_problems(manifest)
    needs = trainer.get("resourcesPerNode")
    limits = needs.get("limits") if isinstance(needs, Mapping) else None
    problem = sdk_limits_problem(limits) if isinstance(limits, Mapping) else None
    if problem:
        errors.append(FieldError("spec.trainer.resourcesPerNode.limits", problem))
    for i, entry in enumerate(trainer.get("env") or []):
        if isinstance(entry, Mapping) and entry.get("name") in RESERVED_ENV:
            errors.append(
                FieldError(f"spec.trainer.env[{i}].name", msg("pet_env", key=entry["name"]))
            )
    if trainer.get("command") == list(TUNE_RUN):
        for i, arg in enumerate(trainer.get("args") or []):
            key = str(arg).split("=", 1)[0]
            if key in TUNE_IMMUTABLE:
                errors.append(FieldError(f"spec.trainer.args[{i}]", msg("tune_immutable", key=key)))
    for i, entry in enumerate(spec.get("runtimePatches") or []):
        manager = entry.get("manager") if isinstance(entry, Mapping) else None
        if not _domain_prefixed(manager):
            errors.append(
                FieldError(
                    f"spec.runtimePatches[{i}].manager", msg("patch_manager", got=repr(manager))
                )
            )
    runtime = (spec.get("runtimeRef") or {}).get("name")
    if not runtime:
        errors.append(FieldError("spec.runtimeRef.name", msg("runtime_required")))
    return errors


def _replicated_jobs(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """``node``, plus the initializers the job asks for (they run as their own jobs)."""
    initializer = spec.get("initializer") or {}
    wanted = [f"{part}-initializer" for part in ("dataset", "model") if initializer.get(part)]
    return ("node", *wanted)


def _domain_prefixed(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    match = _DOMAIN_PATH.match(value)
    return match is not None and rules.check_dns1123_subdomain(match["domain"]) is None
