"""Fixtures for REST tests run on both backends: import ``backend_name`` and
``jp_server_config`` into the test module. The local backend runs real processes; the
kubernetes one talks to the fake API server (``fake_kube``) and its controllers."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(params=["local", "kubernetes"])
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], backend_name: str, request: pytest.FixtureRequest
) -> dict[str, Any]:
    if backend_name == "local":
        return jp_server_config
    request.getfixturevalue("fake_kube")  # KUBECONFIG points at it from here on
    return {
        "ServerApp": dict(jp_server_config["ServerApp"]),
        "PyTorchJobApp": {"backend": "kubernetes", "notebook_pod": "nb-0"},
    }
