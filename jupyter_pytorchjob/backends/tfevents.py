"""The scalars in a TensorBoard log directory, read incrementally.

Why not TensorBoard's own ``EventFileLoader``: without TensorFlow it reads through
``tensorflow_stub``'s ``PyRecordReader_New``, which refuses a start offset ("start
offset not supported by compat reader"), so a reader that stops (a supervisor restart,
a new process) parses a 100 MB file again from its first byte; and it checks every
record's CRC32C in pure Python (a few MB/s) and decodes every event, images and
histograms included. What we need is small and stable (TFRecord framing: a length, its
masked CRC32C, the data, the data's CRC; and five protobuf fields of ``Event``), so this
module reads just that: byte offsets that can be kept, only each record's 8-byte header
checked (a torn or foreign file stops that file instead of yielding garbage), and a
record is decoded only as far as its scalars.

Scalars are TF1/PyTorch ``simple_value``s and TF2 scalar tensors (one numeric value).
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# One read of one file per poll: a 100 MB file is caught up over some polls, never in
# one long stall.
READ_BUDGET = 8 << 20
# A record larger than this is not an event (or the file is not a TFRecord file).
MAX_RECORD = 64 << 20
# Where event files are looked for: the log directory and this many levels below.
MAX_DEPTH = 3
MAX_FILES = 200


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC32C (short inputs only: the 8-byte length header)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@dataclass(frozen=True)
class Scalar:
    wall_time: float
    step: int
    tag: str
    value: float


class ProtoError(ValueError):
    """Not the protobuf we expect."""


def _varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ProtoError("bad varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes | memoryview) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value): ints for varints, bytes for the rest."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 1:
            yield number, wire, bytes(data[pos : pos + 8])
            pos += 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > end:
                raise ProtoError("truncated field")
            yield number, wire, data[pos : pos + size]
            pos += size
        elif wire == 5:
            yield number, wire, bytes(data[pos : pos + 4])
            pos += 4
        else:
            raise ProtoError(f"wire type {wire}")
    if pos != end:
        raise ProtoError("truncated")


# TensorProto dtypes whose single value is a scalar we show.
_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_INT64 = 1, 2, 3, 9


def _tensor_value(data: bytes | memoryview) -> float | None:
    """The one numeric value of a TensorProto (a TF2 scalar summary), else None."""
    dtype = 0
    values: list[float] = []
    for number, wire, value in _fields(data):
        if number == 1 and wire == 0:
            dtype = int(value)  # type: ignore[call-overload]
        elif number == 4 and wire == 2:  # tensor_content: packed little-endian
            raw = bytes(value)  # type: ignore[call-overload]
            fmt = {_DT_FLOAT: "<f", _DT_DOUBLE: "<d", _DT_INT32: "<i", _DT_INT64: "<q"}.get(dtype)
            if fmt is None or len(raw) != struct.calcsize(fmt):
                return None
            values.append(struct.unpack(fmt, raw)[0])
        elif number == 5:  # float_val
            raw = bytes(value)  # type: ignore[call-overload]
            values.extend(v for (v,) in struct.iter_unpack("<f", raw[: len(raw) // 4 * 4]))
        elif number == 6:  # double_val
            raw = bytes(value)  # type: ignore[call-overload]
            values.extend(v for (v,) in struct.iter_unpack("<d", raw[: len(raw) // 8 * 8]))
        elif number in (7, 10) and wire == 0:  # int_val / int64_val, unpacked
            values.append(float(value))  # type: ignore[arg-type]
    if dtype not in (_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_INT64) or len(values) != 1:
        return None
    return float(values[0])


def scalars_of_event(data: bytes | memoryview) -> list[Scalar]:
    """The scalars one serialized ``Event`` holds (``wall_time`` 1, ``step`` 2,
    ``summary`` 5 -> ``value`` 1 -> ``tag`` 1, ``simple_value`` 2, ``tensor`` 8)."""
    wall_time, step, summary = 0.0, 0, None
    for number, wire, value in _fields(data):
        if number == 1 and wire == 1:
            wall_time = struct.unpack("<d", value)[0]  # type: ignore[arg-type]
        elif number == 2 and wire == 0:
            step = int(value)  # type: ignore[call-overload]
            if step >= 1 << 63:
                step -= 1 << 64
        elif number == 5 and wire == 2:
            summary = value
    if summary is None:
        return []
    scalars = []
    for number, wire, entry in _fields(summary):  # type: ignore[arg-type]
        if number != 1 or wire != 2:
            continue
        tag, scalar = None, None
        for field, kind, item in _fields(entry):  # type: ignore[arg-type]
            if field == 1 and kind == 2:
                tag = bytes(item).decode("utf-8", "replace")  # type: ignore[call-overload]
            elif field == 2 and kind == 5:
                scalar = struct.unpack("<f", item)[0]  # type: ignore[arg-type]
            elif field == 8 and kind == 2:
                scalar = _tensor_value(item)  # type: ignore[arg-type]
        if tag and scalar is not None:
            scalars.append(Scalar(wall_time, step, tag, scalar))
    return scalars


class EventFileReader:
    """One event file, read from ``offset`` on; only whole records are consumed (a
    record still being written is read on a later call)."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self.broken: str | None = None  # why the rest of the file is not read

    def read(self, budget: int = READ_BUDGET) -> list[Scalar]:
        """The scalars of the records added since the last call (at most ``budget``
        bytes of them)."""
        if self.broken is not None:
            return []
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read(budget)
        except OSError:
            return []
        scalars: list[Scalar] = []
        view = memoryview(data)
        pos = 0
        while len(view) - pos >= 12:
            header = bytes(view[pos : pos + 8])
            (length,) = struct.unpack("<Q", header)
            (crc,) = struct.unpack("<I", view[pos + 8 : pos + 12])
            if crc != masked_crc32c(header) or length > MAX_RECORD:
                self.broken = f"not a TFRecord at byte {self.offset + pos}"
                break
            end = pos + 12 + length + 4
            if end > len(view):
                if pos == 0 and length + 16 > budget:  # larger than one read: skip it
                    self.offset += end
                    return scalars
                break  # the rest arrives later (or in the next read)
            # A record that is not an Event is skipped: the framing still holds.
            with contextlib.suppress(ProtoError):
                scalars.extend(scalars_of_event(view[pos + 12 : pos + 12 + length]))
            pos = end
        self.offset += pos
        return scalars


class LogdirScalars:
    """The latest scalars of every event file under a log directory; each file is read
    from where the last call stopped. A scalar's name is its tag, prefixed with the run
    (its directory below the log directory) when it is not the log directory itself."""

    def __init__(self, logdir: Path, *, rescan_every: int = 10) -> None:
        self.logdir = logdir
        self.readers: dict[Path, EventFileReader] = {}
        self.rescan_every = rescan_every
        self._calls = 0

    def _scan(self) -> None:
        root_depth = len(self.logdir.parts)
        for directory, subdirs, files in os.walk(self.logdir):
            depth = len(Path(directory).parts) - root_depth
            if depth >= MAX_DEPTH:
                subdirs[:] = []
            subdirs.sort()
            for name in sorted(files):
                if "tfevents" not in name:
                    continue
                path = Path(directory, name)
                if path not in self.readers and len(self.readers) < MAX_FILES:
                    self.readers[path] = EventFileReader(path)

    def read(self, budget: int = READ_BUDGET) -> list[Scalar]:
        """New scalars of every file (named as described above), oldest file first."""
        if self._calls % self.rescan_every == 0:
            self._scan()
        self._calls += 1
        found: list[Scalar] = []
        for path, reader in self.readers.items():
            run = path.parent.relative_to(self.logdir).as_posix()
            for scalar in reader.read(budget):
                tag = scalar.tag if run == "." else f"{run}/{scalar.tag}"
                found.append(Scalar(scalar.wall_time, scalar.step, tag, scalar.value))
        return found
