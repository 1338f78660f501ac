"""The kubelets under the fake API server: what happens to a pod once it is bound to a
node - its containers' states, restarts, phase and conditions (``PodStatus`` as the kubelet
reports it), and their logs (one ``LogInstance`` per run, the previous run kept for
``previous=true``, followers woken as lines arrive) - and the nodes it runs on, whose
kubelet may stop answering.

Written from the kubelet's behaviour in ``shared/notes/fake-kube.md`` (container states
and the log errors as measured on v1.20.2, ``realcluster.md``), never from our own code.
The API server (``server.py``) owns the pods as objects and checks a log request before it
reaches ``container_log``; the controllers (``operator.py``, ``trainer.py``) step the
kubelet through ``set_state`` and the hooks below, which ``FakeKube`` also offers tests
under the same names.
"""

from __future__ import annotations

import asyncio
import copy
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .api import KubeError, Stream, abort
from .logs import LogInstance, parse_rfc3339, rfc3339

if TYPE_CHECKING:
    from .server import FakeKube

# Log bytes rendered and written at a time.
LOG_CHUNK = 1 << 20
# The kubelet's back-off between restarts of a crashing container: 10 s doubling, at most
# 5 min (kubelet v1.20.2 pkg/kubelet/kubelet.go:133-134 MaxContainerBackOff, :163
# backOffPeriod, :743 flowcontrol.NewBackOff; notes/operator.md §9).
BACK_OFF_START, BACK_OFF_MAX = 10, 300


@dataclass
class BackOffEntry:
    """The kubelet's back-off entry of one container (client-go util/flowcontrol/backoff.go
    at v1.20.2: ``backoffEntry``): the wait a crash now costs, and when it last moved on."""

    backoff: int
    last_update: float


def back_off_text(seconds: int) -> str:
    """A Go duration as the kubelet prints it: 10s, 1m20s, 5m0s."""
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


class Runtime:
    """One container's log instances and followers."""

    def __init__(self) -> None:
        self.current = LogInstance()
        self.previous: LogInstance | None = None
        self.followers: set[Stream] = set()

    def wake(self) -> None:
        for stream in self.followers:
            stream.wake.set()


@dataclass(frozen=True)
class LogOptions:
    """A pod log request's ``PodLogOptions``, validated by the API server."""

    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_ns: int | None = None


def container_names(pod: dict[str, Any]) -> list[str]:
    """Every container of the pod, init containers first."""
    spec = pod.get("spec") or {}
    return [c["name"] for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]


def container_status(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    """The pod's status entry for ``container`` (init or regular), None before one."""
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for entry in status.get(key) or []:
            if entry.get("name") == container:
                return entry  # type: ignore[no-any-return]
    return None


def pod_conditions(pod: dict[str, Any]) -> None:
    """The conditions the kubelet reports from its containers' states (a bound pod)."""
    spec, status = pod["spec"], pod["status"]
    if not spec.get("nodeName"):
        return
    now = rfc3339()
    inits = status.get("initContainerStatuses") or []
    mains = status.get("containerStatuses") or []
    initialized = all(
        (e.get("state") or {}).get("terminated", {}).get("exitCode") == 0 for e in inits
    )
    ready = bool(mains) and all("running" in (e.get("state") or {}) for e in mains)
    old = {c["type"]: c for c in status.get("conditions") or []}
    conditions = []
    for kind, value in (
        ("Initialized", initialized),
        ("Ready", ready),
        ("ContainersReady", ready),
        ("PodScheduled", True),
    ):
        text = "True" if value else "False"
        prior = old.get(kind)
        since = prior["lastTransitionTime"] if prior and prior["status"] == text else now
        conditions.append(
            {"type": kind, "status": text, "lastProbeTime": None, "lastTransitionTime": since}
        )
    status["conditions"] = conditions


class Kubelet:
    """Every node's kubelet: the containers' runs and logs, the pods' status."""

    def __init__(self, fake: FakeKube) -> None:
        self.fake = fake
        self.runtimes: dict[tuple[str, str, str], Runtime] = {}
        # Nodes pods can be on; a pod whose node is gone has no readable log (404).
        self.nodes: set[str] = set()
        # Nodes whose kubelet does not answer (down, or its port unreachable): the node
        # and its pods stay, their logs cannot be fetched (500).
        self.kubelets_down: set[str] = set()
        # Each container's back-off entry, by pod uid and container (the kubelet keys it
        # by pod and container, getStableKey, kuberuntime_manager.go:885).
        self.back_offs: dict[tuple[str, str], BackOffEntry] = {}

    def runtime(self, ns: str, pod: str, container: str) -> Runtime:
        """The container's runs (created on first use)."""
        return self.runtimes.setdefault((ns, pod, container), Runtime())

    def init_pod(self, pod: dict[str, Any]) -> None:
        """Give a new pod the statuses the kubelet would report once it is scheduled."""
        spec = pod.setdefault("spec", {})
        status = pod.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", "BestEffort")
        if not spec.get("nodeName"):
            return
        self.nodes.add(spec["nodeName"])  # a pod is only bound to a node that exists
        status.setdefault("startTime", rfc3339())
        waiting = "PodInitializing" if spec.get("initContainers") else "ContainerCreating"
        for key, ckey in (
            ("initContainers", "initContainerStatuses"),
            ("containers", "containerStatuses"),
        ):
            existing = {e["name"] for e in status.get(ckey) or []}
            for c in spec.get(key) or []:
                if c["name"] not in existing:
                    status.setdefault(ckey, []).append({
                        "name": c["name"], "image": c.get("image", ""), "imageID": "",
                        "ready": False, "restartCount": 0, "started": False,
                        "state": {"waiting": {"reason": waiting}}, "lastState": {},
                    })  # fmt: skip
        pod_conditions(pod)

    def on_pod_deleted(self, pod: dict[str, Any]) -> None:
        """The pod is gone: its containers' logs end (followers see the end)."""
        meta = pod["metadata"]
        for name in container_names(pod):
            self.back_offs.pop((meta.get("uid", ""), name), None)
            runtime = self.runtimes.pop((meta["namespace"], meta["name"], name), None)
            if runtime:
                runtime.current.closed = True
                runtime.wake()

    def _pod_and_status(
        self, ns: str, pod: str, container: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The pod and the container's status entry; a hook stepping a pod on no node
        binds it to ``node-1`` first."""
        obj = self.fake.get("pods", ns, pod)
        if obj is None:
            raise KeyError(f"no pod {ns}/{pod}")
        if not obj["spec"].get("nodeName"):
            obj["spec"]["nodeName"] = "node-1"
            obj["status"].pop("conditions", None)
            self.init_pod(obj)
        entry = container_status(obj, container)
        if entry is None:
            raise KeyError(f"pod {ns}/{pod} has no container {container}")
        return obj, entry

    def set_state(self, pod: dict[str, Any], entry: dict[str, Any], state: dict[str, Any]) -> None:
        """The container's new ``state``, and what follows from it: started/ready, the pod's
        phase and conditions (a MODIFIED event)."""
        old = copy.deepcopy(pod)
        entry["state"] = state
        running = "running" in state
        entry["started"] = running
        is_init = entry in (pod["status"].get("initContainerStatuses") or [])
        entry["ready"] = running and not is_init
        if running or "terminated" in state:
            entry.setdefault("containerID", f"containerd://{uuid.uuid4().hex}")
        mains = pod["status"].get("containerStatuses") or []
        if running and not is_init and pod["status"].get("phase") == "Pending":
            pod["status"]["phase"] = "Running"
        elif mains and all("terminated" in (e.get("state") or {}) for e in mains):
            codes = [e["state"]["terminated"].get("exitCode") for e in mains]
            pod["status"]["phase"] = "Succeeded" if all(c == 0 for c in codes) else "Failed"
        pod_conditions(pod)
        self.fake._emit("pods", "MODIFIED", pod, old)

    async def container_log(
        self, request: web.Request, pod: dict[str, Any], container: str, options: LogOptions
    ) -> web.StreamResponse:
        """The kubelet's answer to ``containerLogs`` once the API server has checked the
        request: the current run's log, or the previous one (``previous``, or while the
        container waits to restart), followed until the run ends; the kubelet's 400s for
        a container that has no such log yet."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        runtime = self.runtime(ns, name, container)
        status = container_status(pod, container)
        state = (status or {}).get("state") or {}
        if options.previous:
            if runtime.previous is None:
                raise KubeError(
                    400, f'previous terminated container "{container}" in pod "{name}" not found'
                )
            instance = runtime.previous
        elif "running" in state or "terminated" in state:
            instance = runtime.current
        elif runtime.previous is not None:  # waiting to restart: the last run's log
            instance = runtime.previous
        else:
            reason = (state.get("waiting") or {}).get("reason")
            text = {
                "ErrImagePull": "image can't be pulled",
                "ImagePullBackOff": "trying and failing to pull image",
            }.get(reason or "", reason)
            if reason is None:
                raise KubeError(
                    400,
                    f'container "{container}" in pod "{name}" is waiting to start - no logs yet',
                )
            raise KubeError(
                400, f'container "{container}" in pod "{name}" is waiting to start: {text}'
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        if options.follow:
            resp.enable_chunked_encoding()
        budget = [options.limit_bytes if options.limit_bytes is not None else -1]

        async def send(start: int, end: int) -> bool:
            """Write ``[start, end)``; False once ``limitBytes`` is spent."""
            for pos in range(start, end, LOG_CHUNK):
                data = instance.render(
                    pos, min(end, pos + LOG_CHUNK), timestamps=options.timestamps
                )
                if budget[0] >= 0:
                    data = data[: budget[0]]
                    budget[0] -= len(data)
                if data:
                    await resp.write(data)
                if budget[0] == 0:
                    return False
            return True

        pos = instance.start_offset(since_ns=options.since_ns, tail_lines=options.tail_lines)
        end = len(instance.data)
        # A client gone (even before the headers) ends the answer quietly, as the API
        # server's StreamObject (responsewriters/writers.go) drops io.Copy's error.
        try:
            await resp.prepare(request)
            if not await send(pos, end) or not options.follow:
                return resp
            stream = Stream(request)
            runtime.followers.add(stream)
            self.fake.streams.add(stream)
            try:
                pos = end
                while True:
                    stream.wake.clear()
                    if pos == len(instance.data) and not instance.closed and not stream.closing:
                        await stream.wake.wait()
                    if stream.dropped:
                        return abort(request, resp)
                    end = len(instance.data)
                    if not await send(pos, end):
                        return resp
                    pos = end
                    if instance.closed or stream.closing:
                        return resp
            finally:
                runtime.followers.discard(stream)
                self.fake.streams.discard(stream)
        except (ConnectionError, asyncio.CancelledError):
            return resp

    def append_log(
        self, ns: str, pod: str, container: str, data: bytes | str, at_ns: int | None = None
    ) -> None:
        """Write to the container's log; marks it running and wakes followers. ``at_ns``:
        when the runtime read it (the stamp of its lines), by default now."""
        obj, entry = self._pod_and_status(ns, pod, container)
        runtime = self.runtime(ns, pod, container)
        if "running" not in (entry.get("state") or {}):
            if "terminated" in (entry.get("state") or {}) or runtime.current.data:
                self.restart(ns, pod, container)
                obj, entry = self._pod_and_status(ns, pod, container)
            else:
                self.set_state(obj, entry, {"running": {"startedAt": rfc3339()}})
        runtime.current.append(data.encode() if isinstance(data, str) else bytes(data), at_ns)
        runtime.wake()

    def terminate(
        self, ns: str, pod: str, container: str, exit_code: int = 0, reason: str | None = None
    ) -> None:
        """End the container's current run; follow streams end."""
        obj, entry = self._pod_and_status(ns, pod, container)
        started = (entry.get("state") or {}).get("running", {}).get("startedAt") or rfc3339()
        terminated = {
            "exitCode": exit_code,
            "reason": reason or ("Completed" if exit_code == 0 else "Error"),
            "startedAt": started,
            "finishedAt": rfc3339(),
            "containerID": entry.get("containerID") or f"containerd://{uuid.uuid4().hex}",
        }
        runtime = self.runtime(ns, pod, container)
        runtime.current.closed = True
        self.set_state(obj, entry, {"terminated": terminated})
        runtime.wake()

    def restart(self, ns: str, pod: str, container: str, exit_code: int = 1) -> None:
        """The kubelet restarts the container: current log → previous, restartCount + 1."""
        obj, entry = self._pod_and_status(ns, pod, container)
        if "terminated" not in (entry.get("state") or {}):
            self.terminate(ns, pod, container, exit_code)
            obj, entry = self._pod_and_status(ns, pod, container)
        runtime = self.runtime(ns, pod, container)
        runtime.previous, runtime.current = runtime.current, LogInstance()
        entry["lastState"] = {"terminated": entry["state"]["terminated"]}
        entry["restartCount"] = int(entry.get("restartCount", 0)) + 1
        entry.pop("containerID", None)
        obj["status"]["phase"] = "Running"
        self.set_state(obj, entry, {"running": {"startedAt": rfc3339()}})
        runtime.wake()

    def set_waiting(
        self, ns: str, pod: str, container: str, reason: str, message: str | None = None
    ) -> None:
        """``state.waiting`` (ContainerCreating, ImagePullBackOff, CrashLoopBackOff, ...).
        A run in progress ends first and becomes the previous one, as on a crash."""
        obj, entry = self._pod_and_status(ns, pod, container)
        runtime = self.runtime(ns, pod, container)
        state = entry.get("state") or {}
        if "running" in state or "terminated" in state:
            if "running" in state:
                self.terminate(ns, pod, container, 1)
                obj, entry = self._pod_and_status(ns, pod, container)
            runtime.previous, runtime.current = runtime.current, LogInstance()
            entry["lastState"] = {"terminated": entry["state"]["terminated"]}
            entry["restartCount"] = int(entry.get("restartCount", 0)) + 1
            entry.pop("containerID", None)
        waiting = {"reason": reason} | ({"message": message} if message else {})
        self.set_state(obj, entry, {"waiting": waiting})
        runtime.wake()

    def crash_loop(self, pod: dict[str, Any], container: str) -> None:
        """The container's run has ended and its pod's restartPolicy restarts it in place;
        the pod stays Running and the run's log becomes the previous one. As kubelet
        v1.20.2 decides it (``doBackOff``, pkg/kubelet/kuberuntime/kuberuntime_manager.go:
        868-897, over client-go util/flowcontrol/backoff.go:71-103,147-149): a container
        without a back-off entry (its first crash, or none moved on for twice the longest
        wait before this crash ended: ``hasExpired``) is started again at once and gets
        an entry of 10 s (``Next``); one with an entry waits in CrashLoopBackOff,
        "back-off <entry>", until ``back_off_over``, which doubles it (at most 5 min).
        restartCount is the restarts done: the new container's, its predecessor's + 1
        (kuberuntime_container.go:146-151), so it stays during a wait (kubelet_pods.go:1621
        reads the newest container's)."""
        ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
        entry = container_status(pod, container) or {}
        runtime = self.runtime(ns, pname, container)
        runtime.previous, runtime.current = runtime.current, LogInstance()
        terminated = entry["state"]["terminated"]
        entry["lastState"] = {"terminated": terminated}
        entry.pop("containerID", None)
        pod["status"]["phase"] = "Running"
        key = (pod["metadata"]["uid"], container)
        back_off = self.back_offs.get(key)
        ended = parse_rfc3339(terminated["finishedAt"]) / 1e9
        if back_off is None or ended - back_off.last_update > 2 * BACK_OFF_MAX:
            self.back_offs[key] = BackOffEntry(BACK_OFF_START, time.time())
            self._start_again(pod, entry)
            return
        message = (
            f"back-off {back_off_text(back_off.backoff)} restarting failed "
            f"container={container} pod={pname}_{ns}({pod['metadata']['uid']})"
        )
        self.set_state(pod, entry, {"waiting": {"reason": "CrashLoopBackOff", "message": message}})
        runtime.wake()

    @staticmethod
    def in_back_off(pod: dict[str, Any], container: str) -> bool:
        """Whether the container waits in CrashLoopBackOff (``back_off_over`` ends it)."""
        entry = container_status(pod, container) or {}
        return ((entry.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff"

    @staticmethod
    def restarted(pod: dict[str, Any], container: str, restarts: int) -> bool:
        """Whether the container runs again after ``restarts`` restarts: restarted in
        place at once."""
        entry = container_status(pod, container) or {}
        running = "running" in (entry.get("state") or {})
        return running and int(entry.get("restartCount", 0)) > restarts

    def back_off_over(self, pod: dict[str, Any], container: str) -> None:
        """The back-off has passed: the kubelet starts the container again, and the entry
        doubles (``Next``, backoff.go:71-82)."""
        if not self.in_back_off(pod, container):
            raise ValueError(f"{pod['metadata']['name']} is not in CrashLoopBackOff")
        back_off = self.back_offs[(pod["metadata"]["uid"], container)]
        back_off.backoff = min(2 * back_off.backoff, BACK_OFF_MAX)
        back_off.last_update = time.time()
        self._start_again(pod, container_status(pod, container) or {})

    def _start_again(self, pod: dict[str, Any], entry: dict[str, Any]) -> None:
        """A new container in the pod: running, restartCount + 1."""
        entry["restartCount"] = int(entry.get("restartCount", 0)) + 1
        self.set_state(pod, entry, {"running": {"startedAt": rfc3339()}})
        ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.runtime(ns, pname, entry["name"]).wake()

    def set_pod_phase(
        self, ns: str, pod: str, phase: str, reason: str | None = None, message: str | None = None
    ) -> None:
        obj = self.fake.get("pods", ns, pod)
        if obj is None:
            raise KeyError(f"no pod {ns}/{pod}")
        old = copy.deepcopy(obj)
        obj["status"]["phase"] = phase
        for key, value in (("reason", reason), ("message", message)):
            if value is not None:
                obj["status"][key] = value
        self.fake._emit("pods", "MODIFIED", obj, old)

    def remove_node(self, name: str) -> None:
        """The node is gone (drained and deleted, or lost): its pods' logs cannot be read."""
        self.nodes.discard(name)

    def stop_kubelet(self, node: str) -> None:
        """The node's kubelet stops answering; the node and its pods stay (their logs: 500)."""
        self.kubelets_down.add(node)

    def start_kubelet(self, node: str) -> None:
        self.kubelets_down.discard(node)
