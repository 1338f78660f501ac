"""Shared fixtures: a real Jupyter server (pytest-jupyter) with our extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ("pytest_jupyter.jupyter_server",)

# The real-cluster tier starts a cluster: it runs with `make test-cluster`, not `make test`.
collect_ignore_glob = [] if os.environ.get("PTJOB_CLUSTER_TIER") == "1" else ["cluster/*"]


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_pytorchjob": True},
            "allow_unauthenticated_access": False,
        },
        "PyTorchJobApp": {
            "backend": "local",
            "default_shm": "4Gi",
            "local_root": str(tmp_path / "ptjob-home"),
            "volume_root": str(tmp_path / "ptjob-volumes"),
            # Hundreds of servers start in this one process: frozen, every earlier test's
            # garbage would stay (tests/test_gc_freeze.py turns it on).
            "freeze_gc": False,
        },
    }


@pytest.fixture
def fake_kube(jp_asyncio_loop: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fake API server (operator simulation on) in the test's own event loop, with
    ``KUBECONFIG`` pointing at it and no in-cluster config. Yields ``FakeKube``."""
    from .fake_kube import FakeKube

    fake = jp_asyncio_loop.run_until_complete(FakeKube.start(operator=True))
    config = fake.write_kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(config))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    yield fake
    jp_asyncio_loop.run_until_complete(fake.stop())
