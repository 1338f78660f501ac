"""Fixtures of the real-cluster tier: one cluster and one operator player per session.

``make test-cluster`` builds what the tier needs and runs it. Without a build the tests
skip with the reason; with ``PTJOB_REQUIRE_CLUSTER=1`` (CI) they fail instead.
``PTJOB_CLUSTER_WORKDIR=DIR`` reuses a cluster already running there
(``python -m tests.cluster.realcluster DIR``), which makes a dev loop fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .realcluster import ROOT, SHARED, ClusterError, RealCluster, built, default_cache


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    problem = built(default_cache())
    if problem is None and not (SHARED / "crds").is_dir():
        problem = f"no {SHARED / 'crds'} beside the clone (the real CRDs)"
    if problem:
        if os.environ.get("PTJOB_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"the real cluster tier cannot run: {problem}")
        pytest.skip(f"the real cluster tier cannot run: {problem}")
    running = os.environ.get("PTJOB_CLUSTER_WORKDIR")
    if running:
        yield RealCluster.attach(Path(running))
        return
    real = RealCluster(tmp_path_factory.mktemp("realcluster"))
    try:
        real.start()
    except ClusterError as e:
        real.stop()
        pytest.fail(f"the real cluster did not start: {e}")
    yield real
    real.stop()


@pytest.fixture(scope="session")
def operator_player(cluster: RealCluster) -> Iterator[subprocess.Popen[bytes]]:
    """The Training Operator's stand-in, in its own process, for the whole session."""
    log = (cluster.workdir / "logs" / "operator-player.log").open("ab")
    player = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster.operator_player", str(cluster.kubeconfig())],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield player
    player.terminate()
    try:
        player.wait(timeout=15)
    except subprocess.TimeoutExpired:
        player.kill()
        player.wait()


@pytest.fixture
def namespace(cluster: RealCluster, operator_player: subprocess.Popen[bytes]) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards (its pods with it)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    cluster.request("DELETE", f"/api/v1/namespaces/{name}", {"gracePeriodSeconds": 0})
