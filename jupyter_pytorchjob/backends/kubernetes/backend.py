"""``KubernetesBackend``: the backend contract on the job kinds a cluster serves.

Everything that depends on the kind of object (a PyTorchJob, a TrainJob: its API,
manifest, pods, state) comes from its ``JobKind``; this module only talks to the API
server, and treats every kind the cluster serves alike.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ...job.errors import FieldError, JobSpecInvalid
from ...job.messages import msg
from ...job.progress import JobProgress, MetricHistory
from ...job.spec import JobSpec, writable_mount
from ...kinds import (
    DEFAULT_KIND,
    KINDS,
    JobKind,
    kind_for,
    kind_of,
    log_archive,
    none_served_message,
)
from ...kinds.trainjob import TRAINJOB
from ...kinds.trainjob.runtimes import Runtime, available_runtimes, runtime_of
from ..archive import ArchiveLocation, read_archive
from ..base import (
    Backend,
    BackendError,
    Event,
    JobInfo,
    JobNotFound,
    LogChunk,
    Volume,
    dropped_warning,
    finished_error,
    unknown_replica,
)
from ..loopshare import LOG_STREAMS
from ..timestamps import parse_timestamp_ns
from .connection import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT,
    CrdMissing,
    TimedApiClient,
    in_cluster,
    load_configuration,
    translate,
)
from .discovery import NotebookPod, within
from .failure import SCAN_LINES as FAILURE_SCAN_LINES
from .failure import FailureReader
from .logs import LogMerger
from .progress import INTERVAL, ProgressReads, ProgressWatcher
from .pruning import dropped_fields
from .waiting import WaitingReader, event_of

LOGGER = logging.getLogger(__name__)
# Seconds a discovery of the kinds the cluster serves stands: a CRD installed or removed
# while a server runs shows within this time, at one discovery request per kind.
KINDS_TTL = 30.0
# A kind asked for but not served, or answered 404, is looked up again at once, but not
# more often than this (a client retrying a submit causes no discovery storm).
KINDS_RECHECK = 2.0
# Seconds a namespace seen to exist is not read again (an empty list every refresh).
NAMESPACE_TTL = 60.0


class KubernetesBackend(Backend):
    """Jobs in one namespace of a cluster, of every kind (``kinds.KINDS``) it serves.

    ``namespace``: the namespace to use (default: the pod's own, else the
    kubeconfig context's, else ``default``). ``allowed_namespaces``: the other
    namespaces a request may name (empty: only the default one). ``dry_run``:
    validate every submit with a server-side dry run first (the webhook runs).
    ``connect_timeout``/``request_timeout``: seconds to connect (TLS included) and to
    wait for an answer, so a hung API server fails fast with a clear message.
    ``progress_interval``: seconds between reads of running jobs' logs and event files
    for their progress while somebody looks (0: no progress from them);
    ``progress_wait``: how long a list may wait for the first read of jobs never read
    (a one-shot ``ptjob list``; a server shows them at its next poll);
    ``progress_parse_in_process``: parse logs and event files in a worker process, not a
    thread (a server: the parsing would hold the GIL its requests need).
    """

    name = "kubernetes"

    def __init__(
        self,
        *,
        namespace: str | None = None,
        allowed_namespaces: Sequence[str] = (),
        dry_run: bool = False,
        self_pod: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        progress_interval: float = INTERVAL,
        progress_wait: float = 0.0,
        progress_parse_in_process: bool = False,
        kinds_ttl: float = KINDS_TTL,
    ) -> None:
        self._namespace = namespace
        self.kinds_ttl = kinds_ttl
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.allowed_namespaces = tuple(allowed_namespaces)
        self.dry_run = dry_run
        # In a pod, HOSTNAME is the pod's name: the notebook reads its own pod.
        self.self_pod = self_pod or (os.environ.get("HOSTNAME") if in_cluster() else None)
        self._notebook: NotebookPod | None = None
        self._api: TimedApiClient | None = None
        # Followed logs get their own connections: held for as long as a job runs,
        # they would otherwise take the whole pool (100) and starve every GET jobs.
        self._log_api: TimedApiClient | None = None
        self._server: str | None = None
        self._lock = asyncio.Lock()
        # The kinds the cluster serves (None: not looked yet), and when they were found
        # (time.monotonic()).
        self._served: list[JobKind] | None = None
        self._served_at = 0.0
        self.clock = time.monotonic  # for the discovery's age (a test's own clock)
        self._namespace_seen: float | None = None  # when it was last seen to exist
        self._others: dict[str, KubernetesBackend] = {}  # for_namespace's
        reads = ProgressReads(
            self.api, lambda: self.namespace, self._logdir_here, self._archive_location
        )
        self.failures = FailureReader(reads.read_log, self._failure_archive, self._annotate)
        self.waiting = WaitingReader(self.core, self.custom, self._call, lambda: self.namespace)
        # Every job read is tracked by the watcher explicitly (``_complete``), never by a
        # read meant only for the object (``_read_job``).
        self.progress_watcher = ProgressWatcher(
            reads.read_log,
            reads.find_logdir,
            read_archive=reads.read_archive,
            interval=progress_interval,
            wait_first=progress_wait,
            parse_in_process=progress_parse_in_process,
        )

    # -- connection ---------------------------------------------------------------------

    async def api(self) -> TimedApiClient:
        async with self._lock:
            if self._api is None:
                configuration, namespace = await load_configuration()
                self._namespace = self._namespace or namespace or "default"
                self._server = configuration.host
                self._api = TimedApiClient(
                    configuration,
                    connect_timeout=self.connect_timeout,
                    request_timeout=self.request_timeout,
                )
            return self._api

    async def log_api(self) -> TimedApiClient:
        """The client log streams use: the same configuration, its own connection pool."""
        api = await self.api()
        async with self._lock:
            if self._log_api is None:
                self._log_api = TimedApiClient(
                    api.configuration,
                    connect_timeout=self.connect_timeout,
                    request_timeout=self.request_timeout,
                )
            return self._log_api

    @property
    def namespace(self) -> str:
        return self._namespace or "default"

    def for_namespace(self, namespace: str | None) -> KubernetesBackend:
        """This backend on another namespace, if the configuration allows it."""
        if namespace is None or namespace == self.namespace:
            return self
        if namespace not in self.allowed_namespaces:
            allowed = ", ".join([repr(self.namespace), *self.allowed_namespaces])
            refused = msg("namespace_not_allowed", namespace=repr(namespace), allowed=allowed)
            raise BackendError(refused, status=403)
        other = self._others.get(namespace)
        if other is None:
            # Kept: its progress watcher (and the history it holds) outlives the request.
            other = self._others[namespace] = KubernetesBackend(
                namespace=namespace,
                allowed_namespaces=self.allowed_namespaces,
                dry_run=self.dry_run,
                connect_timeout=self.connect_timeout,
                request_timeout=self.request_timeout,
                progress_interval=self.progress_watcher.interval,
                progress_wait=self.progress_watcher.wait_first,
                progress_parse_in_process=self.progress_watcher.parser.in_process,
                kinds_ttl=self.kinds_ttl,
            )
            other.self_pod = None  # the notebook's PVCs live in its own namespace
        if self._api is not None and other._api is None:
            other._api, other._server = self._api, self._server  # one connection
        other.clock = self.clock
        if other._served is None and self._served is not None:
            other._served, other._served_at = self._served, self._served_at
        return other

    async def warm_up(self) -> None:
        """Load the configuration, check the CRD, read the notebook's own pod and make
        the log streams' client (its TLS context loads the CA certificates: ~20 ms that
        would otherwise hold the loop at the first log stream, #28)."""
        await self.custom()
        await self.notebook()
        await self.log_api()

    # -- the notebook's own pod -------------------------------------------------------------

    async def notebook(self) -> NotebookPod | None:
        """The notebook's own pod (image, PVC mounts), read once; None outside a pod
        or when it cannot be read (then there are simply no such defaults)."""
        if self._notebook is None and self.self_pod:
            core = await self.core()
            try:
                pod = await core.read_namespaced_pod(self.self_pod, self.namespace)
            except ApiException:
                self.self_pod = None
                return None
            api = await self.api()
            self._notebook = NotebookPod.from_pod(api.sanitize_for_serialization(pod))
        return self._notebook

    async def form_defaults(self) -> dict[str, Any]:
        try:
            await self.api()  # the namespace comes with the configuration
            notebook = await self.notebook()
        except BackendError:
            return {}  # no cluster reachable: the configured defaults stand
        if notebook is None:
            return {"namespace": self.namespace}
        defaults: dict[str, Any] = {
            "namespace": self.namespace,
            "pvc": [m.to_wire() for m in notebook.mounts],
        }
        if notebook.image:
            defaults["image"] = notebook.image
        return defaults

    async def job_logdir(self, name: str) -> str:
        """The job's log directory as the notebook sees it, through the same PVC."""
        kind, job = await self._job(name)
        return await self._logdir_here(kind, job)

    async def _logdir_here(self, kind: JobKind, job: Mapping[str, Any]) -> str:
        """``job_logdir`` of a job already read; ``BackendError`` saying why not."""
        spec = kind.parse(job)
        name = spec.name
        if not spec.logdir:
            raise BackendError(msg("no_logdir_cluster", name=repr(name)), status=400)
        notebook = await self.notebook()
        if notebook is None:
            elsewhere = msg("logdir_no_notebook", name=repr(name), logdir=spec.logdir)
            raise BackendError(elsewhere, status=400)
        local = notebook.local_path(spec.pvc, spec.logdir)
        if local is None:
            holder = next(
                (m for m in spec.pvc if within(spec.logdir, m.mount_path) is not None), None
            )
            if holder:
                unmounted = msg(
                    "logdir_unmounted",
                    name=repr(name),
                    logdir=spec.logdir,
                    claim=repr(holder.claim),
                )
            else:
                unmounted = msg("logdir_off_pvc", name=repr(name), logdir=spec.logdir)
            raise BackendError(unmounted, status=400)
        return local

    async def _failure_archive(self, kind: JobKind, job: dict[str, Any], replica: str) -> list[str]:
        """The last lines of ``replica``'s newest run in the job's log archive, for its
        failure summary once its pod is gone; none where this notebook cannot read it."""
        location = await self._archive_location(kind, job)
        if location is None or location.directory is None:
            return []
        text = [
            chunk.text
            async for chunk in read_archive(location, [replica], tail=FAILURE_SCAN_LINES)
            if not chunk.notice
        ]
        return "".join(text).splitlines()

    async def _annotate(self, kind: JobKind, name: str, annotations: dict[str, str]) -> None:
        """Merge ``annotations`` into the job's (a merge patch of its metadata only)."""
        custom = await self.custom()
        merge: dict[str, Any] = {"_content_type": "application/merge-patch+json"}
        await self._call(
            f"annotate {kind.kind.lower()} {name!r}",
            custom.patch_namespaced_custom_object(
                kind.group,
                kind.version,
                self.namespace,
                kind.plural,
                name,
                {"metadata": {"annotations": annotations}},
                **merge,
            ),
            name=name,
            kind=kind,
        )

    async def _archive_location(self, kind: JobKind, job: dict[str, Any]) -> ArchiveLocation | None:
        """Where this notebook reads the job's log archive (found as TensorBoard finds
        its log directory), None when the job keeps none."""
        try:
            spec = kind.parse(job)
        except JobSpecInvalid:
            return None  # not a job the form could write: no archive of ours
        base = spec.log_archive_base
        mount = writable_mount(spec.pvc, base) if base else None
        if base is None or mount is None:
            return None
        path = log_archive.archive_dir(base, spec.name or "")
        created = parse_timestamp_ns(job["metadata"].get("creationTimestamp") or "") or 0
        notebook = await self.notebook()
        local = notebook.local_path(spec.pvc, path) if notebook else None
        if local is not None:
            return ArchiveLocation(mount.claim, Path(local), not_before_ns=created)
        return ArchiveLocation(
            mount.claim,
            None,
            f"its pod is gone and its log archive is on PVC {mount.claim!r} ({path} in the "
            "job's pods), which this notebook does not mount: add that PVC to the notebook's "
            "volumes to read it",
            not_before_ns=created,
        )

    async def custom(self) -> client.CustomObjectsApi:
        """The custom-objects API; ``CrdMissing`` saying what to install when the
        cluster serves no kind of job we know."""
        if not await self.job_kinds():
            raise CrdMissing(none_served_message())
        return client.CustomObjectsApi(await self.api())

    async def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(await self.api())

    async def job_kinds(self, *, recheck: bool = False) -> list[JobKind]:
        """The registered kinds the cluster serves (API discovery), so a CRD installed or
        removed while a server runs needs no restart: looked up again after
        ``kinds_ttl`` seconds, at once while it serves none, and with ``recheck`` (a kind
        asked for but not served, a 404) when the last look is ``KINDS_RECHECK`` s old."""
        age = self.clock() - self._served_at
        if not self._served or age > self.kinds_ttl or (recheck and age > KINDS_RECHECK):
            api = await self.api()
            served = [kind for kind in KINDS if await self._serves(api, kind)]
            self._served, self._served_at = served, self.clock()
        return self._served

    def _look_again(self) -> None:
        """A kind answered 404 (its CRD removed meanwhile): the next use discovers again."""
        self._served_at = -math.inf

    async def _serves(self, api: client.ApiClient, kind: JobKind) -> bool:
        what = f"discover the {kind.kind} API"
        try:
            resources = await client.CustomObjectsApi(api).get_api_resources(
                kind.group, kind.version
            )
        except ApiException as err:
            if err.status == 404:
                return False  # the group/version is not served at all
            raise self._translate(err, what=what) from err
        except Exception as err:
            raise self._translate(err, what=what) from err
        return kind.plural in [r.name for r in (resources.resources or [])]

    async def runtimes(self) -> list[Runtime]:
        """ClusterTrainingRuntimes, overridden by the namespace's TrainingRuntimes of the
        same name (which a user may not be allowed to list: then only the cluster's)."""
        if TRAINJOB not in await self.job_kinds():
            return []
        custom = client.CustomObjectsApi(await self.api())
        group, version = TRAINJOB.group, TRAINJOB.version
        cluster = await self._call(
            "list clustertrainingruntimes",
            custom.list_cluster_custom_object(group, version, "clustertrainingruntimes"),
            kind=TRAINJOB,
            cluster_scope=True,
        )
        try:
            namespaced = await custom.list_namespaced_custom_object(
                group, version, self.namespace, "trainingruntimes"
            )
        except ApiException as err:
            if err.status not in (403, 404):
                raise self._translate(err, what="list trainingruntimes", kind=TRAINJOB) from err
            namespaced = {"items": []}
        return available_runtimes(cluster.get("items", []), namespaced.get("items", []))

    async def _runtime_named(self, name: str) -> tuple[Runtime | None, bool]:
        """The runtime ``name`` means here - the namespace's TrainingRuntime, else the
        ClusterTrainingRuntime - read by name (a namespace user may create TrainJobs but
        not list cluster-scoped objects); and whether a refusal (403) left it unknown."""
        custom = client.CustomObjectsApi(await self.api())
        group, version = TRAINJOB.group, TRAINJOB.version
        refused = False
        for plural in ("trainingruntimes", "clustertrainingruntimes"):
            cluster = plural == "clustertrainingruntimes"
            read = (
                custom.get_cluster_custom_object(group, version, plural, name)
                if cluster
                else custom.get_namespaced_custom_object(
                    group, version, self.namespace, plural, name
                )
            )
            try:
                return runtime_of(await read), False
            except ApiException as err:
                if err.status not in (403, 404):
                    what = f"read {plural} {name!r}"
                    raise self._translate(err, what=what, cluster_scope=cluster) from err
                refused = refused or err.status == 403
        return None, refused

    async def _resolve_runtime(self, manifest: dict[str, Any]) -> None:
        """Point a TrainJob's ``runtimeRef`` at the runtime its name means here: the
        namespace's TrainingRuntime, else the ClusterTrainingRuntime (as the SDK does);
        400 naming ``runtime`` when there is neither. Where the user may not read them,
        the reference stays as built and the Trainer's webhook judges, as for kubectl."""
        ref = manifest["spec"]["runtimeRef"]
        found, refused = await self._runtime_named(ref["name"])
        if found is None and refused:
            return
        if found is None:
            raise JobSpecInvalid(
                [
                    FieldError(
                        "runtime",
                        msg("no_runtime", name=repr(ref["name"]), namespace=repr(self.namespace)),
                    )
                ]
            )
        if found.usable:
            problem = msg("runtime_unusable", name=repr(found.name), problem=found.usable)
            raise JobSpecInvalid([FieldError("runtime", problem)])
        problems = TRAINJOB.runtime_problems(manifest, found)
        if problems:
            raise JobSpecInvalid(problems)
        ref["kind"] = found.kind

    async def _kind(self, kind: JobKind) -> JobKind:
        """``kind`` if the cluster serves it; ``CrdMissing`` saying so otherwise, and
        which kind it serves instead (a Trainer-v2-only cluster: submit TrainJobs)."""
        served = await self.job_kinds()
        if kind not in served:
            served = await self.job_kinds(recheck=True)  # installed meanwhile?
        if kind not in served:
            message = kind.missing_message()
            if served:
                other = served[0].kind
                message += (
                    f"; it serves {other}s: submit with --kind {other.lower()} "
                    f'(REST: "kind": "{other}"; the form offers only {other})'
                )
            raise CrdMissing(message)
        return kind

    def _translate(
        self,
        err: Exception,
        *,
        what: str,
        name: str | None = None,
        kind: JobKind = DEFAULT_KIND,
        change: bool = False,
        cluster_scope: bool = False,
    ) -> BackendError:
        connecting = isinstance(err, aiohttp.ConnectionTimeoutError)
        return translate(
            err,
            what=what,
            namespace=None if cluster_scope else self.namespace,
            name=name,
            server=self._server,
            timeout=self.connect_timeout if connecting else self.request_timeout,
            missing_crd=kind.missing_message(),
            change=change,
        )

    async def _call(
        self,
        what: str,
        coro: Any,
        *,
        name: str | None = None,
        kind: JobKind = DEFAULT_KIND,
        change: bool = False,
        cluster_scope: bool = False,
    ) -> Any:
        try:
            return await coro
        except ApiException as err:
            error = self._translate(
                err, what=what, name=name, kind=kind, change=change, cluster_scope=cluster_scope
            )
            if isinstance(error, CrdMissing):
                self._look_again()  # uninstalled meanwhile
            raise error from err
        except (OSError, TimeoutError) as err:
            raise self._translate(err, what=what, name=name, kind=kind) from err
        except Exception as err:
            if type(err).__module__.startswith("aiohttp"):
                raise self._translate(err, what=what, name=name, kind=kind) from err
            raise

    # -- contract -----------------------------------------------------------------------

    async def submit(self, spec: JobSpec) -> JobInfo:
        kind = await self._kind(kind_for(spec))
        custom = await self.custom()
        manifest = kind.build(spec, namespace=self.namespace)
        if kind is TRAINJOB:
            await self._resolve_runtime(manifest)
        create = custom.create_namespaced_custom_object
        what = f"create {kind.plural} (job {spec.name!r})"
        api = (kind.group, kind.version, self.namespace, kind.plural)
        if self.dry_run:
            await self._call(what, create(*api, manifest, dry_run="All"), name=spec.name, kind=kind)
        created = await self._call(what, create(*api, manifest), name=spec.name, kind=kind)
        info = kind.job_info(created, [])
        info.warnings.extend(spec.warnings)
        dropped = dropped_fields(manifest, created)
        if dropped:
            info.warnings.append(dropped_warning(dropped, kind.kind))
        return info

    async def dropped_fields(self, manifest: Mapping[str, Any]) -> list[str]:
        """A server-side dry run of ``manifest`` under a generated name (so a taken name
        does not matter): the fields the server would drop. ``BackendError`` saying why
        when the dry run cannot be made (no permission, invalid job, unreachable)."""
        kind = await self._kind(kind_of(manifest))
        body = copy.deepcopy(dict(manifest))
        meta = body.setdefault("metadata", {})
        meta["generateName"] = f"{meta.pop('name', None) or 'check'}-"
        custom = await self.custom()
        stored = await self._call(
            f"create {kind.plural} (a dry run)",
            custom.create_namespaced_custom_object(
                kind.group, kind.version, self.namespace, kind.plural, body, dry_run="All"
            ),
            kind=kind,
        )
        return [p for p in dropped_fields(body, stored) if p != "metadata.name"]

    async def list_jobs(self) -> list[JobInfo]:
        custom = await self.custom()  # CrdMissing when the cluster serves no kind
        infos: list[JobInfo] = []
        read: list[tuple[JobKind, dict[str, Any], list[dict[str, Any]], JobInfo]] = []
        listed = False
        for kind in await self.job_kinds():
            try:
                jobs = await self._call(
                    f"list {kind.plural}",
                    custom.list_namespaced_custom_object(
                        kind.group, kind.version, self.namespace, kind.plural
                    ),
                    kind=kind,
                )
            except CrdMissing:
                continue  # uninstalled since the last discovery: the other kinds stand
            listed = True
            by_job: dict[str, list[dict[str, Any]]] = {}
            for pod in await self._pods(kind.pod_selector()):
                by_job.setdefault(kind.job_of_pod(pod) or "", []).append(pod)
            found = [
                kind.job_info(j, by_job.get(j["metadata"]["name"], []))
                for j in jobs.get("items", [])
            ]
            await self.waiting.why_not_made(kind, found)
            infos += found
            read += [
                (kind, j, by_job.get(info.name, []), info)
                for j, info in zip(jobs.get("items", []), found, strict=True)
            ]
        if not listed:
            raise CrdMissing(none_served_message())
        if not infos:
            await self._check_namespace()  # an empty list of a namespace that is not there
        await self._complete(read, listing=True)
        return sorted(infos, key=lambda j: j.created, reverse=True)

    async def _job(self, name: str) -> tuple[JobKind, dict[str, Any]]:
        """The job called ``name`` and its kind (the first served kind that has one)."""
        custom = await self.custom()
        asked = False
        for kind in await self.job_kinds():
            try:
                job: dict[str, Any] = await self._call(
                    f"read {kind.kind.lower()} {name!r}",
                    custom.get_namespaced_custom_object(
                        kind.group, kind.version, self.namespace, kind.plural, name
                    ),
                    name=name,
                    kind=kind,
                )
            except JobNotFound:
                asked = True
                continue
            except CrdMissing:
                continue  # uninstalled since the last discovery: the other kinds stand
            return kind, job
        if not asked:
            raise CrdMissing(none_served_message())
        await self._check_namespace()  # a missing namespace, not a missing job
        raise JobNotFound(name)

    async def _check_namespace(self) -> None:
        """``BackendError`` (404) naming the namespace when it does not exist: the API
        answers a job in it 404 and its list empty, as if there were no such job. Read
        only then, at most every ``NAMESPACE_TTL`` s (a refusal too: a user who may not
        read namespaces (403) gets the plain answer, without a request per list)."""
        now = self.clock()
        if self._namespace_seen is not None and now - self._namespace_seen < NAMESPACE_TTL:
            return
        core = await self.core()
        try:
            await core.read_namespace(self.namespace)
        except ApiException as err:
            if err.status == 404:
                raise self._translate(err, what=f"read namespace {self.namespace!r}") from err
        except (OSError, TimeoutError, aiohttp.ClientError):
            pass
        self._namespace_seen = now  # there, or not ours to read: not asked again for now

    async def get_job(self, name: str) -> JobInfo:
        found = await self._read_job(name)
        kind, _, _, info = found
        await self.waiting.why_not_made(kind, [info])
        await self._complete([found])
        return info

    async def _read_job(
        self, name: str
    ) -> tuple[JobKind, dict[str, Any], list[dict[str, Any]], JobInfo]:
        """The job, its pods and the info they make, read and nothing more (no failure
        summary, no waiting reason, no progress: nothing tracked from here on)."""
        kind, job = await self._job(name)
        pods = await self._pods(kind.pod_selector(name))
        return kind, job, pods, kind.job_info(job, pods, with_manifest=True)

    async def _complete(
        self,
        read: list[tuple[JobKind, dict[str, Any], list[dict[str, Any]], JobInfo]],
        *,
        listing: bool = False,
    ) -> None:
        """What the jobs read tell a reader beyond their objects: the failure summary,
        why they wait (one job: its events too), their progress - the watcher tracks
        them from now on (``listing``: all the jobs there are; it forgets the others)."""
        await self.failures.fill(read)
        await self.waiting.fill(read, events=not listing)
        await self.progress_watcher.track(read, complete=listing)

    async def progress(self, name: str) -> tuple[JobProgress | None, MetricHistory | None]:
        """The job's progress and the history of its metrics since this server first
        read them (the logs' and event files' since then, a TrainJob's trainerStatus)."""
        info = await self.get_job(name)
        return info.progress, await self.progress_watcher.history(name)

    async def _pods(self, selector: str) -> list[dict[str, Any]]:
        """Pods as plain dicts, read without building client models: log following
        re-lists pods every second, and the models cost milliseconds on the loop."""
        core = await self.core()

        async def read() -> list[dict[str, Any]]:
            # Unparsed: an aiohttp response, not the V1PodList the stubs promise.
            response: Any = await core.list_namespaced_pod(
                self.namespace, label_selector=selector, _preload_content=False
            )
            try:
                if response.status >= 400:
                    err = ApiException(status=response.status, reason=response.reason)
                    err.body = await response.text()
                    raise err
                items: list[dict[str, Any]] = json.loads(await response.read())["items"]
            finally:
                response.release()
            return items

        pods: list[dict[str, Any]] = await self._call("list pods", read())
        return pods

    async def delete_job(self, name: str) -> None:
        kind, _ = await self._job(name)
        custom = await self.custom()
        await self._call(
            f"delete {kind.kind.lower()} {name!r}",
            custom.delete_namespaced_custom_object(
                kind.group,
                kind.version,
                self.namespace,
                kind.plural,
                name,
                propagation_policy="Background",
            ),
            name=name,
            kind=kind,
        )

    async def suspend(self, name: str) -> JobInfo:
        return await self._set_suspend(name, True)

    async def resume(self, name: str) -> JobInfo:
        return await self._set_suspend(name, False)

    async def _set_suspend(self, name: str, suspend: bool) -> JobInfo:
        """A merge patch of the kind's suspend field (PyTorchJob: ``runPolicy.suspend``,
        what Kueue and ``kubectl patch`` do); the controller deletes or recreates the
        pods (v1.9.4 common/job.go:146-173)."""
        kind, job = await self._job(name)
        state = kind.job_info(job, []).state  # finished or not: the conditions say, not pods
        if state.finished:
            raise finished_error(name, state, "suspended" if suspend else "resumed")
        verb = "suspend" if suspend else "resume"
        return await self._patch(kind, name, kind.suspend_patch(suspend), verb)

    async def _patch(self, kind: JobKind, name: str, patch: dict[str, Any], verb: str) -> JobInfo:
        """Edit a job by merge patch: only the fields in ``patch`` are sent, so fields the
        CRD makes immutable (a TrainJob's ``trainer``, ``runtimeRef``...) stay as they
        were; a refusal (CEL, a webhook) is a 400 naming the field in the server's words."""
        custom = await self.custom()
        # The client would pick json-patch+json for a dict body: say merge patch (its
        # typed signature lacks the generic ``_content_type`` option, hence the dict).
        merge: dict[str, Any] = {"_content_type": "application/merge-patch+json"}
        patched = await self._call(
            f"{verb} {kind.kind.lower()} {name!r}",
            custom.patch_namespaced_custom_object(
                kind.group, kind.version, self.namespace, kind.plural, name, patch, **merge
            ),
            name=name,
            kind=kind,
            change=True,
        )
        pods = await self._pods(kind.pod_selector(name))
        return kind.job_info(patched, pods, with_manifest=True)

    async def events(self, name: str) -> list[Event]:
        """The events of the job and of what its kind makes for it (a TrainJob's JobSet
        and Jobs), and of its pods, oldest first."""
        kind, job = await self._job(name)
        core = await self.core()
        pods = await self._pods(kind.pod_selector(name))
        sources = kind.event_sources(job, pods)
        results = await asyncio.gather(
            *[
                self._call(
                    "list events",
                    core.list_namespaced_event(
                        self.namespace, field_selector=f"involvedObject.name={n}"
                    ),
                )
                for n in sorted({n for _, n in sources})
            ]
        )
        found = [
            e
            for result in results
            for e in result.items
            if (e.involved_object.kind, e.involved_object.name) in sources
        ]
        # Timestamps have whole seconds; within one, the resourceVersion (etcd's revision:
        # opaque, but increasing in practice) keeps the order they happened in.
        found.sort(key=lambda e: int(e.metadata.resource_version or 0))
        events = [
            event_of(e, sources[(e.involved_object.kind, e.involved_object.name)]) for e in found
        ]
        return sorted(events, key=lambda e: e.time)

    async def volumes(self) -> list[Volume]:
        core = await self.core()
        claims = await self._call(
            "list persistentvolumeclaims",
            core.list_namespaced_persistent_volume_claim(self.namespace),
        )
        return [
            Volume(
                name=c.metadata.name,
                phase=(c.status.phase if c.status else None) or "Unknown",
                capacity=((c.status.capacity or {}).get("storage") if c.status else None),
                access_modes=list((c.spec.access_modes if c.spec else None) or []),
            )
            for c in claims.items
        ]

    async def logs(
        self,
        name: str,
        *,
        replica: str | None = None,
        follow: bool = False,
        tail: int | None = None,
        previous: bool = False,
        since: Mapping[str, int] | None = None,
        timestamps: bool = False,
        keep_stamps: bool = False,
    ) -> AsyncIterator[LogChunk]:
        await LOG_STREAMS.turn()  # a request's share of a turn of the loop (LogMerger's)
        kind, job = await self._job(name)

        async def archived(gone: list[str], seen: Mapping[str, int]) -> AsyncIterator[LogChunk]:
            # Found only when a replica's pod is gone: it parses the manifest, milliseconds
            # that every stream's start would otherwise spend on the loop.
            location = await self._archive_location(kind, job)
            if location is None:
                return
            async for chunk in read_archive(
                location,
                gone,
                previous=previous,
                since=seen,
                tail=tail,
                timestamps=timestamps,
                keep_stamps=keep_stamps,
            ):
                yield chunk

        async def finished() -> bool:
            try:
                return (await self._read_job(name))[3].state.finished
            except BackendError as err:
                return err.status == 404  # deleted (or TTL): nothing more will come

        replicas = [r.name for r in kind.job_info(job, []).replicas]
        if replica is not None and replica not in replicas:
            # Not in the spec: maybe an elastic job's pod beyond it, else no replica (404,
            # as locally and in openapi.yaml - not an empty log).
            try:
                pods = await self._pods(kind.pod_selector(name))
            except (ApiException, OSError, TimeoutError, aiohttp.ClientError) as err:
                raise self._translate(err, what="list the job's pods") from err
            if replica not in {kind.replica_of_pod(pod) for pod in pods}:
                raise unknown_replica(name, replica, replicas)
        api = await self.log_api()
        merger = LogMerger(
            api,
            self.namespace,
            name,
            kind=kind,
            list_pods=lambda: self._pods(kind.pod_selector(name)),
            finished=finished,
            replica=replica,
            follow=follow,
            tail=tail,
            previous=previous,
            since=since,
            timeout=api.stream_timeout,
            archive=archived,
            replicas=replicas,
            timestamps=timestamps,
            keep_stamps=keep_stamps,
        )
        try:
            async for chunk in merger.chunks():
                yield chunk
        except (ApiException, OSError, TimeoutError, aiohttp.ClientError) as err:
            raise self._translate(err, what="read pod logs") from err

    async def close(self) -> None:
        await self.progress_watcher.close()
        for other in self._others.values():
            await other.progress_watcher.close()
            if other._api is not None and other._api is not self._api:
                await other._api.close()  # made before this one's connection was
            other._api = None
            if other._log_api is not None:
                await other._log_api.close()
                other._log_api = None
        if self._api is not None:
            await self._api.close()
            self._api = None
        if self._log_api is not None:
            await self._log_api.close()
            self._log_api = None
