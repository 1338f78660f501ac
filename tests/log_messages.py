"""The log websocket's messages as the client handles them: a batch ``{"chunks": [...]}``
is its chunks in order, any other message itself (api/openapi.yaml's LogMessage)."""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any


def unbatch(raw: str | bytes) -> list[dict[str, Any]]:
    message = json.loads(raw)
    return list(message["chunks"]) if "chunks" in message else [message]


def runs(chunk: dict[str, Any]) -> list[tuple[str, str]]:
    """A chunk's lines in runs of one replica's, (replica, lines): a merged chunk names
    each line's replica in ``owners``, a character ``"0"`` + i for ``replicas[i]``."""
    if "owners" not in chunk:
        return [(chunk["replica"], chunk["text"])]
    lines = chunk["text"].split("\n")[:-1]
    assert len(lines) == len(chunk["owners"])
    out, at = [], 0
    for mark, group in groupby(chunk["owners"]):
        count = len(list(group))
        text = "".join(line + "\n" for line in lines[at : at + count])
        out.append((chunk["replicas"][ord(mark) - ord("0")], text))
        at += count
    return out


def offsets(chunk: dict[str, Any]) -> dict[str, int]:
    """Where a chunk ends in the log of each replica it holds lines of (``since``)."""
    return dict(chunk["offsets"]) if "owners" in chunk else {chunk["replica"]: chunk["offset"]}
