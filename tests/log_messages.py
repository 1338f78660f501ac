"""The log websocket's messages as the client handles them: a batch (a binary message: a
4-byte big-endian header length, the JSON header ``{"chunks": [...]}`` with each chunk's
UTF-8 ``bytes`` in place of its text, then the texts) is its chunks in order, any other
message itself (api/openapi.yaml's LogMessage). Decoded here from that description, not
with the server's code."""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any


def decode(raw: str | bytes) -> dict[str, Any]:
    """A message as the LogMessage it stands for (a batch with its chunks' texts)."""
    if isinstance(raw, str):
        return dict(json.loads(raw))
    size = int.from_bytes(raw[:4], "big")
    message = json.loads(raw[4 : 4 + size])
    at = 4 + size
    for chunk in message["chunks"]:
        count = chunk.pop("bytes")
        chunk["text"] = raw[at : at + count].decode("utf-8")
        at += count
    assert at == len(raw), f"{len(raw) - at} bytes after the texts"
    return dict(message)


def unbatch(raw: str | bytes) -> list[dict[str, Any]]:
    """A message's chunks as a reader sees them (``stamped`` lines without their stamp)."""
    message = decode(raw)
    return [unstamped(m) for m in message["chunks"]] if "chunks" in message else [message]


def unstamped(chunk: dict[str, Any]) -> dict[str, Any]:
    """A ``stamped`` chunk's lines are what follows each line's first space."""
    if not chunk.pop("stamped", False):
        return chunk
    lines = chunk["text"].split("\n")[:-1]
    return {**chunk, "text": "".join(line.partition(" ")[2] + "\n" for line in lines)}


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
