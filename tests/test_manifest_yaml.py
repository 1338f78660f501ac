"""Apply YAML of multi-document files: the one job document is read, every other
document (Kueue queues, comments, a trailing ``---``) is named and left alone."""

from __future__ import annotations

import pytest

from jupyter_pytorchjob.job import JobSpecInvalid
from jupyter_pytorchjob.job.manifest_yaml import manifest_from_yaml, read_job_yaml

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
spec:
  runtimeRef:
    name: torch-distributed
"""
KUEUE = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: {kind}\nmetadata:\n  name: {name}\n"
LOCAL_QUEUE = KUEUE.format(kind="LocalQueue", name="user-queue")
CLUSTER_QUEUE = KUEUE.format(kind="ClusterQueue", name="cluster-queue")


def test_one_job_among_other_documents_is_read_and_the_others_named() -> None:
    text = "\n---\n".join(
        ["# a Kueue setup and a job", CLUSTER_QUEUE, LOCAL_QUEUE, TRAINJOB.format(name="a")]
    )
    read = read_job_yaml(text + "---\n")
    assert read.manifest["metadata"]["name"] == "a"
    assert len(read.others) == 2
    # A comment before the first --- is no document: counting starts after it.
    assert "ClusterQueue 'cluster-queue' (document 1)" in str(read.others[0])
    assert "LocalQueue 'user-queue' (document 2)" in str(read.others[1])
    assert all("left alone" in str(note) for note in read.others)
    assert manifest_from_yaml(text)["kind"] == "TrainJob"


def test_a_trailing_separator_or_leading_comment_is_no_document() -> None:
    read = read_job_yaml("# my job\n---\n" + TRAINJOB.format(name="b") + "---\n")
    assert read.manifest["metadata"]["name"] == "b" and read.others == []


def test_two_job_documents_are_refused_naming_both() -> None:
    text = "---\n".join([TRAINJOB.format(name="a"), LOCAL_QUEUE, TRAINJOB.format(name="b")])
    with pytest.raises(JobSpecInvalid) as info:
        read_job_yaml(text)
    assert info.value.field == "yaml"
    message = info.value.errors[0].message
    assert "TrainJob 'a' (document 1)" in message and "TrainJob 'b' (document 3)" in message


def test_documents_without_a_job_are_refused_naming_what_is_there() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        read_job_yaml(LOCAL_QUEUE + "---\n" + CLUSTER_QUEUE)
    assert info.value.field == "yaml"
    assert "LocalQueue 'user-queue'" in info.value.errors[0].message
    with pytest.raises(JobSpecInvalid) as info:
        read_job_yaml("# nothing\n---\n")
    assert info.value.field == "yaml"


def test_a_bad_document_beside_the_job_is_refused() -> None:
    with pytest.raises(JobSpecInvalid) as info:
        read_job_yaml(TRAINJOB.format(name="a") + "---\nkind: [\n")
    assert info.value.field == "yaml"
