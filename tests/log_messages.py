"""The log websocket's messages as the client handles them: a batch ``{"chunks": [...]}``
is its chunks in order, any other message itself (api/openapi.yaml's LogMessage)."""

from __future__ import annotations

import json
from typing import Any


def unbatch(raw: str | bytes) -> list[dict[str, Any]]:
    message = json.loads(raw)
    return list(message["chunks"]) if "chunks" in message else [message]
