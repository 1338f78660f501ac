"""JobSpec validation: every invalid input is refused with its field named."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.k8s_rules import parse_quantity
from jupyter_pytorchjob.job.spec import max_name_length, suggest_name
from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

BASE: dict[str, Any] = {"name": "demo", "command": ["python", "train.py"]}


def refused(**changes: Any) -> JobSpecInvalid:
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({**BASE, **changes})
    return info.value


def fields(err: JobSpecInvalid) -> list[str]:
    return [e.field for e in err.errors]


def test_minimal_body_gets_concrete_defaults() -> None:
    spec = JobSpec.from_wire(BASE)
    assert spec.nodes == 1 and spec.gpus == 0 and spec.nproc_per_node == 1
    assert spec.shm == "2Gi"
    assert spec.restart_policy == "OnFailure" and spec.clean_pod_policy == "None"
    assert spec.backoff_limit == 3
    assert spec.replica_names() == ["master-0"]


def test_nproc_defaults_to_gpus_never_auto() -> None:
    assert JobSpec.from_wire({**BASE, "gpus": 4}).nproc_per_node == 4
    assert JobSpec.from_wire({**BASE, "gpus": 0}).nproc_per_node == 1
    assert JobSpec.from_wire({**BASE, "gpus": 4, "nprocPerNode": 2}).nproc_per_node == 2
    assert "nprocPerNode" in fields(refused(nprocPerNode="auto"))


def test_server_defaults_apply() -> None:
    spec = JobSpec.from_wire(
        BASE, defaults={"image": "my/img:1", "gpuResource": "amd.com/gpu", "shm": ""}
    )
    assert (spec.image, spec.gpu_resource, spec.shm) == ("my/img:1", "amd.com/gpu", None)


@pytest.mark.parametrize(
    "name",
    ["Demo", "1demo", "demo-", "de_mo", "demo.x", "", "a" * 64, "démo"],
)
def test_name_must_be_dns1035(name: str) -> None:
    err = refused(name=name)
    assert fields(err) == ["name"]


def test_missing_name_is_named() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"command": ["x"]})
    assert fields(info.value) == ["name"]


@pytest.mark.parametrize(
    ("nodes", "limit"), [(1, 54), (2, 54), (11, 54), (12, 53), (102, 52), (1002, 51)]
)
def test_name_length_leaves_room_for_worker_index(nodes: int, limit: int) -> None:
    assert max_name_length(nodes) == limit
    ok = "a" * limit
    JobSpec.from_wire({**BASE, "name": ok, "nodes": nodes})
    err = refused(name=ok + "b", nodes=nodes)
    assert fields(err) == ["name"]
    assert f"at most {limit} characters for {nodes} node(s)" in err.errors[0].message


@pytest.mark.parametrize("field", ["cpu", "memory", "shm"])
@pytest.mark.parametrize("value", ["8 GB", "-1", "8GB ", "eight", "1.2.3", "8gi", "0x10"])
def test_quantities(field: str, value: str) -> None:
    err = refused(**{field: value})
    assert fields(err) == [field]
    assert "quantity" in err.errors[0].message or "greater than zero" in err.errors[0].message


@pytest.mark.parametrize("field", ["cpu", "memory"])
def test_zero_quantity_refused(field: str) -> None:
    assert fields(refused(**{field: "0"})) == [field]


def test_memory_in_millibytes_is_a_mistake() -> None:
    err = refused(memory="512m")
    assert "did you mean 512Mi" in err.errors[0].message


@pytest.mark.parametrize("value", ["8Gi", "512Mi", "1.5G", "1e9", "100k"])
def test_good_quantities(value: str) -> None:
    spec = JobSpec.from_wire({**BASE, "memory": value, "shm": value})
    assert spec.memory == value


def test_cpu_millicores_and_parse_quantity() -> None:
    assert JobSpec.from_wire({**BASE, "cpu": "500m"}).cpu == "500m"
    assert parse_quantity("8Gi") == 8 * 2**30
    assert parse_quantity("500m") * 1000 == 500
    assert parse_quantity("1e3") == 1000


@pytest.mark.parametrize("off", ["0", "off", "", None])
def test_shm_can_be_turned_off(off: str | None) -> None:
    spec = JobSpec.from_wire({**BASE, "shm": off})
    assert spec.shm is None
    manifest = build_manifest(spec)
    pod = manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert "volumes" not in pod


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nodes", 0),
        ("nodes", -2),
        ("nodes", 1.5),
        ("nodes", "two"),
        ("nodes", True),
        ("gpus", -1),
        ("gpus", "1.0"),
        ("nprocPerNode", 0),
        ("backoffLimit", -1),
        ("deadline", 0),
        ("ttl", -5),
        ("nodes", 2**31),
        ("nodes", 1_000_000),  # beyond any cluster: MAX_NODES
        ("maxNodes", 5001),
    ],
)
def test_integers(field: str, value: Any) -> None:
    err = refused(**{field: value})
    assert fields(err) == [field]
    assert "whole number" in err.errors[0].message or "at most" in err.errors[0].message


def test_integer_strings_from_forms_and_cli_are_accepted() -> None:
    spec = JobSpec.from_wire({**BASE, "nodes": "3", "gpus": " 2 ", "deadline": "60"})
    assert (spec.nodes, spec.gpus, spec.deadline) == (3, 2, 60)


@pytest.mark.parametrize(
    ("pvc", "field"),
    [
        ({"claim": "Data", "mountPath": "/mnt"}, "pvc[0].claim"),
        ({"claim": "da_ta", "mountPath": "/mnt"}, "pvc[0].claim"),
        ({"claim": "", "mountPath": "/mnt"}, "pvc[0].claim"),
        ({"claim": "data", "mountPath": "mnt/data"}, "pvc[0].mountPath"),
        ({"claim": "data", "mountPath": "/mnt/../etc"}, "pvc[0].mountPath"),
        ({"claim": "data", "mountPath": "/dev/shm"}, "pvc[0].mountPath"),
        ({"claim": "data", "mountPath": "/dev/shm/x"}, "pvc[0].mountPath"),
        ({"claim": "data", "mountPath": "/"}, "pvc[0].mountPath"),
        ({"claim": "data", "mountPath": "/mnt", "subPath": "/abs"}, "pvc[0].subPath"),
        ({"claim": "data", "mountPath": "/mnt", "subPath": "a/../../b"}, "pvc[0].subPath"),
        ({"claim": "data", "mountPath": "/mnt", "readOnly": "yes"}, "pvc[0].readOnly"),
        ({"claim": "data", "mountPath": "/mnt", "size": "1Gi"}, "pvc[0]"),
    ],
)
def test_pvc_rules(pvc: dict[str, Any], field: str) -> None:
    assert fields(refused(pvc=[pvc])) == [field]


def test_pvc_mount_paths_are_normalised_and_unique() -> None:
    spec = JobSpec.from_wire(
        {**BASE, "pvc": [{"claim": "data.team-a", "mountPath": "/mnt//data/./x/"}]}
    )
    assert spec.pvc[0].mount_path == "/mnt/data/x"
    err = refused(
        pvc=[
            {"claim": "a", "mountPath": "/mnt/data"},
            {"claim": "b", "mountPath": "/mnt/data/"},
        ]
    )
    assert fields(err) == ["pvc[1].mountPath"]
    assert "already mounted by pvc[0]" in err.errors[0].message


@pytest.mark.parametrize("name", ["1ABC", "MY VAR", "A=B", "", "ä"])
def test_env_names(name: str) -> None:
    assert fields(refused(env={name: "x"})) == [f"env[{name}]"]


@pytest.mark.parametrize("name", ["RANK", "WORLD_SIZE", "MASTER_ADDR", "PET_NNODES", "PTJOB_X"])
def test_env_names_the_operator_sets_are_refused(name: str) -> None:
    err = refused(env={name: "1"})
    assert "set by the Training Operator" in err.errors[0].message


def test_env_values_must_be_strings() -> None:
    assert fields(refused(env={"A": 1})) == ["env[A]"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("restartPolicy", "Sometimes"), ("cleanPodPolicy", "Everything"), ("restartPolicy", 1)],
)
def test_enums(field: str, value: Any) -> None:
    err = refused(**{field: value})
    assert fields(err) == [field]
    assert "must be one of" in err.errors[0].message


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("labels", {"-bad": "x"}, "labels[-bad]"),
        ("labels", {"ok": "bad value"}, "labels[ok]"),
        ("labels", {"ok": "x" * 64}, "labels[ok]"),
        ("labels", {"Example.com/x": "1"}, "labels[Example.com/x]"),
        ("labels", {"/x": "1"}, "labels[/x]"),
        ("annotations", {"a b": "x"}, "annotations[a b]"),
        ("nodeSelector", {"gpu": "a100!"}, "nodeSelector[gpu]"),
    ],
)
def test_labels_annotations_selectors(field: str, value: Any, where: str) -> None:
    assert fields(refused(**{field: value})) == [where]


def test_annotation_values_are_free_text() -> None:
    spec = JobSpec.from_wire({**BASE, "annotations": {"example.com/note": "any text: ok!"}})
    assert spec.annotations == {"example.com/note": "any text: ok!"}


@pytest.mark.parametrize(
    ("toleration", "where"),
    [
        ({"key": "gpu", "operator": "Maybe"}, "tolerations[0].operator"),
        ({"key": "gpu", "operator": "Exists", "value": "x"}, "tolerations[0].value"),
        ({"key": "gpu", "effect": "NoRun"}, "tolerations[0].effect"),
        ({"key": "bad key"}, "tolerations[0].key"),
        ({"operator": "Equal", "value": "x"}, "tolerations[0].key"),
        (
            {"key": "g", "effect": "NoSchedule", "tolerationSeconds": 5},
            "tolerations[0].tolerationSeconds",
        ),
        ({"key": "g", "colour": "red"}, "tolerations[0]"),
    ],
)
def test_tolerations(toleration: dict[str, Any], where: str) -> None:
    assert where in fields(refused(tolerations=[toleration]))


def test_command_or_script_exactly_one() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "demo"})
    assert fields(info.value) == ["command"]
    assert fields(refused(script="print(1)")) == ["command"]
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "demo", "script": "  "})
    assert fields(info.value) == ["script"]


def test_script_size_limit_is_explained() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "demo", "script": "#" * 200_000})
    assert fields(info.value) == ["script"]
    assert "Put larger code on a PVC" in info.value.errors[0].message


def test_paths_must_be_absolute_without_dotdot() -> None:
    assert fields(refused(workdir="work")) == ["workdir"]
    assert fields(refused(logdir="/mnt/../x")) == ["logdir"]
    assert JobSpec.from_wire({**BASE, "logdir": "/mnt/data//runs/"}).logdir == "/mnt/data/runs"


def test_unknown_wire_fields_are_refused() -> None:
    assert fields(refused(gpu=1)) == ["gpu"]


def test_all_errors_are_reported_at_once() -> None:
    err = refused(name="Bad", nodes=0, memory="8 GB")
    assert set(fields(err)) == {"name", "nodes", "memory"}
    wire = err.to_wire()
    assert wire["field"] == err.errors[0].field and len(wire["errors"]) == 3


def test_image_is_checked() -> None:
    assert fields(refused(image="my image")) == ["image"]
    assert fields(refused(image="")) == ["image"]


def test_suggested_names_are_valid() -> None:
    for hint in ["train_ddp.py", "/x/2nd-Model.py", "", None, "!!!", "a" * 200]:
        name = suggest_name(hint)
        JobSpec.from_wire({**BASE, "name": name, "nodes": 1000})


def test_wire_round_trip() -> None:
    spec = JobSpec.from_wire(
        {
            **BASE,
            "nodes": 3,
            "gpus": 2,
            "pvc": [{"claim": "data", "mountPath": "/mnt/data", "readOnly": True}],
            "env": {"A": "1"},
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "backoffLimit": None,
        }
    )
    assert spec.backoff_limit is None
    assert JobSpec.from_wire(spec.to_wire()) == spec
