"""The job-kind seam: the registry, the PyTorchJob kind's facts, and what ``GET config``
says of the kinds a backend runs (the form hides what a kind lacks)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_pytorchjob.backends.kubernetes.backend import KubernetesBackend
from jupyter_pytorchjob.backends.kubernetes.connection import CrdMissing
from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.fields import FIELD
from jupyter_pytorchjob.kinds import (
    DEFAULT_KIND,
    KINDS,
    PYTORCHJOB,
    TRAINJOB,
    kind_for,
    kind_named,
    kind_of,
)

API = ("pytorchjob", "api")


def test_the_registry_names_each_kind_once() -> None:
    """One registered kind per choice of the field table's ``kind`` (the form, the CLI's
    ``--kind`` and the OpenAPI enum come from there)."""
    assert [k.kind for k in KINDS] == list(FIELD["kind"].choices) == ["PyTorchJob", "TrainJob"]
    assert DEFAULT_KIND is PYTORCHJOB and FIELD["kind"].default == PYTORCHJOB.kind
    assert kind_named("pytorchjob") is PYTORCHJOB and kind_named("TRAINJOB") is TRAINJOB
    assert kind_for(JobSpec.from_wire({"name": "a", "command": ["x"], "kind": "trainjob"})) is (
        TRAINJOB
    )
    with pytest.raises(JobSpecInvalid) as info:
        kind_named("MPIJob")
    assert info.value.errors[0].field == "kind"
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "a", "command": ["x"], "kind": "MPIJob"})
    assert info.value.errors[0].field == "kind" and "PyTorchJob" in info.value.errors[0].message


def test_pytorchjob_facts() -> None:
    """As the Training Operator v1.9.4 names things (notes/operator.md: the CRD, the
    job-name label on every pod, the ``pytorch`` container)."""
    assert PYTORCHJOB.api_version == "kubeflow.org/v1"
    assert PYTORCHJOB.crd == "pytorchjobs.kubeflow.org"
    assert PYTORCHJOB.container == "pytorch"
    assert PYTORCHJOB.pod_selector("demo") == "training.kubeflow.org/job-name=demo"
    pod = {
        "metadata": {
            "labels": {
                "training.kubeflow.org/job-name": "demo",
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": "1",
            }
        }
    }
    assert PYTORCHJOB.job_of_pod(pod) == "demo"
    assert PYTORCHJOB.replica_of_pod(pod) == "worker-1"
    assert "pytorchjobs.kubeflow.org" in PYTORCHJOB.missing_message()


def test_a_manifest_goes_back_through_its_own_kind() -> None:
    spec = JobSpec(name="demo", image="img", command=("python", "t.py"), nodes=2)
    manifest = PYTORCHJOB.build(spec)
    assert kind_of(manifest) is PYTORCHJOB
    assert PYTORCHJOB.parse(manifest).nodes == 2
    assert PYTORCHJOB.check(manifest) == []
    # Something else: the default kind's parse says what it expected.
    with pytest.raises(JobSpecInvalid) as info:
        kind_of({"apiVersion": "v1", "kind": "Pod"}).parse({"apiVersion": "v1", "kind": "Pod"})
    assert info.value.errors[0].field == "kind"


def test_a_kind_lists_the_fields_it_expresses() -> None:
    wire = PYTORCHJOB.to_wire()
    assert wire["kind"] == "PyTorchJob" and wire["apiVersion"] == "kubeflow.org/v1"
    trainjob_only = ("runtime", "dataset", "model", "datasetSecret", "modelSecret")
    every = JobSpec(name="x", image="y").to_wire()
    assert wire["fields"] == [f for f in every if f not in trainjob_only]
    trainjob = TRAINJOB.to_wire()["fields"]
    assert set(trainjob_only) <= set(trainjob)
    assert "restartPolicy" not in trainjob and "master" not in trainjob


async def test_config_says_which_kinds_the_local_backend_runs(jp_fetch: Any) -> None:
    response = await jp_fetch(*API, "config")
    config = json.loads(response.body)
    # Both: a local supervisor plays the Training Operator and Trainer/JobSet alike.
    assert [k["kind"] for k in config["kinds"]] == ["PyTorchJob", "TrainJob"]
    assert "nodes" in config["kinds"][0]["fields"]
    assert "runtime" in config["kinds"][1]["fields"]


async def test_the_cluster_says_which_kinds_it_serves(fake_kube: Any) -> None:
    """Discovery against the (fake) API server: served while the CRD is there; none,
    and a plain CrdMissing on use, once it is removed."""
    backend = KubernetesBackend(namespace="team-a")
    try:
        assert await backend.job_kinds() == [PYTORCHJOB, TRAINJOB]
        fake_kube.remove_crd("pytorchjob")
        fake_kube.remove_crd("trainjob")
        fresh = KubernetesBackend(namespace="team-a")
        try:
            assert await fresh.job_kinds() == []
            with pytest.raises(CrdMissing) as info:
                await fresh.list_jobs()
            assert "pytorchjobs.kubeflow.org" in str(info.value)
        finally:
            await fresh.close()
    finally:
        await backend.close()


async def test_runtimes_are_empty_where_no_trainjob_runs(jp_fetch: Any) -> None:
    """The local backend plays the torch-distributed runtime only: no runtime to pick."""
    response = await jp_fetch(*API, "runtimes")
    assert json.loads(response.body) == {"runtimes": []}


async def test_a_pytorchjob_only_cluster_has_no_runtimes(fake_kube: Any) -> None:
    fake_kube.remove_crd("trainjob")
    backend = KubernetesBackend(namespace="team-a")
    try:
        assert await backend.runtimes() == []
    finally:
        await backend.close()


def test_a_runtime_is_a_trainjob_field_only() -> None:
    spec = JobSpec.from_wire({"name": "a", "command": ["x"], "runtime": "torch-distributed"})
    with pytest.raises(JobSpecInvalid) as info:
        PYTORCHJOB.build(spec)
    assert [e.field for e in info.value.errors] == ["runtime"]
    trainjob = spec.with_changes(kind="TrainJob", runtime="my-torch")
    manifest = TRAINJOB.build(trainjob)
    assert manifest["spec"]["runtimeRef"]["name"] == "my-torch"
    assert TRAINJOB.parse(manifest).runtime == "my-torch"
    assert (
        TRAINJOB.parse(TRAINJOB.build(spec.with_changes(kind="TrainJob", runtime=None))).runtime
        is None
    )


async def test_the_local_backend_refuses_another_runtime_by_name(jp_fetch: Any) -> None:
    """Locally a TrainJob runs as torch-distributed does; another runtime (MPI,
    initializers...) is refused naming ``runtime``, and nothing is created."""
    from tornado.httpclient import HTTPClientError

    body = {
        "name": "tj",
        "command": ["python", "-c", "1"],
        "kind": "TrainJob",
        "runtime": "deepspeed-distributed",
    }
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
    error = json.loads(info.value.response.body)
    assert info.value.code == 400 and error["field"] == "runtime"
    assert "kubernetes backend" in error["message"]
    jobs = json.loads((await jp_fetch(*API, "jobs")).body)
    assert jobs["jobs"] == []
