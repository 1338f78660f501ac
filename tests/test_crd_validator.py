"""Our CRD check itself: it must reject what the API server would prune or refuse."""

from __future__ import annotations

import copy

from jupyter_pytorchjob.job import JobSpec, build_manifest

from .crd import schema_errors

GOOD = build_manifest(JobSpec.from_wire({"name": "c", "command": ["x"], "nodes": 2, "shm": "1Gi"}))


def mutated(change: str) -> dict:  # type: ignore[type-arg]
    m = copy.deepcopy(GOOD)
    master = m["spec"]["pytorchReplicaSpecs"]["Master"]
    container = master["template"]["spec"]["containers"][0]
    if change == "unknown spec field":
        m["spec"]["nprocsPerNode"] = "1"
    elif change == "unknown container field":
        container["imagePullPolice"] = "Always"
    elif change == "unknown runPolicy field":
        m["spec"]["runPolicy"]["cleanPodPolicyy"] = "All"
    elif change == "shm 8 GB":
        master["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = "8 GB"
    elif change == "replicas as string":
        master["replicas"] = "1"
    elif change == "nprocPerNode as int":
        m["spec"]["nprocPerNode"] = 2
    return m


def test_good_manifest_passes() -> None:
    assert schema_errors(GOOD) == []


def test_strict_check_rejects_unknown_fields() -> None:
    for change in ("unknown spec field", "unknown container field", "unknown runPolicy field"):
        assert schema_errors(mutated(change)), change
        assert schema_errors(mutated(change), strict=False) == [], change


def test_schema_rejects_bad_types_and_quantities() -> None:
    for change in ("shm 8 GB", "replicas as string", "nprocPerNode as int"):
        assert schema_errors(mutated(change), strict=False), change
