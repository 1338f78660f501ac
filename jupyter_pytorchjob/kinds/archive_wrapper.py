# ptjob log archive wrapper
# Runs as `python3 -c <this file's text> COMMAND...` in every replica of a job whose log
# archive is on (kinds/log_archive.py ships it; nothing imports it). Standard library
# only: the image needs nothing installed. The command's stdout and stderr go on to the
# container's (every byte, each to its own stream) and, line-timestamped, to
# $PTJOB_LOG_ARCHIVE/<replica>[.<run>].log; the first free <run> suffix is this run's,
# so a restarted container or a recreated pod never overwrites an earlier run. stdin is
# the command's own; signals are forwarded to it; the wrapper ends as the command ended
# (its exit code, or killed by the same signal). The archive is best effort: a full or
# read-only disk stops it, never the job; writes happen on a thread of their own behind a
# bounded queue, and a stuck disk thins it (saying how much) rather than hold the job.
# The archive holds display lines (a \r redraw is a line of its own, 16 KiB at most):
# kinds/log_archive.py ships job/loglines.py's DisplayLines in place of the next line.
from __future__ import annotations

# <job/loglines.py>
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # shipped ahead of this file, not imported
    from jupyter_pytorchjob.job.loglines import DisplayLines

CHUNK = 65536
QUEUED = 256  # chunks waiting for the disk (16 MiB at most)
# A disk slower than the output slows the command, as the container runtime's own log
# writes do; a disk that takes longer than this for one chunk is stuck: lines are then
# dropped (and counted) until it catches up.
STUCK = 1.0
DRAIN = 5.0  # seconds the archive may take to catch up once the command has ended
FORWARD = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH")


def stamp() -> bytes:
    ns = time.time_ns()
    head = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 1_000_000_000))
    return f"{head}.{ns % 1_000_000_000:09d}Z ".encode()


def claim(directory: str, replica: str) -> int:
    """Open the first free <replica>[.<run>].log, exclusively. Owner only (0700/0600):
    others sharing the PVC read no job's output."""
    os.makedirs(directory, mode=0o700, exist_ok=True)  # noqa: PTH103
    run = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    while True:
        name = f"{replica}.{run}.log" if run else f"{replica}.log"
        try:
            return os.open(os.path.join(directory, name), flags, 0o600)  # noqa: PTH118
        except FileExistsError:
            run += 1


class Archive:
    def __init__(self, directory: str, replica: str) -> None:
        self.chunks: queue.Queue[bytes | None] = queue.Queue(QUEUED)
        self.fd: int | None = None
        self.dropped = 0
        self.stuck = False
        # stdout's and stderr's pumps take turns: stamp, pass on, queue (so the archive's
        # stamps never go back in time).
        self.turn = threading.Lock()
        try:
            self.fd = claim(directory, replica)
        except OSError as err:
            self.stop(err)
        self.thread = threading.Thread(target=self.write_all, daemon=True)
        self.thread.start()

    def stop(self, err: OSError) -> None:
        if self.fd is not None:
            os.close(self.fd)
        self.fd = None
        os.write(2, f"ptjob: the log archive stopped ({err}); the job goes on\n".encode())

    def put(self, lines: list[bytes], prefix: bytes) -> None:
        if self.fd is None:
            return
        data = prefix + (b"\n" + prefix).join(lines) + b"\n"
        try:
            self.chunks.put(data, block=not self.stuck, timeout=STUCK)
            self.stuck = False
        except queue.Full:
            self.stuck = True
            self.dropped += len(lines)

    def write_all(self) -> None:
        while True:
            data = self.chunks.get()
            if data is None or self.fd is None:
                return
            if self.dropped:
                note = f"[ptjob: {self.dropped} lines not archived: the disk was stuck]\n"
                data, self.dropped = stamp() + note.encode() + data, 0
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view) :]
            except OSError as err:  # ENOSPC, EROFS, EIO: the archive ends, the job goes on
                self.stop(err)

    def close(self) -> None:
        try:
            self.chunks.put(None, timeout=DRAIN)
        except queue.Full:
            return
        self.thread.join(DRAIN)


def pump(source: int, target: int, archive: Archive) -> None:
    """Copy the command's stream to ours (first) and to the archive, until it ends."""
    lines = DisplayLines()
    while True:
        fresh = os.read(source, CHUNK)
        done = lines.feed(fresh) if fresh else lines.close()
        with archive.turn:
            # Stamped before the container runtime can see (and stamp) the lines: a line's
            # archive time is never later than its time in the container log, which is what
            # lets a reader join the two without repeating a line.
            now = stamp()
            view = memoryview(fresh)
            while view:
                try:
                    view = view[os.write(target, view) :]
                except OSError:  # our stream is gone: keep reading so the command never blocks
                    break
            if done:
                archive.put(done, now)
        if not fresh:
            break
    os.close(source)


def main() -> int:
    command = sys.argv[1:]
    # A file size limit ends the archive (EFBIG), not the job (Popen restores the
    # default for the command).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    index = os.environ.get("PTJOB_REPLICA_INDEX") or os.environ.get("JOB_COMPLETION_INDEX", "0")
    replica = f"{os.environ.get('PTJOB_REPLICA_TYPE', 'replica')}-{index}"
    archive = Archive(os.environ["PTJOB_LOG_ARCHIVE"], replica)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        child = subprocess.Popen(command, stdout=out_w, stderr=err_w)
    except OSError as err:
        os.write(2, f"ptjob: cannot run {command[:1]}: {err}\n".encode())
        return 127
    os.close(out_w)
    os.close(err_w)

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    for name in FORWARD:
        signal.signal(getattr(signal, name), forward)
    pumps = [
        threading.Thread(target=pump, args=(out_r, 1, archive), daemon=True),
        threading.Thread(target=pump, args=(err_r, 2, archive), daemon=True),
    ]
    for thread in pumps:
        thread.start()
    code = child.wait()
    for thread in pumps:
        thread.join()
    archive.close()
    if code < 0:  # killed: end the same way (PID 1 ignores its own signal: then 128+N)
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those cannot be handled
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


sys.exit(main())
