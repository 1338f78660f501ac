"""One TensorBoard subprocess per log directory, confined to configured roots.

Design (see the project notes on TensorBoard in a tab):

* TensorBoard runs as its own process (never in the server's process or event
  loop), bound to ``127.0.0.1`` on a free port, with ``--path_prefix`` set to the
  full path the browser requests through our proxy
  (``<base_url>pytorchjob/tensorboard/<id>``), so the proxy keeps the path as is.
* ``id`` is a short stable hash of the resolved log directory; a second request
  for the same directory reuses the running process.
* ``start()`` reports an instance only once TensorBoard answers
  ``<prefix>/data/environment``; waiting is asynchronous.
* Each process leads its own process group (``start_new_session``). Stopping sends
  SIGTERM to the group, then SIGKILL after a timeout, and reaps the leader.
  ``stop_all()`` runs from the extension's ``stop_extension`` (normal shutdown,
  SIGTERM and SIGINT of ``jupyter server``); an ``atexit`` hook and a
  parent-death signal (``_launch``) are safety nets for abnormal exits.
* Log directories are resolved (symlinks followed) and must lie inside one of the
  roots. ``..`` is refused outright. A directory that does not exist yet is
  accepted only when opened for a job (inside a root): TensorBoard starts empty
  and shows the job's data as soon as it writes some (handy when TensorBoard is
  opened at submission). Any other directory must exist (404), so a client cannot
  start processes on made-up paths. Nothing is ever created on disk.
* At most ``max_instances`` run (0: no limit). A start beyond it first stops the
  least recently used instance idle for ``busy_window`` seconds, else it is
  refused with 429 naming the instance to stop.
"""

from __future__ import annotations

import asyncio
import atexit
import builtins
import contextlib
import hashlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from ..job.messages import Message, msg
from ..processes import free_port
from ._launch import PARENT_ENV

#: The route under the server's base URL that serves every instance.
PROXY_PATH = "pytorchjob/tensorboard"
#: ``--load_fast`` values TensorBoard 2.21 accepts.
LOAD_FAST_VALUES = ("false", "true", "auto")

_log = logging.getLogger(__name__)

# Process groups of every live TensorBoard of this Python process, for atexit.
_LIVE_GROUPS: set[int] = set()
_ATEXIT_REGISTERED = False


class TensorBoardError(Exception):
    """A request the manager refuses or cannot fulfil, with the field to blame.

    ``status`` is the HTTP status the REST API answers with; ``problem`` the message
    with its code (JupyterLab translates it; None for a backend's words, e.g.
    Kubernetes'), ``message`` its English text.
    """

    def __init__(self, field: str, problem: str | Message, status: int = 400) -> None:
        super().__init__(str(problem))
        self.field = field
        self.problem = problem if isinstance(problem, Message) else None
        self.message = str(problem)
        self.status = status

    def to_wire(self) -> dict[str, Any]:
        """The JSON error body: ``{field, message}``, with ``code`` and ``params``."""
        said = self.problem.to_wire() if self.problem else {"message": self.message}
        return {"field": self.field, **said}


def _iso(epoch: float) -> str:
    """A time in messages and logs (the REST API sends epoch seconds)."""
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass(eq=False)
class TensorBoardInstance:
    """A running TensorBoard process and what the proxy needs to reach it."""

    id: str
    logdir: Path
    port: int
    #: The path TensorBoard serves under (URL-decoded, no trailing slash).
    prefix: str
    process: asyncio.subprocess.Process
    started: float = field(default_factory=time.time)
    last_access: float = field(default_factory=time.time)
    output: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    #: Jobs it was opened for (by name), for the list of running TensorBoards.
    jobs: set[str] = field(default_factory=set)
    reader: asyncio.Task[None] | None = None
    #: Opened for jobs: run name (the job's) -> directory; None for a directory.
    runs: dict[str, Path] | None = None
    #: Its ``--logdir``: a directory of links, one per run (``run_links``), removed
    #: with the instance.
    links: Path | None = None

    @property
    def pid(self) -> int:
        """TensorBoard's PID, also its process group ID."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """Whether the process has not exited."""
        return self.process.returncode is None

    @property
    def url(self) -> str:
        """Where the browser opens it, relative to the server's base URL."""
        return f"{PROXY_PATH}/{self.id}/"

    def to_wire(self) -> dict[str, Any]:
        """The REST model of an instance."""
        return {
            "id": self.id,
            "url": self.url,
            "logdir": str(self.logdir),
            "jobs": sorted(self.jobs),
            "runs": None if self.runs is None else {n: str(p) for n, p in self.runs.items()},
            "pid": self.pid,
            "port": self.port,
            # The API's wire convention (job/wire.py): seconds since the epoch.
            "started": self.started,
            "lastAccess": self.last_access,
        }


def instance_id(logdir: Path) -> str:
    """A short, stable id for a resolved log directory."""
    return hashlib.sha256(str(logdir).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def logdir_spec(runs: Mapping[str, Path]) -> str:
    """``name:dir`` per run, by name: what makes the instance id of a set of runs."""
    return ",".join(f"{name}:{path}" for name, path in sorted(runs.items()))


def run_links(runs: Mapping[str, Path]) -> Path:
    """A new private directory with one link per run, ``<name> -> <directory>``: as
    TensorBoard's ``--logdir`` it names each run after its job (``job``, ``job/sub``),
    where ``--logdir_spec name:dir`` named a job's own directory ``job/.``. TensorBoard
    follows the links; nothing else reads this directory."""
    links = Path(tempfile.mkdtemp(prefix="ptjob-tensorboard-runs-"))
    for name, path in runs.items():
        (links / name).symlink_to(path, target_is_directory=True)
    return links


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - the group ID was reused
        return False
    return True


def _kill_leftovers() -> None:  # pragma: no cover - runs at interpreter exit
    """atexit safety net: stop TensorBoards that ``stop_all()`` did not reach."""
    groups = list(_LIVE_GROUPS)
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if _signal_group(g, 0)]
        time.sleep(0.05)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


def _register_atexit() -> None:
    global _ATEXIT_REGISTERED
    if not _ATEXIT_REGISTERED:
        atexit.register(_kill_leftovers)
        _ATEXIT_REGISTERED = True


class TensorBoardManager:
    """Start, reuse, cull and stop TensorBoard processes.

    ``roots``: directories log directories must lie in (after resolving symlinks).
    ``relative_to``: what a relative log directory is relative to (the server's
    root directory, as the file browser shows paths); default the first root.
    ``base_url``: the server's base URL, part of TensorBoard's ``--path_prefix``.
    ``command``: argv prefix that runs TensorBoard (tests may substitute one); the
    manager appends the TensorBoard flags.
    """

    def __init__(
        self,
        *,
        roots: Sequence[str | os.PathLike[str]],
        relative_to: str | os.PathLike[str] | None = None,
        base_url: str = "/",
        reload_interval: float = 2.0,
        load_fast: str = "false",
        start_timeout: float = 60.0,
        idle_timeout: float = 3600.0,
        cull_interval: float | None = None,
        stop_timeout: float = 5.0,
        max_instances: int = 0,
        busy_window: float = 120.0,
        command: Sequence[str] | None = None,
        extra_args: Sequence[str] = (),
        log: logging.Logger | None = None,
    ) -> None:
        if not roots:
            raise ValueError("TensorBoardManager needs at least one root directory")
        if load_fast not in LOAD_FAST_VALUES:
            raise ValueError(f"load_fast must be one of {LOAD_FAST_VALUES}, not {load_fast!r}")
        self.roots = [Path(r).resolve() for r in roots]
        self.relative_to = Path(relative_to).resolve() if relative_to else self.roots[0]
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.reload_interval = reload_interval
        self.load_fast = load_fast
        self.start_timeout = start_timeout
        self.idle_timeout = idle_timeout
        self.cull_interval = cull_interval
        self.stop_timeout = stop_timeout
        self.max_instances = max_instances
        self.busy_window = busy_window
        self.command = (
            list(command)
            if command
            else [sys.executable, "-m", "jupyter_pytorchjob.tensorboard._launch"]
        )
        self.extra_args = list(extra_args)
        self.log = log or _log
        self._instances: dict[str, TensorBoardInstance] = {}
        self._starting: dict[str, asyncio.Task[TensorBoardInstance]] = {}
        self._culler: asyncio.Task[None] | None = None
        self._closed = False

    # -- paths ---------------------------------------------------------------

    def resolve(self, logdir: str, *, must_exist: bool = False) -> Path:
        """The resolved log directory, or ``TensorBoardError`` (field ``logdir``).

        Relative paths are taken relative to ``relative_to``. ``..`` is refused
        (400); a path whose resolution (symlinks followed) leaves every root is
        forbidden (403); an existing non-directory, or a path the system cannot
        look up (a name too long), is refused (400). A missing directory inside a
        root is 404 with ``must_exist``, else accepted and not created.
        """
        if not isinstance(logdir, str) or not logdir.strip():
            raise TensorBoardError("logdir", msg("tb_name_logdir"))
        shown = logdir if len(logdir) <= 80 else logdir[:77] + "..."
        if "\x00" in logdir:
            raise TensorBoardError("logdir", msg("tb_nul"))
        raw = Path(logdir)
        if ".." in raw.parts:
            raise TensorBoardError("logdir", msg("tb_dotdot"))
        candidate = raw if raw.is_absolute() else self.relative_to / raw
        try:
            resolved = candidate.resolve()
            # Inside the try: exists() raises for what the system cannot look up.
            exists, is_dir = resolved.exists(), resolved.is_dir()
        except (OSError, RuntimeError) as err:  # symlink loops, permissions, too long
            reason = err.strerror if isinstance(err, OSError) and err.strerror else err
            problem = msg("tb_lookup", path=repr(shown), reason=str(reason))
            raise TensorBoardError("logdir", problem) from err
        if not any(resolved == root or resolved.is_relative_to(root) for root in self.roots):
            roots = ", ".join(str(r) for r in self.roots)
            problem = msg("tb_outside_roots", path=repr(shown), resolved=str(resolved), roots=roots)
            raise TensorBoardError("logdir", problem, 403)
        if exists and not is_dir:
            raise TensorBoardError("logdir", msg("tb_not_dir", path=str(resolved)))
        if must_exist and not exists:
            raise TensorBoardError("logdir", msg("tb_missing", path=str(resolved)), 404)
        return resolved

    def prefix_for(self, tb_id: str) -> str:
        """TensorBoard's ``--path_prefix``: the decoded browser path, no trailing slash.

        Tornado hands the proxy decoded path segments and TensorBoard (WSGI)
        matches the decoded ``PATH_INFO``, so a base URL such as ``/a%40b/``
        becomes ``/a@b/`` here.
        """
        return f"{unquote(self.base_url)}{PROXY_PATH}/{tb_id}"

    # -- queries ---------------------------------------------------------------

    def get(self, tb_id: str) -> TensorBoardInstance | None:
        """The running instance with this id, or None (a dead one is dropped)."""
        instance = self._instances.get(tb_id)
        if instance is not None and not instance.alive:
            self.log.warning(
                "TensorBoard %s (pid %s) exited with %s",
                tb_id,
                instance.pid,
                instance.process.returncode,
            )
            self._forget(instance)
            return None
        return instance

    def touch(self, tb_id: str) -> TensorBoardInstance | None:
        """``get`` and record an access (the proxy calls it on every request)."""
        instance = self.get(tb_id)
        if instance is not None:
            instance.last_access = time.time()
        return instance

    def list(self) -> list[TensorBoardInstance]:
        """Running instances, oldest first."""
        return [i for i in list(self._instances.values()) if self.get(i.id) is not None]

    # -- lifecycle -----------------------------------------------------------

    async def start(self, logdir: str, *, job: str | None = None) -> TensorBoardInstance:
        """A ready TensorBoard for ``logdir``: the running one, or a new one.

        ``job`` names the job whose log directory this is; the instance lists it
        (and the directory need not exist yet: the job will write it). A TensorBoard
        started for a job names its run after it (``run_links``, as ``start_runs``
        does: ``job``, never ``.``); it is the directory's TensorBoard all the same.
        """
        if self._closed:
            raise TensorBoardError("logdir", msg("tb_shutting_down"), 503)
        path = self.resolve(logdir, must_exist=job is None)
        instance = await self._start(instance_id(path), path, {job: path} if job else None)
        if job:
            instance.jobs.add(job)
        return instance

    async def start_runs(self, runs: Mapping[str, str]) -> TensorBoardInstance:
        """A ready TensorBoard over several jobs' log directories, each a run named after
        its job (``run_links``: ``job``, ``job/sub``, never ``job/.``): the running one, or
        a new one.

        Each directory is confined to the roots as in ``start`` (it need not exist yet);
        a directory with a comma (the spec's separator) or one shared by two runs
        (TensorBoard keeps one name per directory) is refused, naming field ``jobs``.
        """
        if self._closed:
            raise TensorBoardError("jobs", msg("tb_shutting_down"), 503)
        if not runs:
            raise TensorBoardError("jobs", msg("tb_no_jobs"))
        paths: dict[str, Path] = {}
        for name, logdir in runs.items():
            if not name or any(c in name for c in ",:/"):
                raise TensorBoardError("jobs", msg("tb_run_name", name=repr(name)))
            try:
                path = self.resolve(logdir)
            except TensorBoardError as err:
                problem = msg("tb_run_problem", name=name, problem=err.problem or err.message)
                raise TensorBoardError("jobs", problem, err.status) from err
            if "," in str(path):
                raise TensorBoardError("jobs", msg("tb_run_comma", name=name, path=str(path)))
            shared = [other for other, seen in paths.items() if seen == path]
            if shared:
                problem = msg("tb_shared_logdir", first=shared[0], second=name, path=str(path))
                raise TensorBoardError("jobs", problem)
            paths[name] = path
        common = Path(os.path.commonpath([str(p) for p in paths.values()]))
        # One job's runs are its directory's TensorBoard (``start`` with ``job``).
        tb_id = instance_id(common if len(paths) == 1 else Path(logdir_spec(paths)))
        instance = await self._start(tb_id, common, paths)
        instance.jobs.update(paths)
        return instance

    async def _start(
        self, tb_id: str, path: Path, runs: dict[str, Path] | None
    ) -> TensorBoardInstance:
        """The running instance ``tb_id``, or one started (shared by concurrent calls)."""
        instance = self.touch(tb_id)
        if instance is None and tb_id not in self._starting:
            await self._make_room(tb_id)
            instance = self.touch(tb_id)  # another request may have started it meanwhile
        if instance is None:
            task = self._starting.get(tb_id)
            if task is None:
                task = asyncio.ensure_future(self._launch(tb_id, path, runs))
                self._starting[tb_id] = task
                task.add_done_callback(lambda _t: self._starting.pop(tb_id, None))
            # Shielded: a client that disconnects does not abort a shared start.
            instance = await asyncio.shield(task)
        return instance

    async def _make_room(self, tb_id: str) -> None:
        """Below ``max_instances`` (counting starts under way) once this returns: the
        least recently used idle instance is stopped, or ``TensorBoardError`` 429.

        The count and the caller's registration of its start happen with no await
        between them, so concurrent starts cannot overshoot the limit."""
        while self.max_instances and len(self.list()) + len(self._starting) >= self.max_instances:
            if tb_id in self._starting:
                return
            running = sorted(self.list(), key=lambda i: i.last_access)
            now = time.time()
            idle = [i for i in running if now - i.last_access >= self.busy_window]
            if idle:
                self.log.info(
                    "Stopping TensorBoard %s (idle since %s) to make room for another",
                    idle[0].id,
                    _iso(idle[0].last_access),
                )
                await self._terminate(idle[0])
                continue
            if not running:  # all of them still starting
                raise TensorBoardError("logdir", msg("tb_starting", count=len(self._starting)), 429)
            oldest = running[0]
            problem = msg(
                "tb_running",
                count=len(running),
                seconds=f"{self.busy_window:g}",
                id=oldest.id,
                logdir=str(oldest.logdir),
                lastUsed=_iso(oldest.last_access),
            )
            raise TensorBoardError("logdir", problem, 429)

    async def stop(self, tb_id: str) -> bool:
        """Stop one instance; False when no instance has this id."""
        instance = self._instances.get(tb_id)
        if instance is None:
            return False
        await self._terminate(instance)
        return True

    async def stop_all(self) -> None:
        """Stop every instance and the culler; the manager accepts no more starts."""
        self._closed = True
        if self._culler is not None:
            self._culler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._culler
            self._culler = None
        starting = list(self._starting.values())
        for task in starting:
            task.cancel()
        if starting:
            await asyncio.gather(*starting, return_exceptions=True)
        await asyncio.gather(*(self._terminate(i) for i in list(self._instances.values())))

    def argv(self, logdir: Path, port: int, prefix: str) -> builtins.list[str]:
        """The command line of one TensorBoard (an argument list, never a shell)."""
        source = ["--logdir", str(logdir)]
        return [
            *self.command,
            *source,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--path_prefix",
            prefix,
            "--reload_interval",
            f"{self.reload_interval:g}",
            "--load_fast",
            self.load_fast,
            *self.extra_args,
        ]

    async def _launch(
        self, tb_id: str, path: Path, runs: dict[str, Path] | None = None
    ) -> TensorBoardInstance:
        attempts = 3  # another process may grab the free port before TensorBoard binds it
        for attempt in range(1, attempts + 1):
            instance = await self._spawn(tb_id, path, runs)
            try:
                await self._wait_ready(instance)
            except TensorBoardError:
                await self._terminate(instance)
                if attempt < attempts and self._port_conflict(instance):
                    continue
                raise
            except BaseException:  # cancelled (server stopping) or a bug: leave nothing
                await self._terminate(instance)
                raise
            # Registered only once ready: neither the proxy nor a second start()
            # sees a TensorBoard that cannot answer yet.
            self._instances[tb_id] = instance
            self.log.info(
                "TensorBoard %s ready for %s on 127.0.0.1:%s (pid %s) after %.2f s",
                tb_id,
                path,
                instance.port,
                instance.pid,
                time.time() - instance.started,
            )
            self._ensure_culler()
            return instance
        raise AssertionError("unreachable")  # pragma: no cover

    async def _spawn(
        self, tb_id: str, path: Path, runs: dict[str, Path] | None = None
    ) -> TensorBoardInstance:
        port = free_port()
        prefix = self.prefix_for(tb_id)
        links = run_links(runs) if runs else None
        argv = self.argv(links or path, port, prefix)
        env = {**os.environ, PARENT_ENV: str(os.getpid())}
        self.log.debug("Starting TensorBoard %s: %s", tb_id, argv)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        except OSError as err:
            if links is not None:
                shutil.rmtree(links, ignore_errors=True)
            raise TensorBoardError("logdir", msg("tb_cannot_run", error=str(err)), 500) from err
        _register_atexit()
        _LIVE_GROUPS.add(process.pid)
        instance = TensorBoardInstance(
            id=tb_id,
            logdir=path,
            port=port,
            prefix=prefix,
            process=process,
            runs=runs,
            links=links,
        )
        instance.reader = asyncio.ensure_future(self._read_output(instance))
        return instance

    async def _read_output(self, instance: TensorBoardInstance) -> None:
        stream = instance.process.stdout
        if stream is None:  # pragma: no cover
            return
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip()
            instance.output.append(text)
            self.log.debug("TensorBoard %s: %s", instance.id, text)

    async def _wait_ready(self, instance: TensorBoardInstance) -> None:
        url = f"http://127.0.0.1:{instance.port}{instance.prefix}/data/environment"
        client = AsyncHTTPClient()
        started = time.monotonic()
        deadline = started + self.start_timeout
        while True:
            if not instance.alive:
                await self._drain(instance)
                problem = msg(
                    "tb_exited",
                    status=str(instance.process.returncode),
                    output=self._tail(instance),
                )
                raise TensorBoardError("logdir", problem, 500)
            try:
                response = await client.fetch(
                    HTTPRequest(url, connect_timeout=2, request_timeout=5), raise_error=False
                )
                if response.code == 200:
                    return
            except OSError:
                pass  # not listening yet
            if time.monotonic() >= deadline:
                problem = msg(
                    "tb_no_answer", seconds=f"{self.start_timeout:g}", output=self._tail(instance)
                )
                raise TensorBoardError("logdir", problem, 504)
            # A refused connection costs microseconds: poll often, answer sooner.
            await asyncio.sleep(0.02 if time.monotonic() - started < 10 else 0.2)

    async def _drain(self, instance: TensorBoardInstance) -> None:
        if instance.reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(instance.reader), 1.0)

    @staticmethod
    def _tail(instance: TensorBoardInstance) -> str:
        lines = [line for line in instance.output if line.strip()]
        return " | ".join(lines[-5:]) or "(no output)"

    @staticmethod
    def _port_conflict(instance: TensorBoardInstance) -> bool:
        text = "\n".join(instance.output).lower()
        return "address already in use" in text or "could not bind" in text

    async def _terminate(self, instance: TensorBoardInstance) -> None:
        """SIGTERM the group, SIGKILL after ``stop_timeout``, reap the leader."""
        self._forget(instance)
        pgid = instance.pid
        if instance.alive:
            _signal_group(pgid, signal.SIGTERM)
            try:
                await asyncio.wait_for(instance.process.wait(), self.stop_timeout)
            except asyncio.TimeoutError:
                self.log.warning("TensorBoard %s (pid %s) ignored SIGTERM", instance.id, pgid)
                _signal_group(pgid, signal.SIGKILL)
                await instance.process.wait()
        else:
            await instance.process.wait()
        # Anything the leader left behind in its group (e.g. its data server).
        _signal_group(pgid, signal.SIGKILL)
        _LIVE_GROUPS.discard(pgid)
        await self._drain(instance)
        if instance.reader is not None and not instance.reader.done():
            instance.reader.cancel()
        if instance.links is not None:
            # Only the links go: rmtree unlinks a link, never enters it.
            shutil.rmtree(instance.links, ignore_errors=True)
        self.log.info("TensorBoard %s (pid %s) stopped", instance.id, pgid)

    def _forget(self, instance: TensorBoardInstance) -> None:
        if self._instances.get(instance.id) is instance:
            del self._instances[instance.id]

    # -- idle culling --------------------------------------------------------

    def _ensure_culler(self) -> None:
        if self.idle_timeout > 0 and self._culler is None and not self._closed:
            self._culler = asyncio.ensure_future(self._cull_loop())

    async def _cull_loop(self) -> None:
        interval = self.cull_interval or min(60.0, max(1.0, self.idle_timeout / 4))
        while True:
            await asyncio.sleep(interval)
            try:
                await self.cull_idle()
            except Exception:  # pragma: no cover - keep culling
                self.log.exception("Culling idle TensorBoards failed")

    async def cull_idle(self, now: float | None = None) -> builtins.list[str]:
        """Stop instances idle for longer than ``idle_timeout``; their ids."""
        if self.idle_timeout <= 0:
            return []
        now = time.time() if now is None else now
        idle = [
            i
            for i in list(self._instances.values())
            if not i.alive or now - i.last_access > self.idle_timeout
        ]
        for instance in idle:
            self.log.info(
                "Culling TensorBoard %s (idle since %s)", instance.id, _iso(instance.last_access)
            )
            await self._terminate(instance)
        return [i.id for i in idle]
