"""The manifest builder: CRD-valid, webhook-valid, and reversible."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.manifest_yaml import manifest_from_yaml, manifest_to_yaml
from jupyter_pytorchjob.job.spec import max_name_length
from jupyter_pytorchjob.kinds.manifests import BOOTSTRAP_COMMAND, pvc_volume_name
from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest, parse_manifest
from jupyter_pytorchjob.kinds.pytorchjob.webhook import check_manifest

from .crd import manifest_errors, model_errors, schema_errors
from .strategies import job_bodies, manifests

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def replicas(manifest: dict[str, Any]) -> dict[str, Any]:
    return manifest["spec"]["pytorchReplicaSpecs"]  # type: ignore[no-any-return]


def pytorch_container(replica: dict[str, Any]) -> dict[str, Any]:
    (container,) = [c for c in replica["template"]["spec"]["containers"] if c["name"] == "pytorch"]
    return container  # type: ignore[no-any-return]


@SETTINGS
@given(job_bodies())
def test_every_manifest_is_valid_for_crd_and_webhook(body: dict[str, Any]) -> None:
    spec = JobSpec.from_wire(body)
    manifest = build_manifest(spec, namespace="team-a")
    assert manifest_errors(manifest) == []
    assert check_manifest(manifest) == []
    # The product's rules, each visible in the manifest:
    specs = replicas(manifest)
    assert ("Master" in specs) == spec.master
    if spec.master:
        assert specs["Master"]["replicas"] == 1
    assert ("Worker" in specs) == (spec.workers > 0)
    if spec.workers:
        assert specs["Worker"]["replicas"] == spec.workers
    assert ("elasticPolicy" in manifest["spec"]) == spec.elastic
    assert manifest["spec"]["nprocPerNode"] == str(spec.nproc_per_node)
    assert manifest["spec"]["runPolicy"]["cleanPodPolicy"] == spec.clean_pod_policy
    for replica in specs.values():
        assert replica["restartPolicy"] == spec.restart_policy
        template = replica["template"]
        assert template["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"
        container = pytorch_container(replica)
        mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
        assert {p.mount_path for p in spec.pvc} <= mounts
        assert ("/dev/shm" in mounts) == bool(spec.shm)
        limits = container.get("resources", {}).get("limits", {})
        assert limits.get(spec.gpu_resource, 0) == spec.gpus
    assert all(len(f"{spec.name}-{replica}") <= 63 for replica in spec.replica_names())


@SETTINGS
@given(job_bodies())
def test_round_trip_is_identity(body: dict[str, Any]) -> None:
    spec = JobSpec.from_wire(body)
    manifest = build_manifest(spec)
    # With no GPUs the manifest cannot say which GPU resource was chosen: the reader
    # is told the configured one, as the server does.
    hint = spec.gpu_resource
    assert parse_manifest(manifest, gpu_resource=hint) == spec
    # ... also through YAML text, as the preview editor sends it.
    text = manifest_to_yaml(manifest)
    assert manifest_from_yaml(text) == manifest
    assert parse_manifest(yaml.safe_load(text), gpu_resource=hint) == spec


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(st.text(max_size=70), st.integers()),
            "nodes": st.one_of(st.integers(-3, 200), st.text(max_size=4), st.none()),
            "gpus": st.one_of(st.integers(-2, 9), st.floats(), st.text(max_size=3)),
            "cpu": st.one_of(st.text(max_size=6), st.integers(-2, 4)),
            "memory": st.text(max_size=6),
            "shm": st.text(max_size=6),
            "command": st.one_of(st.lists(st.text(max_size=5), max_size=3), st.text(max_size=5)),
            "script": st.one_of(st.none(), st.text(max_size=20)),
            "pvc": st.lists(
                st.fixed_dictionaries(
                    {"claim": st.text(max_size=8), "mountPath": st.text(max_size=12)}
                ),
                max_size=3,
            ),
            "env": st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
            "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
            "tolerations": st.lists(
                st.dictionaries(
                    st.sampled_from(["key", "operator", "value", "effect"]),
                    st.text(max_size=8),
                ),
                max_size=2,
            ),
            "restartPolicy": st.text(max_size=10),
            "logdir": st.text(max_size=12),
            "backoffLimit": st.one_of(st.integers(-5, 5), st.text(max_size=3)),
        },
    )
)
def test_nothing_invalid_reaches_a_manifest(body: dict[str, Any]) -> None:
    """Arbitrary bodies either fail with named fields or give a valid manifest."""
    try:
        spec = JobSpec.from_wire(body)
    except JobSpecInvalid as err:
        assert all(e.field and e.message for e in err.errors)
        return
    manifest = build_manifest(spec)
    assert manifest_errors(manifest) == []
    assert check_manifest(manifest) == []


def test_the_done_when_example() -> None:
    spec = JobSpec.from_wire(
        {
            "name": "demo",
            "nodes": 3,
            "gpus": 2,
            "pvc": [{"claim": "data", "mountPath": "/mnt/data"}],
            "shm": "8Gi",
            "command": ["python", "train.py"],
        }
    )
    manifest = build_manifest(spec)
    assert manifest_errors(manifest) == []
    master, worker = replicas(manifest)["Master"], replicas(manifest)["Worker"]
    assert master["replicas"] == 1 and worker["replicas"] == 2
    assert manifest["spec"]["nprocPerNode"] == "2"
    for replica in (master, worker):
        pod = replica["template"]["spec"]
        assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in pod[
            "volumes"
        ]
        assert {"name": "pvc-data", "persistentVolumeClaim": {"claimName": "data"}} in pod[
            "volumes"
        ]
        container = pytorch_container(replica)
        assert container["command"] == ["python", "train.py"]
        assert container["resources"]["limits"] == {"nvidia.com/gpu": 2}


def test_script_is_embedded_and_launched_without_a_shell() -> None:
    spec = JobSpec.from_wire(
        {
            "name": "s",
            "script": "print('hi')\n",
            "nodes": 2,
            "nprocPerNode": 2,
            "args": ["--epochs", "3"],
        }
    )
    container = pytorch_container(replicas(build_manifest(spec))["Worker"])
    assert tuple(container["command"]) == BOOTSTRAP_COMMAND
    assert container["args"] == ["torchrun", "--", "--epochs", "3"]
    assert {"name": "PTJOB_SCRIPT", "value": "print('hi')\n"} in container["env"]
    single = JobSpec.from_wire({"name": "s", "script": "print(1)"})
    assert pytorch_container(replicas(build_manifest(single))["Master"])["args"] == ["python", "--"]


def test_script_yaml_is_readable_block_text() -> None:
    spec = JobSpec.from_wire({"name": "s", "script": "import torch\nprint(torch.__version__)\n"})
    text = manifest_to_yaml(build_manifest(spec))
    assert "value: |\n" in text and "import torch\n" in text


def test_queue_logdir_labels() -> None:
    spec = JobSpec.from_wire(
        {
            "name": "q",
            "command": ["x"],
            "queue": "team-a-queue",
            "logdir": "/mnt/data/runs/q",
            "labels": {"team": "a"},
            "annotations": {"note": "hello"},
            "pvc": [{"claim": "data", "mountPath": "/mnt/data"}],
        }
    )
    manifest = build_manifest(spec)
    meta = manifest["metadata"]
    assert meta["labels"] == {"team": "a", "kueue.x-k8s.io/queue-name": "team-a-queue"}
    assert meta["annotations"]["pytorchjob.jupyter.org/logdir"] == "/mnt/data/runs/q"
    template = replicas(manifest)["Master"]["template"]
    assert template["metadata"]["labels"] == {"team": "a"}
    assert template["metadata"]["annotations"]["note"] == "hello"
    env = pytorch_container(replicas(manifest)["Master"])["env"]
    assert {"name": "PTJOB_LOGDIR", "value": "/mnt/data/runs/q"} in env


@pytest.mark.parametrize(
    ("wire", "value", "key", "in_pod", "bad", "bad_field"),
    [
        # Kueue and the scheduler's preemption read the pods' priorityClassName.
        ("priorityClassName", "high-priority", "priorityClassName", "high-priority",
         "High Priority", "priorityClassName"),
        # Workload identity (S3, GCS) reaches the pods through their serviceAccountName.
        ("serviceAccount", "s3-reader", "serviceAccountName", "s3-reader",
         "S3 Reader", "serviceAccount"),
        # A private registry's credentials: each Secret a reference in every pod spec.
        ("imagePullSecrets", ["regcred", "ghcr"], "imagePullSecrets",
         [{"name": "regcred"}, {"name": "ghcr"}], ["ok", "Not Ok"], "imagePullSecrets[1]"),
    ],
)  # fmt: skip
def test_a_pod_field_goes_into_every_pod_template_and_back(
    wire: str, value: Any, key: str, in_pod: Any, bad: Any, bad_field: str
) -> None:
    body = {"name": "p", "nodes": 3, "command": ["x"], wire: value}
    manifest = build_manifest(JobSpec.from_wire(body))
    assert manifest_errors(manifest) == []  # the models and the CRD keep it
    for replica in replicas(manifest).values():
        assert replica["template"]["spec"][key] == in_pod
    spec = parse_manifest(manifest)
    assert spec.to_wire()[wire] == value and spec.extras == {}
    unset = JobSpec.from_wire({**body, wire: None})
    assert key not in replicas(build_manifest(unset))["Master"]["template"]["spec"]
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({**body, wire: bad})
    assert info.value.field == bad_field


def test_same_claim_twice_is_one_volume() -> None:
    spec = JobSpec.from_wire(
        {
            "name": "v",
            "command": ["x"],
            "shm": "off",
            "pvc": [
                {"claim": "home", "mountPath": "/home/jovyan"},
                {"claim": "home", "mountPath": "/data", "subPath": "datasets", "readOnly": True},
            ],
        }
    )
    pod = replicas(build_manifest(spec))["Master"]["template"]["spec"]
    assert pod["volumes"] == [{"name": "pvc-home", "persistentVolumeClaim": {"claimName": "home"}}]
    assert pod["containers"][0]["volumeMounts"][1] == {
        "name": "pvc-home",
        "mountPath": "/data",
        "subPath": "datasets",
        "readOnly": True,
    }
    assert parse_manifest(build_manifest(spec)) == spec


def test_long_dotted_claims_get_valid_volume_names() -> None:
    claim = "a" * 100 + ".b"
    name = pvc_volume_name(claim)
    assert len(name) <= 63 and name.startswith("pvc-")
    assert pvc_volume_name(claim) != pvc_volume_name("a" * 100 + ".c")


EXTRA_FIELDS_MANIFEST: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {
        "name": "edited",
        "namespace": "team-a",
        "uid": "1234",
        "resourceVersion": "99",
        "creationTimestamp": "2026-11-22T00:00:00Z",
        "labels": {"team": "a"},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "finalizers": ["example.com/keep"],
    },
    "spec": {
        "nprocPerNode": "1",
        "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 3},
        "runPolicy": {
            "cleanPodPolicy": "All",
            "backoffLimit": 2,
            "suspend": True,
            "schedulingPolicy": {"priorityClass": "high"},
        },
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "restartPolicy": "Never",
                "template": {
                    "metadata": {
                        "labels": {"team": "a", "only-master": "yes"},
                        "annotations": {"sidecar.istio.io/inject": "false"},
                    },
                    "spec": {
                        "priorityClassName": "high",
                        "imagePullSecrets": [{"name": "regcred"}],
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "my/img:1",
                                "command": ["python", "train.py"],
                                "args": ["--lr", "0.1"],
                                "env": [
                                    {"name": "A", "value": "1"},
                                    {
                                        "name": "TOKEN",
                                        "valueFrom": {
                                            "secretKeyRef": {"name": "s", "key": "token"}
                                        },
                                    },
                                ],
                                "securityContext": {"runAsUser": 1000},
                                "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
                                "resources": {
                                    "limits": {
                                        "nvidia.com/gpu": 1,
                                        "cpu": "4",
                                        "memory": "16Gi",
                                        "rdma/hca": 1,
                                    },
                                    "requests": {"cpu": "4", "memory": "16Gi"},
                                },
                                "volumeMounts": [
                                    {"name": "cfg", "mountPath": "/etc/cfg"},
                                    {"name": "data", "mountPath": "/mnt/data"},
                                ],
                            },
                            {"name": "sidecar", "image": "busybox", "command": ["sleep", "inf"]},
                        ],
                        "volumes": [
                            {"name": "cfg", "configMap": {"name": "train-config"}},
                            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                        ],
                    },
                },
            },
            "Worker": {
                "replicas": 2,
                "restartPolicy": "Never",
                "template": {
                    "spec": {
                        "affinity": {"podAntiAffinity": {}},
                        "containers": [{"name": "pytorch", "image": "my/img:1"}],
                    }
                },
            },
        },
    },
    "status": {"conditions": []},
}


def test_extra_fields_are_kept() -> None:
    spec = parse_manifest(EXTRA_FIELDS_MANIFEST)
    assert spec.name == "edited" and spec.nodes == 3 and spec.gpus == 1
    assert spec.command == ("python", "train.py") and spec.args == ("--lr", "0.1")
    assert spec.env == {"A": "1"} and spec.restart_policy == "Never"
    assert spec.clean_pod_policy == "All" and spec.backoff_limit == 2
    assert spec.pvc[0].claim == "data" and spec.shm is None
    rebuilt = build_manifest(spec)
    assert manifest_errors(rebuilt) == []
    meta = rebuilt["metadata"]
    assert "uid" not in meta and "resourceVersion" not in meta and "namespace" not in meta
    assert meta["finalizers"] == ["example.com/keep"]
    assert "annotations" not in meta  # last-applied is server state, not the user's
    spec_ = rebuilt["spec"]
    assert spec_["elasticPolicy"] == EXTRA_FIELDS_MANIFEST["spec"]["elasticPolicy"]
    assert spec_["runPolicy"]["suspend"] is True
    assert spec_["runPolicy"]["schedulingPolicy"] == {"priorityClass": "high"}
    master = replicas(rebuilt)["Master"]["template"]
    assert master["metadata"]["labels"] == {"team": "a", "only-master": "yes"}
    assert master["spec"]["priorityClassName"] == "high"
    assert master["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    names = [c["name"] for c in master["spec"]["containers"]]
    assert names == ["pytorch", "sidecar"]
    container = master["spec"]["containers"][0]
    assert container["securityContext"] == {"runAsUser": 1000}
    assert {
        "name": "TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "s", "key": "token"}},
    } in container["env"]
    assert container["resources"]["limits"]["rdma/hca"] == 1
    assert {"name": "cfg", "mountPath": "/etc/cfg"} in container["volumeMounts"]
    assert {"name": "cfg", "configMap": {"name": "train-config"}} in master["spec"]["volumes"]
    worker = replicas(rebuilt)["Worker"]["template"]["spec"]
    assert worker["affinity"] == {"podAntiAffinity": {}}
    # Stable: parse(build(parse(m))) == parse(m).
    assert parse_manifest(rebuilt) == spec


def test_extras_do_not_resurrect_a_removed_worker() -> None:
    spec = parse_manifest(EXTRA_FIELDS_MANIFEST)
    # One node now: the elastic fields (an elasticPolicy needs a Worker) make it
    # invalid - said so, naming the first elastic field.
    with pytest.raises(JobSpecInvalid) as info:
        build_manifest(spec.with_changes(nodes=1))
    assert info.value.field == "minNodes"
    assert "Workers" in str(info.value)
    not_elastic = {"min_nodes": None, "max_nodes": None, "rdzv_backend": None}
    one = build_manifest(spec.with_changes(nodes=1, **not_elastic))
    assert "Worker" not in replicas(one) and "elasticPolicy" not in one["spec"]
    # An elasticPolicy left in extras is still refused, as the webhook would.
    extras = copy.deepcopy(dict(spec.extras))
    extras["spec"]["elasticPolicy"] = {"rdzvBackend": "c10d"}
    with pytest.raises(JobSpecInvalid) as info:
        build_manifest(spec.with_changes(nodes=1, extras=extras, **not_elastic))
    assert info.value.field == "extras" and "Worker" in str(info.value)


def test_edited_yaml_changes_form_fields() -> None:
    spec = JobSpec.from_wire({"name": "y", "command": ["x"], "nodes": 2})
    text = manifest_to_yaml(build_manifest(spec)).replace(
        "replicas: 1\n      restartPolicy", "replicas: 1\n      restartPolicy", 1
    )
    edited = yaml.safe_load(text)
    replicas(edited)["Worker"]["replicas"] = 4
    pytorch_container(replicas(edited)["Master"])["image"] = "other:2"
    back = parse_manifest(edited)
    assert back.nodes == 5 and back.image == "other:2"


@pytest.mark.parametrize(
    "nproc",
    ["auto", "gpu"],
)
def test_auto_nproc_from_other_tools_becomes_the_gpu_count(nproc: str) -> None:
    manifest = build_manifest(JobSpec.from_wire({"name": "a", "command": ["x"], "gpus": 4}))
    manifest["spec"]["nprocPerNode"] = nproc
    assert parse_manifest(manifest).nproc_per_node == 4


def test_parse_refuses_other_kinds_and_jobs_without_replicas() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        parse_manifest({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"})
    assert info.value.field == "kind"
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"}}
    with pytest.raises(JobSpecInvalid) as info:
        parse_manifest(job | {"spec": {"pytorchReplicaSpecs": {"Chief": {}}}})
    assert info.value.field == "spec.pytorchReplicaSpecs"
    assert "Master or a Worker" in str(info.value)
    with pytest.raises(JobSpecInvalid) as info:
        parse_manifest(job | {"spec": {"pytorchReplicaSpecs": {"Worker": {}}}})
    assert info.value.field == "spec.pytorchReplicaSpecs.Worker.template.spec.containers"
    with pytest.raises(JobSpecInvalid) as info:
        manifest_from_yaml("a: [")
    assert info.value.field == "yaml"


# The upstream example kubeflow/trainer@v1.9.4 examples/pytorch/elastic/imagenet/imagenet.yaml:
# Worker-only, elastic, requests without limits, an imagePullPolicy.
IMAGENET = yaml.safe_load("""
apiVersion: "kubeflow.org/v1"
kind: PyTorchJob
metadata:
  name: elastic-example-imagenet
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 3
    maxRestarts: 100
    metrics:
      - type: Resource
        resource:
          name: cpu
          target:
            type: Utilization
            averageUtilization: 80
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: ghcr.io/kubeflow/training-v1/pytorch-elastic-example-imagenet:latest
              imagePullPolicy: IfNotPresent
              resources:
                requests:
                  cpu: 4
              env:
              - name: LOGLEVEL
                value: DEBUG
              command:
                - python
                - -m
                - torch.distributed.run
                - /workspace/examples/imagenet.py
                - "--arch=resnet18"
                - "--epochs=1"
                - "--batch-size=32"
                - "--workers=0"
                - "/workspace/data/tiny-imagenet-200"
""")


def keeps(original: Any, rebuilt: Any, path: str = "") -> list[str]:
    """Paths of ``original`` whose value ``rebuilt`` lost or changed (named lists by name)."""
    if isinstance(original, dict):
        if not isinstance(rebuilt, dict):
            return [path]
        return [
            p
            for key, value in original.items()
            for p in (
                keeps(value, rebuilt[key], f"{path}.{key}") if key in rebuilt else [f"{path}.{key}"]
            )
        ]
    if isinstance(original, list) and isinstance(rebuilt, list):
        names = [i.get("name") for i in original if isinstance(i, dict)]
        named = len(names) == len(original) and all(isinstance(n, str) for n in names)
        if named and len(set(names)) == len(names):
            by_name = {i.get("name"): i for i in rebuilt if isinstance(i, dict)}
            return [
                p
                for item in original
                for p in (
                    keeps(item, by_name[item["name"]], f"{path}[{item['name']}]")
                    if item["name"] in by_name
                    else [f"{path}[{item['name']}]"]
                )
            ]
    return [] if original == rebuilt else [path]


def test_a_worker_only_elastic_job_round_trips() -> None:
    spec = parse_manifest(IMAGENET)
    assert (spec.nodes, spec.master, spec.workers) == (2, False, 2)
    assert spec.replica_names() == ["worker-0", "worker-1"]
    assert spec.restart_policy == "OnFailure" and spec.cpu == "4"
    rebuilt = build_manifest(spec)
    assert list(replicas(rebuilt)) == ["Worker"] and replicas(rebuilt)["Worker"]["replicas"] == 2
    assert keeps(IMAGENET, rebuilt) == []
    assert manifest_errors(rebuilt) == [] and check_manifest(rebuilt) == []
    assert parse_manifest(rebuilt) == spec
    # ... and through the wire form, as a clone travels.
    assert JobSpec.from_wire(spec.to_wire()) == spec


def test_elastic_fields_are_read_from_the_upstream_example() -> None:
    spec = parse_manifest(IMAGENET)
    assert (spec.min_nodes, spec.max_nodes, spec.max_restarts) == (1, 3, 100)
    assert spec.rdzv_backend == "c10d"
    # What the form does not show stays in extras.
    assert set(spec.extras["spec"]["elasticPolicy"]) == {"metrics"}


def test_elastic_fields_become_the_elastic_policy() -> None:
    body = {"name": "e", "command": ["x"], "master": False, "nodes": 2}
    spec = JobSpec.from_wire({**body, "minNodes": 1, "maxNodes": 4})
    manifest = build_manifest(spec)
    assert manifest["spec"]["elasticPolicy"] == {
        "rdzvBackend": "c10d",
        "minReplicas": 1,
        "maxReplicas": 4,
    }
    assert manifest_errors(manifest) == [] and check_manifest(manifest) == []
    assert parse_manifest(manifest) == spec
    with_restarts = JobSpec.from_wire({**body, "maxRestarts": 5, "rdzvBackend": "etcd-v2"})
    assert build_manifest(with_restarts)["spec"]["elasticPolicy"] == {
        "rdzvBackend": "etcd-v2",
        "maxRestarts": 5,
    }
    assert "elasticPolicy" not in build_manifest(JobSpec.from_wire(body))["spec"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"minNodes": 3}, "minNodes"),  # more than the 2 Workers it starts with
        ({"maxNodes": 1}, "maxNodes"),
        ({"minNodes": 2, "maxNodes": 1, "nodes": 2}, "maxNodes"),
        ({"rdzvBackend": "zookeeper"}, "rdzvBackend"),
        ({"maxRestarts": -1}, "maxRestarts"),
        ({"master": True, "nodes": 1, "minNodes": 1}, "minNodes"),  # no Worker at all
    ],
)
def test_invalid_elastic_fields_name_the_field(changes: dict[str, Any], field: str) -> None:
    body = {"name": "e", "command": ["x"], "master": False, "nodes": 2, **changes}
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire(body)
    assert info.value.field == field, info.value.errors


def test_worker_only_name_length_counts_workers_from_zero() -> None:
    assert max_name_length(3, master=False) == 63 - len("-worker-2")
    assert max_name_length(11, master=False) == 63 - len("-worker-10")
    assert max_name_length(11) == 63 - len("-worker-9")
    body = {"command": ["x"], "nodes": 11, "master": False}
    JobSpec.from_wire(body | {"name": "a" * (63 - len("-worker-10"))})
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire(body | {"name": "a" * (64 - len("-worker-10"))})
    assert info.value.field == "name" and "-worker-10" in str(info.value)
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "m", "command": ["x"], "master": "no"})
    assert info.value.field == "master"


def test_per_replica_fields_survive_a_clone() -> None:
    """Master Never / Worker OnFailure stays so; a Worker's own image, env, resources and
    tolerationSeconds are kept, not replaced by the Master's."""
    manifest = build_manifest(
        JobSpec.from_wire(
            {
                "name": "per-replica",
                "command": ["python", "train.py"],
                "nodes": 3,
                "restartPolicy": "Never",
                "tolerations": [
                    {"key": "node", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 30},
                ],
            }
        )
    )  # fmt: skip
    worker = replicas(manifest)["Worker"]
    worker["restartPolicy"] = "OnFailure"
    container = pytorch_container(worker)
    container["image"] = "worker/image:2"
    container["env"] = [{"name": "ROLE", "value": "worker"}]
    container["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    worker["template"]["spec"]["tolerations"][0]["tolerationSeconds"] = 60
    spec = parse_manifest(manifest)
    assert spec.restart_policy == "Never" and spec.tolerations[0].seconds == 30
    rebuilt = build_manifest(spec)
    assert keeps(manifest, rebuilt) == []
    assert replicas(rebuilt)["Master"]["restartPolicy"] == "Never"
    assert replicas(rebuilt)["Worker"]["restartPolicy"] == "OnFailure"
    rebuilt_worker = pytorch_container(replicas(rebuilt)["Worker"])
    assert rebuilt_worker["image"] == "worker/image:2"
    assert {"name": "ROLE", "value": "worker"} in rebuilt_worker["env"]
    assert (
        replicas(rebuilt)["Worker"]["template"]["spec"]["tolerations"][0]["tolerationSeconds"] == 60
    )
    assert parse_manifest(rebuilt) == spec
    assert JobSpec.from_wire(spec.to_wire()) == spec


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_any_manifest_round_trips_without_loss(manifest: dict[str, Any]) -> None:
    """parse -> build keeps every field of the manifest, and parse -> build -> parse is
    stable. The one value the form rewrites on purpose, a non-numeric or absent
    nprocPerNode (the generator writes numbers or nothing), is left out."""
    assert check_manifest(manifest) == []
    spec = parse_manifest(manifest)
    rebuilt = build_manifest(spec)
    assert keeps(manifest, rebuilt) == []
    assert check_manifest(rebuilt) == [] and model_errors(rebuilt) == []
    assert parse_manifest(rebuilt) == spec
    assert JobSpec.from_wire(spec.to_wire()) == spec


def test_webhook_rules_catch_what_the_schema_allows() -> None:
    """Our webhook check refuses what the CRD schema accepts (notes/operator.md §1, §4)."""
    good = build_manifest(JobSpec.from_wire({"name": "w", "command": ["x"], "nodes": 2}))
    cases = {
        "container named trainer": lambda m: pytorch_container(replicas(m)["Master"]).update(
            name="trainer"
        ),
        "replica type Chief": lambda m: replicas(m).update(Chief=replicas(m)["Worker"]),
        "master replicas unset": lambda m: replicas(m)["Master"].pop("replicas"),
        "master replicas 2": lambda m: replicas(m)["Master"].update(replicas=2),
        "worker replicas 0": lambda m: replicas(m)["Worker"].update(replicas=0),
        "no image": lambda m: pytorch_container(replicas(m)["Worker"]).pop("image"),
        "bad name": lambda m: m["metadata"].update(name="Bad_Name"),
        "elastic without worker": lambda m: (
            replicas(m).pop("Worker"),
            m["spec"].update(elasticPolicy={}),
        ),
        "managedBy": lambda m: m["spec"]["runPolicy"].update(managedBy="me"),
        "long name": lambda m: m["metadata"].update(name="a" * 60),
    }
    for case, mutate in cases.items():
        manifest = copy.deepcopy(good)
        mutate(manifest)
        assert check_manifest(manifest), case


@SETTINGS
@given(job_bodies())
def test_every_manifest_is_valid_for_the_crd_schema(body: dict[str, Any]) -> None:
    assert schema_errors(build_manifest(JobSpec.from_wire(body), namespace="team-a")) == []


def test_the_crd_schema_alone_lets_webhook_errors_through() -> None:
    good = build_manifest(JobSpec.from_wire({"name": "w", "command": ["x"], "nodes": 2}))
    trainer = copy.deepcopy(good)
    pytorch_container(replicas(trainer)["Master"]).update(name="trainer")
    chief = copy.deepcopy(good)
    replicas(chief).update(Chief=replicas(chief)["Worker"])
    for manifest in (trainer, chief):
        assert check_manifest(manifest)
        assert schema_errors(manifest, strict=False) == []
