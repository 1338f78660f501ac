"""The timestamps that start log lines: RFC 3339 with nanoseconds, as the kubelet stamps a
container's log (``timestamps=true``) and the log archive's wrapper stamps its lines.
A leaf both backends and the archive reader share (standard library only)."""

from __future__ import annotations

import calendar
import time


def parse_timestamp_ns(text: str | bytes) -> int | None:
    """``2026-11-22T04:25:01.123456789Z`` -> ns since the epoch (None if not one).

    By slicing, not strptime: it runs once per chunk, and on every line only right
    after a reconnect."""
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    try:
        seconds = calendar.timegm(
            (
                int(text[0:4]),
                int(text[5:7]),
                int(text[8:10]),
                int(text[11:13]),
                int(text[14:16]),
                int(text[17:19]),
            )
        )
    except (ValueError, IndexError):
        return None
    frac = text[20:].rstrip("Z") if text[19:20] == "." else ""
    nanos = int((frac + "000000000")[:9]) if frac.isdigit() else 0
    return seconds * 1_000_000_000 + nanos


def format_timestamp_ns(ns: int) -> bytes:
    """ns since the epoch -> the kubelet's stamp, ``2026-11-22T04:25:01.123456789Z``
    (RFC3339NanoFixed in UTC: always nine digits, so stamps compare as bytes)."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{whole}.{nanos:09d}Z".encode()
