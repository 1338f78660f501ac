"""The timestamps that start log lines: RFC 3339 with nanoseconds, as the kubelet stamps a
container's log (``timestamps=true``) and the log archive's wrapper stamps its lines.
A leaf both backends and the archive reader share (standard library only)."""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterable


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


def stamp_seconds(stamps: Iterable[str]) -> list[float | None]:
    """Each stamp as seconds since the epoch, to the millisecond (None for one that is no
    stamp): the whole seconds parsed once per distinct second (a run of lines shares a
    few), the fraction by slicing."""
    whole_seconds: dict[str, int | None] = {}
    out: list[float | None] = []
    for stamp in stamps:
        whole = stamp[:19]
        if whole not in whole_seconds:
            ns = parse_timestamp_ns(whole + "Z") if len(whole) == 19 else None
            whole_seconds[whole] = None if ns is None else ns // 1_000_000_000
        seconds = whole_seconds[whole]
        if seconds is None:
            out.append(None)
            continue
        frac = stamp[20:23].rstrip("Z") if stamp[19:20] == "." else ""
        millis = int(frac.ljust(3, "0")) if frac.isdigit() else 0
        out.append(seconds + millis / 1000)
    return out
