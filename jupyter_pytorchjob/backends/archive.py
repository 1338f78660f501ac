"""Reading a job's log archive (``kinds/log_archive.py`` writes it): the logs of replicas
whose pods (or local log files) are gone, as ``LogChunk``s like the live ones.

A replica's current run is its newest file, ``previous`` the one before. Offsets are
the timestamps (ns) of the chunks' last lines, as the Kubernetes backend's: resuming
``since`` one of them, or since the last line read from a pod, skips every line stamped
at or before it. The kubelet stamps a line when it reads it from the container, after
the wrapper stamped it, so no line seen in the pod's log comes again from the archive.

Everything here is on a volume pods write: read through ``untrusted_files`` (no links
followed - neither the archive's directories nor its files -, regular files only, never
blocking, bounded). A run file that is anything else is left out.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .. import untrusted_files
from ..job.progress import chief_replica
from ..kinds.log_archive import ARCHIVE_DIR, parse_run_file
from .base import LogChunk, in_thread
from .logmerge import TimeMerge
from .timestamps import parse_timestamp_ns

CHUNK = 65536
NOTICE = "from the archive on {where} (its pod is gone)"


@dataclass(frozen=True)
class ArchiveLocation:
    """Where a job's archive is for this server: ``directory`` (None when the server
    cannot read it, and ``problem`` says why) on PVC ``claim``. Runs begun before
    ``not_before_ns`` (the job's creation) were written by an earlier job of its name."""

    claim: str
    directory: Path | None
    problem: str | None = None
    not_before_ns: int = 0

    def notice(self, replica: str, previous: bool = False) -> LogChunk:
        text = self.problem or NOTICE.format(where=f"PVC {self.claim}")
        return LogChunk(replica, text, 0, previous, notice=True)


def stamp_ns(line: bytes) -> int | None:
    """The ns timestamp that starts an archive line, None if it has none."""
    head = line[:40].split(b" ", 1)[0]
    if len(head) < 20 or head[10:11] != b"T" or not head.endswith(b"Z"):
        return None
    return parse_timestamp_ns(head)


def runs(directory: Path) -> dict[str, list[Path]]:
    """Each replica's run files (regular files only), oldest run first. Empty when the
    directory or its ``.ptjob-logs`` parent is a link (to another job's archive)."""
    found: dict[str, list[tuple[int, Path]]] = {}
    linked = directory.parent.name == ARCHIVE_DIR and directory.parent.is_symlink()
    # Not there (yet), not readable, or a link: no archive.
    names = [] if linked else untrusted_files.regular_files(directory)
    for name in names:
        parsed = parse_run_file(name)
        if parsed is not None:
            found.setdefault(parsed[0], []).append((parsed[1], directory / name))
    return {replica: [p for _, p in sorted(files)] for replica, files in sorted(found.items())}


def _first_ns(path: Path) -> int | None:
    try:
        first = untrusted_files.read_range(path, 0, 64)
    except OSError:
        return None
    return stamp_ns(first.partition(b"\n")[0])


def pick_run(files: list[Path], *, previous: bool, not_before_ns: int = 0) -> Path | None:
    """The current (or previous) run, of this job: runs begun before ``not_before_ns``
    (the job's creation) were written by an earlier job of the same name."""
    mine = [p for p in files if (_first_ns(p) or 0) >= not_before_ns]
    index = -2 if previous else -1
    return mine[index] if len(mine) >= -index else None


def read_at(path: Path, offset: int, size: int) -> bytes:
    """``size`` bytes of ``path`` from ``offset`` (fewer at its end); ``OSError`` for
    what is no regular file (``untrusted_files``)."""
    return untrusted_files.read_range(path, offset, size)


def file_size(path: Path) -> int | None:
    """The size of the regular file ``path``; None when it is not there or not one."""
    try:
        fd = untrusted_files.open_regular(path)
    except OSError:
        return None
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def tail_offset(path: Path, lines: int) -> int:
    """The byte offset where the last ``lines`` lines of ``path`` begin (0 when it is
    not there, or no regular file)."""
    try:
        with untrusted_files.opened(path) as f:
            return _tail_offset(f, os.fstat(f.fileno()).st_size, lines)
    except OSError:
        return 0


def _tail_offset(f: BinaryIO, size: int, lines: int) -> int:
    if lines <= 0:
        return size
    end = size
    found = 0
    while end > 0:
        start = max(0, end - CHUNK)
        f.seek(start)
        block = f.read(end - start)
        for i in range(len(block) - 1, -1, -1):
            if block[i] == 0x0A and start + i != size - 1:
                found += 1
                if found == lines:
                    return start + i + 1
        end = start
    return 0


def chief_tail(location: ArchiveLocation, lines: int, budget: int) -> bytes:
    """The last ``lines`` whole lines, stamps kept, of the chief replica's current run
    (at most ``budget`` bytes, the newest kept): what a job's progress is read from once
    its pods are gone. Empty where there is none, or the archive cannot be read here."""
    files = runs(location.directory) if location.directory else {}
    chief = chief_replica(files)
    path = pick_run(
        files.get(chief or "", []), previous=False, not_before_ns=location.not_before_ns
    )
    if path is None:
        return b""
    size = file_size(path)
    if size is None:
        return b""
    offset = tail_offset(path, lines)
    try:
        data = read_at(path, max(offset, size - budget), budget)
    except OSError:
        return b""
    if offset < size - budget:  # cut inside a line: from the next whole one
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
    return data[: data.rfind(b"\n") + 1]


def read_run(path: Path, offset: int) -> tuple[bytes, int, bool]:
    """Whole lines of a run file from ``offset`` (at most ``CHUNK`` bytes), where they
    end, and whether more may follow at once."""
    try:
        data = read_at(path, offset, CHUNK)
    except OSError:  # gone, or replaced by what is no regular file
        return b"", offset, False
    cut = data.rfind(b"\n") + 1
    if not cut and len(data) == CHUNK:
        cut = len(data)  # one enormous line (an archive from before lines were cut)
    return data[:cut], offset + cut, len(data) == CHUNK


def read_runs(reads: list[tuple[Path, int]]) -> list[tuple[bytes, int, bool]]:
    return [read_run(path, offset) for path, offset in reads]


def _after(block: bytes, since: int) -> bytes:
    """``block`` from its first line stamped after ``since``."""
    start = 0
    while start < len(block):
        end = block.find(b"\n", start) + 1 or len(block)
        ns = stamp_ns(block[start:end])
        if ns is None or ns > since:
            return block[start:]
        start = end
    return b""


async def read_archive(
    location: ArchiveLocation,
    replicas: Iterable[str],
    *,
    previous: bool = False,
    since: Mapping[str, int] | None = None,
    tail: int | None = None,
    timestamps: bool = False,
    keep_stamps: bool = False,
) -> AsyncIterator[LogChunk]:
    """The archived log of each of ``replicas`` (those with one), a notice before its
    first lines; where the archive cannot be read, only the notice saying why
    (``timestamps``, ``keep_stamps``: as ``Backend.logs``)."""
    if location.directory is None:
        for replica in replicas:
            if replica not in (since or {}):  # read from its pod, nothing is missing
                yield location.notice(replica, previous)
        return
    files = await in_thread(runs, location.directory)
    paths: dict[str, Path] = {}
    for replica in replicas:
        path = await in_thread(
            pick_run,
            files.get(replica, []),
            previous=previous,
            not_before_ns=location.not_before_ns,
        )
        if path is not None:
            paths[replica] = path
            yield location.notice(replica, previous)
    # Every replica's run, merged in time order (as the live logs are).
    offsets = {
        r: 0 if tail is None or (since or {}).get(r) is not None else tail_offset(p, tail)
        for r, p in paths.items()
    }
    skipping = {r: (since or {}).get(r) for r in paths}
    merged = TimeMerge(list(paths), stamped=timestamps, keep_stamps=keep_stamps)
    for replica in paths:
        merged.opened(replica)
    while True:
        empty = [r for r in paths if not merged.pending(r) and r in merged.reading]
        if not empty and not any(merged.pending(r) for r in paths):
            return
        reads = [(paths[r], offsets[r]) for r in empty]
        for r, (block, offsets[r], more) in zip(
            empty, await in_thread(read_runs, reads), strict=True
        ):
            last = skipping[r]
            if last is not None and block:
                block = _after(block, last)
                skipping[r] = None if block else last
            merged.add(r, block)
            if not more:
                merged.closed(r)
        while (taken := merged.take()) is not None:
            ends = tuple(stamp_ns(stamp) or 0 for stamp in taken.stamps)
            yield LogChunk.of_taken(taken, ends, previous)
