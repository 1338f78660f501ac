"""Our manifest checks themselves: they must reject what the API server would prune or refuse.

The API-model check runs everywhere; the CRD-schema tests need ``../shared/crds``
and are skipped with the reason without it (a failure under PTJOB_REQUIRE_CRDS=1).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

from .crd import REPO, manifest_errors, model_errors, schema_errors

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
    elif change == "container without name":
        del container["name"]
    elif change == "gpus as int":
        container.setdefault("resources", {})["limits"] = {"nvidia.com/gpu": 1}
    return m


def test_good_manifest_passes_the_api_models() -> None:
    assert model_errors(GOOD) == []
    assert manifest_errors(GOOD) == []
    # A quantity written as a number is the same value the models read as a string.
    assert model_errors(mutated("gpus as int")) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("unknown spec field", "spec.nprocsPerNode"),
        ("unknown container field", "imagePullPolice"),
        ("unknown runPolicy field", "spec.runPolicy.cleanPodPolicyy"),
        ("replicas as string", "spec.pytorchReplicaSpecs.Master.replicas"),
        ("nprocPerNode as int", "spec.nprocPerNode"),
        ("container without name", "<model>"),
    ],
)
def test_api_models_reject_unknown_fields_and_wrong_types(change: str, field: str) -> None:
    errors = model_errors(mutated(change))
    assert any(field in e for e in errors), errors


def test_good_manifest_passes_the_crd() -> None:
    assert schema_errors(GOOD) == []


def test_strict_check_rejects_unknown_fields() -> None:
    for change in ("unknown spec field", "unknown container field", "unknown runPolicy field"):
        assert schema_errors(mutated(change)), change
        assert schema_errors(mutated(change), strict=False) == [], change


def test_schema_rejects_bad_types_and_quantities() -> None:
    for change in ("shm 8 GB", "replicas as string", "nprocPerNode as int"):
        assert schema_errors(mutated(change), strict=False), change


@pytest.mark.parametrize(("required", "outcome"), [("", "skipped"), ("1", "failed")])
def test_without_the_crd_the_schema_tests_skip_or_fail(
    tmp_path: Path, required: str, outcome: str
) -> None:
    """A bare clone skips the CRD-schema tests with the reason; CI turns that into a failure."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "PTJOB_CRDS_DIR": str(tmp_path),  # an empty directory: no CRD there
        "PTJOB_REQUIRE_CRDS": required,
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            f"{REPO}/tests/test_crd_validator.py::test_good_manifest_passes_the_crd",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert f"1 {outcome}" in output, output
    assert "kubeflow.org_pytorchjobs.yaml is missing" in output, output
