"""Hypothesis strategies for valid job bodies (the wire form of JobSpec)."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

from jupyter_pytorchjob.job.spec import CLEAN_POD_POLICIES, RESTART_POLICIES, max_name_length
from jupyter_pytorchjob.kinds.trainjob import TRAINJOB
from jupyter_pytorchjob.kinds.trainjob.rules import max_name_length as trainjob_name_length

LOWER = string.ascii_lowercase
ALNUM = LOWER + string.digits


def dns1035(max_len: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda first, middle, last: (first + middle + last)[:max_len].rstrip("-"),
        st.sampled_from(LOWER),
        st.text(ALNUM + "-", max_size=max_len),
        st.sampled_from(ALNUM),
    ).filter(lambda s: 1 <= len(s) <= max_len)


def dns1123_label(max_len: int = 20) -> st.SearchStrategy[str]:
    return st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?\Z").filter(
        lambda s: len(s) <= max_len
    )


claims = st.one_of(
    dns1123_label(), st.builds(lambda a, b: f"{a}.{b}", dns1123_label(), dns1123_label())
)
label_keys = st.one_of(
    st.from_regex(r"\A[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,10}[a-zA-Z0-9])?\Z"),
    st.builds(
        lambda p, n: f"{p}.example.com/{n}",
        dns1123_label(),
        st.from_regex(r"\A[a-z0-9]([-a-z0-9_.]{0,8}[a-z0-9])?\Z"),
    ),
).filter(lambda k: not k.startswith("kueue.x-k8s.io/"))
label_values = st.from_regex(r"\A(([A-Za-z0-9][-A-Za-z0-9_.]{0,10})?[A-Za-z0-9])?\Z")
env_names = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z").filter(
    lambda n: (
        n not in {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PYTHONUNBUFFERED"}
        and not n.startswith(("PET_", "PTJOB_"))
    )
)
path_parts = st.from_regex(r"\A[a-z0-9_][a-z0-9_.-]{0,8}\Z").filter(lambda p: p not in (".", ".."))
abs_paths = st.lists(path_parts, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p))
quantities_mem = st.sampled_from(["512Mi", "8Gi", "1G", "1.5Gi", "100M", "64Mi", "2Ti", "1e9"])
quantities_cpu = st.sampled_from(["1", "500m", "4", "0.5", "16", "250m"])
# What a process can receive: no NUL, no lone surrogate (JobSpec refuses both).
exec_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
free_text = st.text(exec_chars, max_size=40)


@st.composite
def pvc_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    mounts = draw(st.lists(abs_paths, max_size=4, unique=True))
    mounts = [m for m in mounts if not m.startswith("/dev/shm")]
    # Mount paths must be unique after normalisation; the strategy's are normal already.
    return [
        {
            "claim": draw(claims),
            "mountPath": m,
            "subPath": draw(st.one_of(st.just(""), path_parts)),
            "readOnly": draw(st.booleans()),
        }
        for m in mounts
    ]


@st.composite
def tolerations(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(["Equal", "Exists"]))
    effect = draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]))
    t: dict[str, Any] = {
        "key": draw(label_keys),
        "operator": operator,
        "value": draw(label_values) if operator == "Equal" else "",
        "effect": effect,
    }
    if effect == "NoExecute" and draw(st.booleans()):
        t["tolerationSeconds"] = draw(st.integers(0, 3600))
    return t


@st.composite
def job_bodies(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(st.integers(1, 130))
    gpus = draw(st.integers(0, 8))
    elastic = draw(st.booleans())  # then Worker-only, as the upstream elastic examples
    body: dict[str, Any] = {
        "name": draw(dns1035(max_name_length(nodes, master=not elastic))),
        "image": draw(
            st.sampled_from(
                ["pytorch/pytorch:2.13.0", "registry.local:5000/a/b@sha256:" + "a" * 64]
            )
        ),
        "nodes": nodes,
        "gpus": gpus,
        "pvc": draw(pvc_lists()),
        "env": draw(st.dictionaries(env_names, free_text, max_size=4)),
        "labels": draw(st.dictionaries(label_keys, label_values, max_size=3)),
        "annotations": draw(st.dictionaries(label_keys, free_text, max_size=3)),
        "nodeSelector": draw(st.dictionaries(label_keys, label_values, max_size=2)),
        "tolerations": draw(st.lists(tolerations(), max_size=3)),
        "restartPolicy": draw(st.sampled_from(RESTART_POLICIES)),
        "cleanPodPolicy": draw(st.sampled_from(CLEAN_POD_POLICIES)),
    }
    optional = {
        "cpu": quantities_cpu,
        "memory": quantities_mem,
        "shm": st.one_of(quantities_mem, st.just("off")),
        "nprocPerNode": st.integers(1, 8),
        "gpuResource": st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]),
        "backoffLimit": st.one_of(st.none(), st.integers(0, 100)),
        "deadline": st.integers(1, 10**7),
        "ttl": st.integers(0, 10**6),
        "queue": st.from_regex(r"\A[a-z]([-a-z0-9]{0,10}[a-z0-9])?\Z"),
        "priorityClassName": st.sampled_from(["high", "system-cluster-critical", "team.low"]),
        "serviceAccount": st.sampled_from(["default", "s3-reader", "team.ml"]),
        "imagePullSecrets": st.lists(st.sampled_from(["regcred", "ghcr.io-token"]), unique=True),
        "logdir": abs_paths,
        "workdir": abs_paths,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            body[key] = draw(strategy)
    if elastic:  # the Workers within [min, max]
        body["master"] = False
        policy = {
            "minNodes": st.integers(1, nodes),
            "maxNodes": st.integers(nodes, nodes + 4),
            "maxRestarts": st.integers(0, 100),
            "rdzvBackend": st.sampled_from(["c10d", "etcd", "etcd-v2"]),
        }
        for key in draw(st.lists(st.sampled_from(list(policy)), min_size=1, unique=True)):
            body[key] = draw(policy[key])
    if draw(st.booleans()):
        body["script"] = draw(st.text(exec_chars, min_size=1, max_size=200).filter(str.strip))
        body["args"] = draw(st.lists(free_text, max_size=3))
    else:
        first = draw(st.text(exec_chars, min_size=1, max_size=20).filter(str.strip))
        body["command"] = [first, *draw(st.lists(st.text(exec_chars, max_size=20), max_size=4))]
    return body


@st.composite
def trainjob_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """Valid TrainJob bodies: ``job_bodies`` less what a TrainJob cannot express."""
    supported = set(TRAINJOB.supported_fields())
    body = {k: v for k, v in draw(job_bodies()).items() if k in supported}
    body["kind"] = "TrainJob"
    body["name"] = body["name"][: trainjob_name_length(body["nodes"])].rstrip("-")
    sdk_gpu = body.get("gpuResource", "nvidia.com/gpu") == "nvidia.com/gpu"
    if body.get("gpus") not in (None, 0, "0", "") and not sdk_gpu and not body.get("cpu"):
        body["cpu"] = "1"  # the Kubeflow SDK reads no other GPU without a CPU
    return body


# -- manifests as people and other tools write them ---------------------------------------

# A process cannot receive NUL in its arguments (the job model refuses them).
words = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8
)
images = st.sampled_from(["pytorch/pytorch:2.13.0", "ghcr.io/a/b:latest", "busybox"])
quantities = st.one_of(quantities_cpu, quantities_mem, st.integers(1, 64))


@st.composite
def _resources(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("requests", "limits"):
        amounts: dict[str, Any] = {}
        if draw(st.booleans()):
            amounts["cpu"] = draw(st.one_of(quantities_cpu, st.integers(1, 16)))
        if draw(st.booleans()):
            amounts["memory"] = draw(quantities_mem)
        if part == "limits" and draw(st.booleans()):
            amounts[draw(st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]))] = draw(
                st.one_of(st.integers(1, 8), st.sampled_from(["1", "2"]))
            )
        if part == "limits" and draw(st.booleans()):
            amounts["rdma/hca"] = 1
        if amounts:
            out[part] = amounts
    return out


def _toleration(t: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in t.items() if v != ""}


@st.composite
def _pod_template(draw: st.DrawFn, claims_used: list[str]) -> dict[str, Any]:
    from jupyter_pytorchjob.kinds.manifests import pvc_volume_name

    container: dict[str, Any] = {"name": "pytorch", "image": draw(images)}
    # Always a command: the form cannot show a job that runs the image's entrypoint.
    container["command"] = draw(st.lists(words.filter(str.strip), min_size=1, max_size=3))
    if draw(st.booleans()):
        container["args"] = draw(st.lists(words, max_size=3))
    if draw(st.booleans()):
        container["workingDir"] = draw(abs_paths)
    env = [
        {"name": k, "value": v}
        for k, v in draw(st.dictionaries(env_names, free_text, max_size=3)).items()
    ]
    if draw(st.booleans()):
        env.append({"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}})
    if env:
        container["env"] = env
    resources = draw(_resources())
    if resources:
        container["resources"] = resources
    if draw(st.booleans()):
        container["imagePullPolicy"] = draw(st.sampled_from(["IfNotPresent", "Always"]))
    if draw(st.booleans()):
        container["ports"] = [{"name": "pytorchjob-port", "containerPort": 29500}]
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for pvc in draw(pvc_lists()):
        if pvc["mountPath"] == "/etc/cfg" or pvc["mountPath"].startswith("/etc/cfg/"):
            continue
        name = pvc_volume_name(pvc["claim"])
        if name not in {v["name"] for v in volumes}:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": pvc["claim"]}})
        mount = {"name": name, "mountPath": pvc["mountPath"]}
        if pvc["subPath"]:
            mount["subPath"] = pvc["subPath"]
        if pvc["readOnly"]:
            mount["readOnly"] = True
        mounts.append(mount)
        claims_used.append(pvc["claim"])
    if draw(st.booleans()):
        size = draw(quantities_mem)
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    if draw(st.booleans()):
        volumes.append({"name": "cfg", "configMap": {"name": "train-config"}})
        mounts.append({"name": "cfg", "mountPath": "/etc/cfg"})
    if mounts:
        container["volumeMounts"] = mounts
    containers = [container]
    if draw(st.booleans()):
        containers.insert(
            draw(st.integers(0, 1)), {"name": "sidecar", "image": "busybox", "args": ["sleep"]}
        )
    pod: dict[str, Any] = {"containers": containers}
    if volumes:
        pod["volumes"] = volumes
    optional_pod = {
        "nodeSelector": st.dictionaries(label_keys, label_values, min_size=1, max_size=2),
        "tolerations": st.lists(tolerations().map(_toleration), min_size=1, max_size=2),
        "affinity": st.just({"podAntiAffinity": {}}),
        "priorityClassName": st.just("high"),
        "serviceAccountName": st.just("s3-reader"),
        "imagePullSecrets": st.just([{"name": "regcred"}]),
        "schedulerName": st.just("volcano"),
    }
    for key, strategy in optional_pod.items():
        if draw(st.booleans()):
            pod[key] = draw(strategy)
    template: dict[str, Any] = {"spec": pod}
    meta: dict[str, Any] = {}
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(label_keys, label_values, min_size=1, max_size=2))
    if draw(st.booleans()):
        meta["annotations"] = draw(
            st.dictionaries(label_keys, free_text, min_size=1, max_size=2)
            | st.just({"sidecar.istio.io/inject": "false"})
        )
    if meta:
        template["metadata"] = meta
    return template


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    """PyTorchJobs the webhook admits, as written by hand, the SDK or upstream examples:
    a Master and/or Workers, each replica with its own template and restart policy."""
    has_master, workers = draw(
        st.one_of(
            st.tuples(st.just(True), st.integers(0, 4)),
            st.tuples(st.just(False), st.integers(1, 4)),
        )
    )
    nodes = workers + (1 if has_master else 0)
    claims_used: list[str] = []
    replicas: dict[str, Any] = {}
    for rtype, count in (("Master", 1 if has_master else 0), ("Worker", workers)):
        if not count:
            continue
        rspec: dict[str, Any] = {"template": draw(_pod_template(claims_used))}
        if rtype == "Master" or count > 1 or draw(st.booleans()):  # the operator's default: 1
            rspec = {"replicas": count, **rspec}
        if draw(st.booleans()):
            rspec["restartPolicy"] = draw(st.sampled_from(RESTART_POLICIES))
        replicas[rtype] = rspec
    spec: dict[str, Any] = {"pytorchReplicaSpecs": replicas}
    if draw(st.booleans()):
        spec["nprocPerNode"] = str(draw(st.integers(1, 8)))
    run_policy: dict[str, Any] = {}
    optional_run = {
        "cleanPodPolicy": st.sampled_from(CLEAN_POD_POLICIES),
        "backoffLimit": st.integers(0, 10),
        "activeDeadlineSeconds": st.integers(1, 10**6),
        "ttlSecondsAfterFinished": st.integers(0, 10**5),
        "suspend": st.booleans(),
        "schedulingPolicy": st.just({"queue": "q", "minAvailable": 1}),
    }
    for key, strategy in optional_run.items():
        if draw(st.booleans()):
            run_policy[key] = draw(strategy)
    if run_policy:
        spec["runPolicy"] = run_policy
    if workers and draw(st.booleans()):
        elastic: dict[str, Any] = {"rdzvBackend": "c10d"}
        if draw(st.booleans()):
            elastic |= {"minReplicas": 1, "maxReplicas": workers, "maxRestarts": 3}
        spec["elasticPolicy"] = elastic
    metadata: dict[str, Any] = {"name": draw(dns1035(max_name_length(nodes, master=has_master)))}
    labels = draw(st.dictionaries(label_keys, label_values, max_size=2))
    if draw(st.booleans()):
        labels["kueue.x-k8s.io/queue-name"] = "team-a-queue"
    if labels:
        metadata["labels"] = labels
    annotations = draw(st.dictionaries(label_keys, free_text, max_size=2))
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": metadata,
        "spec": spec,
    }
