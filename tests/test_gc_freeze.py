"""The server freezes its start-up objects (#28): a full garbage collection then scans only
what came later, instead of pausing the server over everything it loaded."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from .waiting import until


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    jp_server_config["PyTorchJobApp"]["freeze_gc"] = True
    return jp_server_config


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the objects of this process, not a server's: collectable again


async def test_the_started_server_has_frozen_its_objects(unfrozen: None, jp_serverapp: Any) -> None:
    assert jp_serverapp.web_app.settings["pytorchjob_backend"] is not None
    await until(lambda: gc.get_freeze_count() > 10_000, "the objects of the server frozen")
