"""The scalars in a TensorBoard log directory, read incrementally.

Why not TensorBoard's own ``EventFileLoader``: without TensorFlow it reads through
``tensorflow_stub``'s ``PyRecordReader_New``, which refuses a start offset ("start
offset not supported by compat reader"), so a reader cannot resume at a kept offset;
and it checks every record's CRC32C in pure Python (a few MB/s), too slow for a 100 MB
file. The TFRecord framing is small and stable (a length, its masked CRC32C, the data,
the data's CRC), so this module reads the framing itself - byte offsets that can be
kept, each record's 8-byte header checked (a torn or foreign file stops that file
instead of yielding garbage), the data CRC left to protobuf's parser (a damaged record
fails to decode and is skipped) - and decodes each record with TensorBoard's generated
``Event`` class (protobuf's C parser).

Scalars are TF1/PyTorch ``simple_value``s and TF2 scalar tensors (one numeric value).
"""

from __future__ import annotations

import contextlib
import functools
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from .. import untrusted_files

# One read of one file per poll: a 100 MB file is caught up over some polls, never in
# one long stall.
READ_BUDGET = 8 << 20
# A record larger than this is not an event (or the file is not a TFRecord file).
MAX_RECORD = 64 << 20
# Where event files are looked for: the log directory and this many levels below.
MAX_DEPTH = 3
MAX_FILES = 200
MAX_ENTRIES = 20_000  # directory entries looked at per scan


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


# TensorProto dtypes whose single value is a scalar we show, with their packed format.
_SCALAR_DTYPES = {1: "<f", 2: "<d", 3: "<i", 9: "<q"}  # float, double, int32, int64


def _tensor_value(tensor: Any) -> float | None:
    """The one numeric value of a TensorProto (a TF2 scalar summary), else None (a
    histogram, an image, text)."""
    fmt = _SCALAR_DTYPES.get(tensor.dtype)
    if fmt is None:
        return None
    if tensor.tensor_content:
        if len(tensor.tensor_content) != struct.calcsize(fmt):
            return None
        return float(struct.unpack(fmt, tensor.tensor_content)[0])
    values = [*tensor.float_val, *tensor.double_val, *tensor.int_val, *tensor.int64_val]
    return float(values[0]) if len(values) == 1 else None


@functools.cache
def _event_class() -> Any:
    """TensorBoard's generated ``Event`` (protobuf's C parser), imported on the first
    event file: a job without one never pays for it."""
    from tensorboard.compat.proto.event_pb2 import Event

    return Event


def scalars_of_event(data: bytes) -> list[Scalar]:
    """The scalars one serialized ``Event`` holds (``simple_value``s and scalar
    tensors); none for anything else. ``DecodeError`` for what is no Event."""
    event = _event_class().FromString(data)
    if not event.HasField("summary"):
        return []
    scalars = []
    for value in event.summary.value:
        kind = value.WhichOneof("value")
        if kind == "simple_value":
            number: float | None = value.simple_value
        elif kind == "tensor":
            number = _tensor_value(value.tensor)
        else:
            continue
        if value.tag and number is not None:
            scalars.append(Scalar(event.wall_time, event.step, value.tag, number))
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
            # On a volume pods write: a FIFO, a link to /dev/zero or to another job's
            # file is no event file of this job (``untrusted_files``).
            data = untrusted_files.read_range(self.path, self.offset, budget)
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
            with contextlib.suppress(DecodeError):
                scalars.extend(scalars_of_event(bytes(view[pos + 12 : pos + 12 + length])))
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
        # Regular files only, no linked directory entered (a log directory linked to
        # ``/`` is not walked), as TensorBoard's own walk; a bounded look per scan.
        for directory, files in untrusted_files.walk(
            self.logdir, max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES
        ):
            for name in files:
                if "tfevents" not in name:
                    continue
                path = directory / name
                if path not in self.readers and len(self.readers) < MAX_FILES:
                    self.readers[path] = EventFileReader(path)

    def read(self, budget: int = READ_BUDGET) -> list[Scalar]:
        """New scalars of every file (named as described above), oldest file first."""
        # Until the first event file appears, every call looks (a run's first scalars
        # show at once); then every ``rescan_every`` calls (new runs, rotated files).
        if not self.readers or self._calls % self.rescan_every == 0:
            self._scan()
        self._calls += 1
        found: list[Scalar] = []
        for path, reader in self.readers.items():
            run = path.parent.relative_to(self.logdir).as_posix()
            for scalar in reader.read(budget):
                tag = scalar.tag if run == "." else f"{run}/{scalar.tag}"
                found.append(Scalar(scalar.wall_time, scalar.step, tag, scalar.value))
        return found
