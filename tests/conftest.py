"""Shared fixtures: a real Jupyter server (pytest-jupyter) with our extension."""

from __future__ import annotations

from typing import Any

import pytest

pytest_plugins = ("pytest_jupyter.jupyter_server",)


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_pytorchjob": True},
            "allow_unauthenticated_access": False,
        },
        "PyTorchJobApp": {"backend": "local", "default_shm": "4Gi"},
    }
