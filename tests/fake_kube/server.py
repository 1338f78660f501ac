"""The fake's API server (see ``shared/notes/fake-kube.md``): what a client reaches through
a kubeconfig - authentication, RBAC (``deny``), routing of the resource paths, the store
with resourceVersions and the garbage collector, admission (type meta, CRD pruning,
defaulting and validation, the operator's and Trainer's webhooks), create / update /
patch / delete with their Status errors, lists with pages, watches with bookmarks and
410 Expired, discovery (``discovery.py``) and the pod log proxy to the kubelet.

The components it serves are beside it, each in its own file: the kubelets
(``kubelet.py``: containers, restarts, logs), the Training Operator v1.9.4
(``operator.py``), Kubeflow Trainer v2.3 with JobSet and Job (``trainer.py``,
``shared/notes/trainjob.md``) and Kueue's Workload (``kueue.py``). ``kinds`` picks the
job kinds the cluster serves: PyTorchJob only, TrainJob only, or both. Tests drive
scenarios with the hook methods of ``FakeKube`` (the kubelet's included) and of its
``operator`` and ``trainer``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
import json
import random
import re
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from .api import (
    BY_KIND,
    CRD_GROUPS,
    KINDS,
    RESOURCES,
    STATUS_SUBRESOURCE,
    KubeError,
    PageNotFound,
    Resource,
    Stream,
    abort,
    int_param,
    invalid,
    not_found,
    parse_bool,
    status_details,
)
from .bodies import check_body, json_patch, merge_patch, read_body
from .discovery import VERSION, discovery
from .kubelet import Kubelet, LogOptions, Runtime
from .logs import parse_rfc3339, rfc3339
from .schema import StructuralSchema, load
from .selectors import SelectorError, matcher

DEFAULT_USER = "system:serviceaccount:team-a:default-editor"
ANONYMOUS = "system:anonymous"
NOT_FOUND_TEXT = "the server could not find the requested resource"
# What the API server answers for a path no API group serves (plain text, not a Status).
PAGE_NOT_FOUND = "404 page not found\n"
# apimachinery's content negotiation: the media types the API serializes to.
ACCEPTED_MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
# apimachinery validation/objectmeta.go: TotalAnnotationSizeLimitB.
ANNOTATIONS_LIMIT = 256 * 1024
# k8s.io/apimachinery/pkg/util/validation: DNS-1123 subdomain, at most 253 characters.
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DEFAULT_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "team-a",
    "team-b",
)
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_PATHS = [
    re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/(?P<res>pods|services|persistentvolumeclaims|events|configmaps)"
               r"(?:/(?P<name>[^/]+)(?:/(?P<sub>log))?)?/?$"),
    re.compile(r"^/api/v1/(?P<res>pods|services|persistentvolumeclaims|events|configmaps)/?$"),
    re.compile(r"^/api/v1/(?P<res>namespaces)(?:/(?P<name>[^/]+))?/?$"),
    re.compile(r"^/apis/kubeflow\.org/v1/namespaces/(?P<ns>[^/]+)/(?P<res>pytorchjobs)"
               r"(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?/?$"),
    re.compile(r"^/apis/kubeflow\.org/v1/(?P<res>pytorchjobs)/?$"),
    re.compile(r"^/apis/trainer\.kubeflow\.org/v1alpha1/namespaces/(?P<ns>[^/]+)/"
               r"(?P<res>trainjobs|trainingruntimes)(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?/?$"),
    re.compile(r"^/apis/trainer\.kubeflow\.org/v1alpha1/(?P<res>clustertrainingruntimes)"
               r"(?:/(?P<name>[^/]+))?/?$"),
    re.compile(r"^/apis/trainer\.kubeflow\.org/v1alpha1/(?P<res>trainjobs|trainingruntimes)/?$"),
    re.compile(r"^/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/(?P<ns>[^/]+)/(?P<res>jobsets)"
               r"(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?/?$"),
    re.compile(r"^/apis/batch/v1/namespaces/(?P<ns>[^/]+)/(?P<res>jobs)"
               r"(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?/?$"),
    re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta1/namespaces/(?P<ns>[^/]+)/(?P<res>workloads)"
               r"(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?/?$"),
]  # fmt: skip
_SUBDOMAIN_TEXT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    r"for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def default_schemas() -> dict[str, StructuralSchema | None]:
    """The PyTorchJob and Trainer CRDs' schemas from ``../shared/crds`` (None in a bare
    clone), built once per process (read-only: pruning and validation do not change them)."""
    return dict(_default_schemas())


@functools.cache
def _default_schemas() -> dict[str, StructuralSchema | None]:
    from .trainer import read_yaml, trainer_schemas

    try:
        from tests.crd import CRDS_DIR
    except ImportError:
        return {"pytorchjobs": None}
    path = Path(CRDS_DIR) / "kubeflow.org_pytorchjobs.yaml"
    crd = read_yaml(path) if path.exists() else None
    schemas = {"pytorchjobs": load(crd, "v1")}
    for plural, schema in trainer_schemas().items():
        schemas[plural] = StructuralSchema(schema) if schema else None
    return schemas


# The custom resources whose CRD defaults the fake applies (``default:`` in the schema).
DEFAULTED = {"trainjobs", "trainingruntimes", "clustertrainingruntimes"}


@dataclass
class _Injection:
    pattern: re.Pattern[str]
    status: int
    times: int
    retry_after: int | None


class FakeKube:
    """The fake API server and its test hooks. ``await FakeKube.start()`` to run it."""

    def __init__(
        self,
        *,
        operator: bool = False,
        history: int = 1000,
        validator: Callable[[dict[str, Any]], list[tuple[str, str]]] | None = None,
        user: str = DEFAULT_USER,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
        schemas: Mapping[str, StructuralSchema | None] | None = None,
        kinds: Iterable[str] = ("pytorchjob", "trainjob"),
        trainer: bool = True,
        kueue: bool = True,
    ) -> None:
        from .operator import Operator, default_validator
        from .trainer import Trainer

        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {r: {} for r in RESOURCES}
        self.resource_version = 100
        self.history: deque[tuple[int, str, str, str, dict[str, Any], Any]] = deque(maxlen=history)
        self._floor = 0
        self.streams: set[Stream] = set()
        self.access_log: list[tuple[str, str, dict[str, str]]] = []
        self.denials: list[tuple[str, str, str, str | None]] = []
        self.token: str | None = None
        self.injections: list[_Injection] = []
        self.pruned: list[tuple[str, str, list[str]]] = []
        # The API groups of the CRDs installed (``kinds``; remove_crd/restore_crd).
        self.served_groups = {g for kind in kinds for g in KINDS[kind]}
        if kueue:
            self.served_groups.add("kueue.x-k8s.io")
        self.latency = 0.0
        self.bookmark_interval = 60.0
        self.user = user
        self.validator = validator or default_validator
        # NamespaceLifecycle admission: creating in a namespace that does not exist is a 404.
        self.namespaces = set(namespaces)
        # The nodes' kubelets: containers' runs and logs, pods' status.
        self.kubelet = Kubelet(self)
        # Structural schemas of the custom resources (pruning + validation), when the
        # real CRDs are beside the checkout.
        self.schemas = dict(schemas) if schemas is not None else default_schemas()
        self.operator = Operator(self, enabled=operator)
        # The Trainer controller + JobSet + Job controllers; runtimes shipped as seeded.
        self.trainer = Trainer(self, enabled=trainer)
        if "trainer.kubeflow.org" in self.served_groups:
            self.trainer.seed_runtimes()
        self.host = "127.0.0.1"
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def crd_installed(self) -> bool:
        """Whether the PyTorchJob CRD is installed."""
        return "kubeflow.org" in self.served_groups

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    async def start(cls, *, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> FakeKube:
        fake = cls(**kwargs)
        await fake.serve(host=host, port=port)
        return fake

    async def serve(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=2.0, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.host = host
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        for stream in list(self.streams):
            stream.closing = True
            stream.wake.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def write_kubeconfig(
        self, path: str | Path, namespace: str = "team-a", token: str | None = "dummy-token"
    ) -> Path:
        user: dict[str, Any] = {"token": token} if token else {}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "tester", "user": user}],
            "contexts": [
                {
                    "name": "fake",
                    "context": {"cluster": "fake", "user": "tester", "namespace": namespace},
                }
            ],
            "current-context": "fake",
        }
        path = Path(path)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    # -- store -------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects[resource].get((namespace, name))

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str = ""
    ) -> list[dict[str, Any]]:
        match = matcher(label_selector, "", resource)
        return [
            obj
            for (ns, _), obj in sorted(self.objects[resource].items())
            if (namespace is None or ns == namespace) and match(obj)
        ]

    def _emit(self, resource: str, kind: str, obj: dict[str, Any], old: Any = None) -> None:
        self.resource_version += 1
        obj["metadata"]["resourceVersion"] = str(self.resource_version)
        ns = obj["metadata"].get("namespace", "")
        key = (ns, obj["metadata"]["name"])
        if kind == "DELETED":
            self.objects[resource].pop(key, None)
        else:
            self.objects[resource][key] = obj
        snapshot = copy.deepcopy(obj)
        if len(self.history) == self.history.maxlen:
            self._floor = self.history[0][0]
        self.history.append((self.resource_version, resource, ns, kind, snapshot, old))
        for stream in self.streams:
            if stream.resource == resource and stream.namespace in (None, ns):
                stream.queue.append((kind, snapshot, old))
                stream.wake.set()

    def _new_meta(self, res: Resource, obj: dict[str, Any], namespace: str) -> dict[str, Any]:
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            suffix = "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
            meta["name"] = meta["generateName"] + suffix
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", rfc3339())
        meta.setdefault("generation", 1)
        for key in ("resourceVersion", "deletionTimestamp", "managedFields"):
            meta.pop(key, None)
        return meta

    def _stored(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new object (no checks) and run what controllers do on create."""
        meta = obj.setdefault("metadata", {})
        self._new_meta(RESOURCES[resource], obj, meta.get("namespace") or "team-a")
        if resource == "pods":
            self.kubelet.init_pod(obj)
        self._emit(resource, "ADDED", obj)
        return obj

    def _delete(self, resource: str, obj: dict[str, Any], propagation: str = "Background") -> None:
        meta = obj["metadata"]
        if resource == "pods":
            self.kubelet.on_pod_deleted(obj)
        self._emit(resource, "DELETED", obj, copy.deepcopy(obj))
        if propagation != "Orphan":
            try:  # the garbage collector runs after the delete has been answered
                asyncio.get_running_loop().call_soon(self._collect, meta.get("uid"))
            except RuntimeError:
                self._collect(meta.get("uid"))

    def _collect(self, uid: str | None) -> None:
        """The garbage collector: remove objects whose ownerReferences name ``uid``."""
        for resource, objects in self.objects.items():
            for obj in list(objects.values()):
                owners = obj["metadata"].get("ownerReferences") or []
                if uid and any(o.get("uid") == uid for o in owners):
                    self._delete(resource, obj)

    # -- HTTP --------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        query = dict(request.query)
        if request.path.startswith("/_fake/"):
            return await self._control(request)
        self.access_log.append((request.method, request.path, query))
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            self._check_injections(request.path)
            return await self._route(request, query, self._authenticate(request))
        except KubeError as err:
            return err.response()
        except PageNotFound:
            return web.Response(status=404, text=PAGE_NOT_FOUND, content_type="text/plain")
        except SelectorError as err:
            return KubeError(400, str(err)).response()

    def _authenticate(self, request: web.Request) -> str:
        """The user a request acts as. No credentials at all: ``system:anonymous`` (the
        API server's default; RBAC then refuses it with 403). Credentials that are not
        accepted: 401."""
        header = request.headers.get("Authorization")
        if header is None:
            return ANONYMOUS
        if self.token is not None and header != f"Bearer {self.token}":
            raise KubeError(401, "Unauthorized")
        return self.user

    @staticmethod
    def _negotiate(request: web.Request, *, watch: bool = False) -> None:
        """apimachinery's output negotiation: 406 unless ``Accept`` names a media type the
        API serializes to (pod logs included: ``text/plain`` is refused)."""
        header = request.headers.get("Accept", "")
        if not header.strip():
            return
        for media in header.split(","):
            kind = media.split(";")[0].strip().lower()
            if kind in ("*/*", "application/*", *ACCEPTED_MEDIA):
                return
        raise KubeError(
            406, "only the following media types are accepted: " + ", ".join(ACCEPTED_MEDIA)
        )

    def _check_injections(self, path: str) -> None:
        for injection in self.injections:
            if injection.times and injection.pattern.search(path):
                injection.times -= 1
                if injection.status == 429:
                    err = KubeError(429, "Too many requests, please try again later.")
                    if injection.retry_after is not None:
                        err.details = {"retryAfterSeconds": injection.retry_after}
                else:
                    err = KubeError(injection.status, "Internal error occurred: injected fault")
                if injection.retry_after is not None:
                    err.headers["Retry-After"] = str(injection.retry_after)
                raise err

    async def _route(
        self, request: web.Request, query: dict[str, str], user: str
    ) -> web.StreamResponse:
        path = request.path
        if path.rstrip("/") == "/version":  # system:public-info-viewer: anyone may read it
            return web.json_response(VERSION)
        resource_path = any(p.match(path) for p in _PATHS)
        if user == ANONYMOUS and not resource_path:
            raise KubeError(403, f'forbidden: User "{ANONYMOUS}" cannot get path "{path}"')
        document = discovery(path.rstrip("/"), self.served_groups, f"{self.host}:{self.port}")
        if document is not None:
            return web.json_response(document)
        for pattern in _PATHS:
            match = pattern.match(path)
            if match:
                break
        else:
            raise PageNotFound
        parts = match.groupdict()
        resource, ns, name, sub = parts["res"], parts.get("ns"), parts.get("name"), parts.get("sub")
        res = RESOURCES[resource]
        if res.group in CRD_GROUPS and res.group not in self.served_groups:
            raise PageNotFound  # no API group serves the path: not even a Status
        method = request.method
        if resource == "namespaces":
            # requestinfo.go (apiserver/pkg/endpoints/request, v1.20.2 NewRequestInfo): for
            # /api/v1/namespaces/{name} the namespace *is* the name, so a RoleBinding in
            # that namespace can grant reading it.
            ns = name
        watch = parse_bool(query.get("watch"))
        if name is None:
            verb = {"GET": "watch" if watch else "list", "POST": "create"}.get(method)
        else:
            verb = "get" if method == "GET" else _VERBS.get(method)
        if verb is None or (name is None and ns is None and verb == "create" and res.namespaced):
            raise KubeError(405, "the server does not allow this method on the requested resource")
        self._authorize(verb, res, f"{resource}/{sub}" if sub else resource, ns, name, user)
        self._negotiate(request)
        if sub == "log":
            return await self._pod_log(request, ns or "", name or "", query)
        if resource == "namespaces":
            return self._namespaces(method, name)
        if name is None:
            if method == "POST":
                return await self._create(request, res, ns or "", query)
            match_fn = matcher(
                query.get("labelSelector", ""), query.get("fieldSelector", ""), resource
            )
            if watch:
                return await self._watch(request, resource, ns, match_fn, query)
            return self._list(resource, ns, match_fn, query)
        obj = self.get(resource, ns or "", name)
        if obj is None:
            raise not_found(res, name)
        if method == "GET":
            return web.json_response(obj)
        if method == "DELETE":
            return await self._delete_request(request, res, obj, query)
        return await self._update(request, res, obj, sub, query)

    def _authorize(
        self,
        verb: str,
        res: Resource,
        resource: str,
        ns: str | None,
        name: str | None,
        user: str,
    ) -> None:
        denied = user == ANONYMOUS or any(
            d_verb in (verb, "*")
            and d_group == res.group
            and d_resource in (resource, "*")
            and d_ns in (None, ns)
            for d_verb, d_group, d_resource, d_ns in self.denials
        )
        if denied:
            subject = f'{res.qualified} "{name}"' if name else res.qualified
            scope = f'in the namespace "{ns}"' if ns else "at the cluster scope"
            raise KubeError(
                403,
                f'{subject} is forbidden: User "{user}" cannot {verb} resource '
                f'"{resource}" in API group "{res.group}" {scope}',
                details=status_details(res, name),
            )

    def _list(
        self, resource: str, ns: str | None, match: Callable[..., bool], query: dict[str, str]
    ) -> web.Response:
        res = RESOURCES[resource]
        items = [obj for obj in self.list(resource, ns) if match(obj)]
        meta: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        start = 0
        if query.get("continue"):
            try:
                start = json.loads(base64.urlsafe_b64decode(query["continue"]))["start"]
            except ValueError:
                raise KubeError(400, "continue key is not valid: illegal base64 data") from None
        limit = int_param(query, "limit")
        end = start + limit if limit else len(items)
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"start": end}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - end
        page = items[start:end]
        if not res.group:  # core lists carry no apiVersion/kind per item
            page = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        body = {"apiVersion": res.api_version, "kind": f"{res.kind}List", "metadata": meta}
        return web.json_response(body | {"items": page})

    def _namespaces(self, method: str, name: str | None) -> web.Response:
        """GET a namespace (404 ``namespaces "X" not found`` when there is none) or the
        list; the fake's namespaces are fixed by ``namespaces=``/``add_namespace``."""
        if method != "GET":
            raise KubeError(405, "the server does not allow this method on the requested resource")
        if name is not None and name not in self.namespaces:
            raise not_found(RESOURCES["namespaces"], name)

        def namespace(ns: str) -> dict[str, Any]:
            return {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": ns,
                    "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, ns)),
                    "resourceVersion": "1",
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "labels": {"kubernetes.io/metadata.name": ns},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }

        if name is not None:
            return web.json_response(namespace(name))
        items = [namespace(ns) for ns in sorted(self.namespaces)]
        meta = {"resourceVersion": str(self.resource_version)}
        return web.json_response(
            {"apiVersion": "v1", "kind": "NamespaceList", "metadata": meta, "items": items}
        )

    def _prune(self, res: Resource, obj: dict[str, Any]) -> None:
        """Drop what the CRD's structural schema does not declare - silently, as the API
        server does (no error, no warning on this server version)."""
        schema = self.schemas.get(res.plural)
        if schema is not None:
            dropped = schema.prune(obj)
            if dropped:  # for tests: what a client sent that the CRD does not declare
                self.pruned.append((res.plural, obj["metadata"].get("name", ""), dropped))

    def _default(self, res: Resource, obj: dict[str, Any]) -> None:
        schema = self.schemas.get(res.plural)
        if schema is not None and res.plural in DEFAULTED:
            schema.default(obj)

    def _validate(self, res: Resource, obj: dict[str, Any], old: Any = None) -> None:
        meta = obj["metadata"]
        name = meta.get("name") or ""
        if not name:
            raise invalid(
                res, "", [("metadata.name", "Required value: name or generateName is required")]
            )
        errors: list[tuple[str, str]] = []
        if res.plural != "events" and (len(name) > 253 or not DNS1123_SUBDOMAIN.fullmatch(name)):
            errors.append(("metadata.name", f'Invalid value: "{name}": {_SUBDOMAIN_TEXT}'))
        annotations = meta.get("annotations") or {}
        if isinstance(annotations, dict):
            size = sum(len(str(k)) + len(str(v)) for k, v in annotations.items())
            if size > ANNOTATIONS_LIMIT:
                errors.append(
                    (
                        "metadata.annotations",
                        f"Too long: must have at most {ANNOTATIONS_LIMIT} bytes",
                    )
                )
        schema = self.schemas.get(res.plural)
        if schema is not None:
            errors += schema.errors(obj)
            if not errors:  # the CRD's CEL rules run on a well-typed object
                errors += self.trainer.schema_rules(res.plural, obj, old)
        if res.plural == "pytorchjobs" and not errors:
            errors += self.validator(obj)  # the operator's validating webhook runs last
        if errors:
            raise invalid(res, name, errors)
        if res.plural == "trainjobs":
            # Validating admission runs after the schema; the Trainer webhook answers a
            # plain error list, which the API server passes on as 403 (trainer.py).
            denied = self.trainer.webhook(obj, old)
            if denied:
                from .trainer import WEBHOOK

                text = denied[0] if len(denied) == 1 else "[" + ", ".join(denied) + "]"
                raise KubeError(403, f'admission webhook "{WEBHOOK}" denied the request: {text}')

    async def _create(
        self, request: web.Request, res: Resource, ns: str, query: dict[str, str]
    ) -> web.Response:
        obj = check_body(res, await read_body(request), ns)
        dry_run = query.get("dryRun")
        if dry_run not in (None, "All"):
            # apimachinery ValidateDryRun, reported against CreateOptions.
            raise KubeError(
                422,
                f'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                f'[]string{{"{dry_run}"}}: supported values: "All"',
                details={"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [
                    {"reason": "FieldValueNotSupported", "field": "dryRun",
                     "message": f'Unsupported value: []string{{"{dry_run}"}}: supported '
                                'values: "All"'}]},
            )  # fmt: skip
        if res.namespaced and ns not in self.namespaces:
            raise KubeError(
                404, f'namespaces "{ns}" not found', details={"name": ns, "kind": "namespaces"}
            )
        self._new_meta(res, obj, ns)
        if res.plural in STATUS_SUBRESOURCE:
            obj.pop("status", None)  # the status subresource ignores it on create
        self._prune(res, obj)
        self._default(res, obj)
        self._validate(res, obj)
        name = obj["metadata"]["name"]
        if self.get(res.plural, ns, name) is not None:
            raise KubeError(
                409,
                f'{res.qualified} "{name}" already exists',
                "AlreadyExists",
                status_details(res, name),
            )
        if dry_run:
            return web.json_response(obj, status=201)
        self._stored(res.plural, obj)
        if res.plural == "pytorchjobs" and self.operator.enabled:
            self.operator.on_created(obj)
        answer = copy.deepcopy(obj)  # as stored, before the Trainer controller reacts
        if res.plural == "trainjobs":
            self.trainer.on_written(obj)
        return web.json_response(answer, status=201)

    async def _update(
        self,
        request: web.Request,
        res: Resource,
        old: dict[str, Any],
        sub: str | None,
        query: dict[str, str],
    ) -> web.Response:
        name, ns = old["metadata"]["name"], old["metadata"]["namespace"]
        body = await read_body(request)
        if request.method == "PATCH":
            ctype = request.content_type
            if ctype == "application/json-patch+json":
                if not isinstance(body, list):  # what kubernetes_asyncio sends for a dict body
                    raise KubeError(
                        400,
                        f"json: cannot unmarshal {type(body).__name__.replace('dict', 'object')} "
                        "into Go value of type jsonpatch.Patch",
                    )
                new = json_patch(old, body)
            elif ctype == "application/merge-patch+json" or (
                ctype == "application/strategic-merge-patch+json" and not res.group
            ):
                new = merge_patch(old, body)
            else:
                raise KubeError(
                    415,
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml",
                )
            rv = (new.get("metadata") or {}).get("resourceVersion")
        else:
            new = check_body(res, body, ns)
            if (new.get("metadata") or {}).get("name") not in (None, name):
                raise KubeError(
                    400,
                    f"the name of the object ({new['metadata']['name']}) does not match the name "
                    f"on the URL ({name})",
                )
            rv = (new.get("metadata") or {}).get("resourceVersion")
            if not rv:
                raise invalid(
                    res,
                    name,
                    [
                        (
                            "metadata.resourceVersion",
                            "Invalid value: 0x0: must be specified for an update",
                        )
                    ],
                )
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise KubeError(
                409,
                f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again",
                details=status_details(res, name),
            )
        new = copy.deepcopy(new)
        new["apiVersion"], new["kind"] = res.api_version, res.kind
        meta = new.setdefault("metadata", {})
        for key in (
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
        ):
            if key in old["metadata"]:
                meta[key] = old["metadata"][key]
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        if res.plural in STATUS_SUBRESOURCE:
            if sub == "status":  # only the status changes through the status subresource
                new = {k: v for k, v in old.items() if k != "status"} | {
                    "status": new.get("status")
                }
            elif "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if new.get("spec") != old.get("spec"):
            meta["generation"] = int(old["metadata"].get("generation", 1)) + 1
        if query.get("dryRun") == "All" or new == old:
            return web.json_response(new)
        self._prune(res, new)
        self._default(res, new)
        self._validate(res, new, old)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._delete(res.plural, new)
        else:
            self._emit(res.plural, "MODIFIED", new, copy.deepcopy(old))
            if res.plural == "pytorchjobs" and sub != "status" and self.operator.enabled:
                self.operator.on_updated(new)  # e.g. runPolicy.suspend
            answer = copy.deepcopy(new)
            if res.plural == "trainjobs" and sub != "status":
                self.trainer.on_written(new)  # e.g. spec.suspend
            return web.json_response(answer)
        return web.json_response(new)

    async def _delete_request(
        self, request: web.Request, res: Resource, obj: dict[str, Any], query: dict[str, str]
    ) -> web.Response:
        options = await read_body(request) or {}
        meta = obj["metadata"]
        preconditions = options.get("preconditions") or {}
        for key in ("uid", "resourceVersion"):
            if preconditions.get(key) not in (None, meta.get(key)):
                raise KubeError(
                    409,
                    f"Precondition failed: {key} in precondition: {preconditions[key]}, "
                    f"{key} in object meta: {meta.get(key)}",
                    details=status_details(res, meta["name"]),
                )
        if query.get("dryRun") == "All" or options.get("dryRun") == ["All"]:
            return web.json_response(obj)
        propagation = (
            options.get("propagationPolicy") or query.get("propagationPolicy") or "Background"
        )
        if meta.get("finalizers"):
            if not meta.get("deletionTimestamp"):
                old = copy.deepcopy(obj)
                meta["deletionTimestamp"] = rfc3339()
                meta["deletionGracePeriodSeconds"] = 0
                self._emit(res.plural, "MODIFIED", obj, old)
            return web.json_response(obj)
        self._delete(res.plural, obj, propagation)
        if res.returns_deleted:
            return web.json_response(obj)
        details = status_details(res, meta["name"]) | {"uid": meta.get("uid")}
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
        return web.json_response(status | {"details": details})

    # -- watch -------------------------------------------------------------------------

    async def _watch(
        self,
        request: web.Request,
        resource: str,
        ns: str | None,
        match: Callable[[Mapping[str, Any]], bool],
        query: dict[str, str],
    ) -> web.StreamResponse:
        rv_text = query.get("resourceVersion", "")
        timeout = int_param(query, "timeoutSeconds")
        bookmarks = parse_bool(query.get("allowWatchBookmarks"))
        if rv_text not in ("", "0") and not rv_text.isdigit():
            # The watch cache's ParseResourceVersion returns a storage error that is not a
            # metav1.Status: the server answers it as a 500 with reason Unknown.
            raise KubeError(
                500,
                f'resourceVersion: Invalid value: "{rv_text}": strconv.ParseUint: parsing '
                f'"{rv_text}": invalid syntax',
                "Unknown",
            )
        # The oldest resourceVersion the watch cache can start from.
        oldest = max(self._floor, self.history[0][0] - 1 if self.history else self.resource_version)
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        pending: list[tuple[str, dict[str, Any]]] = []
        if rv_text in ("", "0"):
            pending = [("ADDED", o) for o in self.list(resource, ns) if match(o)]
        elif int(rv_text) < oldest:
            expired = KubeError(
                410, f"too old resource version: {rv_text} ({oldest})", "Expired"
            ).body()
            await resp.write(json.dumps({"type": "ERROR", "object": expired}).encode() + b"\n")
            return resp
        else:
            for rv, r, obj_ns, kind, obj, old in self.history:
                if rv > int(rv_text) and r == resource and ns in (None, obj_ns):
                    pending.extend(self._translate(kind, obj, old, match))
        stream = Stream(request, resource=resource, namespace=ns)
        self.streams.add(stream)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout if timeout else None
        next_bookmark = loop.time() + self.bookmark_interval
        try:
            while True:
                if pending:
                    data = b"".join(
                        json.dumps({"type": t, "object": o}).encode() + b"\n" for t, o in pending
                    )
                    await resp.write(data)
                    pending = []
                now = loop.time()
                wait = min(d for d in (deadline, next_bookmark) if d is not None) - now
                if wait > 0 and not stream.queue and not stream.dropped and not stream.closing:
                    stream.wake.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(stream.wake.wait(), wait)
                if stream.dropped:
                    return abort(request, resp)
                while stream.queue:
                    pending.extend(self._translate(*stream.queue.popleft(), match))
                now = loop.time()
                if bookmarks and (
                    now >= next_bookmark or (deadline is not None and now >= deadline)
                ):
                    pending.append(("BOOKMARK", self._bookmark(resource)))
                    next_bookmark = now + self.bookmark_interval
                if stream.closing or (deadline is not None and now >= deadline):
                    if pending:
                        data = b"".join(
                            json.dumps({"type": t, "object": o}).encode() + b"\n"
                            for t, o in pending
                        )
                        await resp.write(data)
                    return resp
        except (ConnectionError, asyncio.CancelledError):
            return resp
        finally:
            self.streams.discard(stream)

    def _bookmark(self, resource: str) -> dict[str, Any]:
        res = RESOURCES[resource]
        meta = {"resourceVersion": str(self.resource_version)}
        return {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}

    @staticmethod
    def _translate(
        kind: str, obj: dict[str, Any], old: Any, match: Callable[[Mapping[str, Any]], bool]
    ) -> Iterable[tuple[str, dict[str, Any]]]:
        now = match(obj)
        if kind != "MODIFIED":
            return [(kind, obj)] if now else []
        before = match(old) if old is not None else now
        if now and before:
            return [("MODIFIED", obj)]
        if now:
            return [("ADDED", obj)]
        return [("DELETED", obj)] if before else []

    # -- logs: the API server's checks, then the kubelet's answer (kubelet.py) -------------

    async def _pod_log(
        self, request: web.Request, ns: str, name: str, query: dict[str, str]
    ) -> web.StreamResponse:
        """What the pod registry's ``LogLocation`` checks (the container named, or the only
        one; the pod's node and its kubelet) and ``PodLogOptions`` validation, then the
        kubelet answers."""
        pod = self.get("pods", ns, name)
        if pod is None:
            raise not_found(RESOURCES["pods"], name)
        spec = pod.get("spec") or {}
        regular = [c["name"] for c in spec.get("containers") or []]
        init = [c["name"] for c in spec.get("initContainers") or []]
        container = query.get("container") or ""
        if not container:
            if len(regular) != 1:
                text = (
                    f"a container name must be specified for pod {name}, "
                    f"choose one of: [{' '.join(regular)}]"
                )
                if init:
                    text += f" or one of the init containers: [{' '.join(init)}]"
                raise KubeError(400, text)
            container = regular[0]
        elif container not in regular + init:
            raise KubeError(400, f"container {container} is not valid for pod {name}")
        if not spec.get("nodeName"):
            # No node, no kubelet to ask: LogLocation returns no location and the
            # handler answers 204 with an empty body (also when following).
            return web.Response(status=204)
        if spec["nodeName"] not in self.kubelet.nodes:
            raise not_found(RESOURCES["pods"], name)  # as measured on a real server
        if spec["nodeName"] in self.kubelet.kubelets_down:
            raise self._kubelet_unreachable(request, spec["nodeName"], ns, name, container)
        follow = parse_bool(query.get("follow"))
        previous = parse_bool(query.get("previous"))
        timestamps = parse_bool(query.get("timestamps"))
        tail, limit, since_s = (
            int_param(query, "tailLines"),
            int_param(query, "limitBytes"),
            int_param(query, "sinceSeconds"),
        )
        problems = []
        if since_s is not None and query.get("sinceTime"):
            problems.append(
                (
                    "sinceSeconds",
                    "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
                )
            )
        for key, value, low in (
            ("tailLines", tail, 0),
            ("limitBytes", limit, 1),
            ("sinceSeconds", since_s, 1),
        ):
            if value is not None and value < low:
                problems.append(
                    (
                        key,
                        f"Invalid value: {value}: must be greater than "
                        f"{'or equal to ' if low == 0 else ''}0",
                    )
                )
        if problems:
            raise invalid(Resource("", "v1", "PodLogOptions", "pods"), name, problems)
        since_ns = None
        if since_s is not None:
            since_ns = time.time_ns() - since_s * 1_000_000_000
        elif query.get("sinceTime"):
            try:
                since_ns = parse_rfc3339(query["sinceTime"])
            except ValueError:
                raise KubeError(
                    400, f'parsing time "{query["sinceTime"]}" as RFC3339: invalid'
                ) from None
        options = LogOptions(
            follow=follow,
            previous=previous,
            timestamps=timestamps,
            tail_lines=tail,
            limit_bytes=limit,
            since_ns=since_ns,
        )
        return await self.kubelet.container_log(request, pod, container, options)

    def _kubelet_unreachable(
        self, request: web.Request, node: str, ns: str, pod: str, container: str
    ) -> KubeError:
        """What the API server answers when it cannot dial the pod's kubelet (seen on
        v1.20.2, realcluster.md): the transport's error as a 500 with no reason.
        LocationStreamer.InputStream (apiserver/pkg/registry/generic/rest/streamer.go)
        returns client.Do's error unwrapped; ErrorToAPIStatus -> convertStorageErrorOrNot
        (apiserver/pkg/endpoints/handlers/responsewriters/status.go) makes it Code 500,
        Reason StatusReasonUnknown (""), Message err.Error() - Go's url.Error text."""
        address = (
            f"10.0.0.{sorted(self.kubelet.nodes | self.kubelet.kubelets_down).index(node) + 10}"
        )
        query = request.query_string
        url = f"https://{address}:10250/containerLogs/{ns}/{pod}/{container}"
        url += f"?{query}" if query else ""
        return KubeError(
            500,
            f'Get "{url}": dial tcp {address}:10250: connect: connection refused',
            reason="",
        )

    # -- control ---------------------------------------------------------------------------

    async def _control(self, request: web.Request) -> web.Response:
        """``POST /_fake/<hook>`` or ``/_fake/operator/<method>``, body
        ``{"args": [], "kwargs": {}}``:
        the hooks for a fake run as a separate process (UI tests, benchmarks)."""
        from .trainer import TRAINER_HOOKS

        parts = request.path.split("/")[2:]
        sub = parts[0] if len(parts) == 2 else ""
        target: Any = {"operator": self.operator, "trainer": self.trainer}.get(sub, self)
        hooks = {"operator": OPERATOR_HOOKS, "trainer": TRAINER_HOOKS}.get(sub, CONTROL_HOOKS)
        name = parts[-1]
        if name not in hooks or (len(parts) == 2 and target is self):
            return web.json_response({"error": f"no hook {request.path}"}, status=404)
        body = json.loads(await request.read() or b"{}")
        try:
            result = getattr(target, name)(*body.get("args", []), **body.get("kwargs", {}))
        except (KeyError, ValueError, TypeError) as err:
            return web.json_response({"error": f"{type(err).__name__}: {err}"}, status=400)
        return web.json_response(
            {
                "result": result
                if isinstance(result, (dict, list, str, int, type(None)))
                else str(result)
            }
        )

    # -- the kubelet's test hooks (kubelet.py), where tests and /_fake/ callers find them ----

    @property
    def nodes(self) -> set[str]:
        """The nodes pods can be on (a set tests may add to)."""
        return self.kubelet.nodes

    def runtime(self, ns: str, pod: str, container: str) -> Runtime:
        return self.kubelet.runtime(ns, pod, container)

    def append_log(
        self, ns: str, pod: str, container: str, data: bytes | str, at_ns: int | None = None
    ) -> None:
        self.kubelet.append_log(ns, pod, container, data, at_ns)

    def terminate(
        self, ns: str, pod: str, container: str, exit_code: int = 0, reason: str | None = None
    ) -> None:
        self.kubelet.terminate(ns, pod, container, exit_code, reason)

    def restart(self, ns: str, pod: str, container: str, exit_code: int = 1) -> None:
        self.kubelet.restart(ns, pod, container, exit_code)

    def set_waiting(
        self, ns: str, pod: str, container: str, reason: str, message: str | None = None
    ) -> None:
        self.kubelet.set_waiting(ns, pod, container, reason, message)

    def set_pod_phase(
        self, ns: str, pod: str, phase: str, reason: str | None = None, message: str | None = None
    ) -> None:
        self.kubelet.set_pod_phase(ns, pod, phase, reason, message)

    def remove_node(self, name: str) -> None:
        self.kubelet.remove_node(name)

    def stop_kubelet(self, node: str) -> None:
        self.kubelet.stop_kubelet(node)

    def start_kubelet(self, node: str) -> None:
        self.kubelet.start_kubelet(node)

    # -- the API server's test hooks ---------------------------------------------------------

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Seed any object (``kind`` picks the resource); server fields are filled if absent."""
        resource = BY_KIND[obj["kind"]]
        res = RESOURCES[resource]
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        ns = (meta.get("namespace") or "team-a") if res.namespaced else ""
        old = self.get(resource, ns, meta.get("name", ""))
        keep = {k: meta[k] for k in ("uid", "creationTimestamp", "generation") if k in meta}
        self._new_meta(res, obj, ns)
        obj["metadata"] |= keep
        if old is not None:
            self._emit(resource, "MODIFIED", obj, copy.deepcopy(old))
            return obj
        return self._stored(resource, obj)

    def delete(self, resource: str, namespace: str, name: str) -> None:
        obj = self.get(resource, namespace, name)
        if obj is not None:
            self._delete(resource, obj)

    def set_job_conditions(
        self, ns: str, name: str, conditions: list[Any], **status: Any
    ) -> dict[str, Any]:
        """Replace ``status.conditions`` (dicts, or bare type names meaning status True);
        extra keyword arguments set other status fields (``replicaStatuses``, ``startTime``)."""
        job = self.get("pytorchjobs", ns, name)
        if job is None:
            raise KeyError(f"no PyTorchJob {ns}/{name}")
        old = copy.deepcopy(job)
        now = rfc3339()
        filled = []
        for cond in conditions:
            cond = {"type": cond} if isinstance(cond, str) else dict(cond)
            cond.setdefault("status", "True")
            cond.setdefault("reason", f"PyTorchJob{cond['type']}")
            cond.setdefault("message", f"PyTorchJob {name} is {cond['type'].lower()}.")
            cond.setdefault("lastUpdateTime", now)
            cond.setdefault("lastTransitionTime", now)
            filled.append(cond)
        job.setdefault("status", {})["conditions"] = filled
        job["status"].update(status)
        self._emit("pytorchjobs", "MODIFIED", job, old)
        return job

    def deny(self, verb: str, resource: str, namespace: str | None = None, group: str = "") -> None:
        """403 for ``verb`` (or ``*``) on ``resource`` (``pods/log``, ``pytorchjobs``, ``*``)."""
        if not group and resource.split("/")[0] in RESOURCES:
            group = RESOURCES[resource.split("/")[0]].group
        self.denials.append((verb, group, resource, namespace))

    def allow_all(self) -> None:
        self.denials.clear()

    def require_token(self, token: str | None) -> None:
        """401 for any request without ``Authorization: Bearer <token>`` (None: no check)."""
        self.token = token

    def inject_error(
        self, path_regex: str, status: int = 500, times: int = 1, retry_after: int | None = None
    ) -> None:
        self.injections.append(_Injection(re.compile(path_regex), status, times, retry_after))

    def drop_streams(self) -> int:
        """Abruptly close every open watch and log stream; returns how many."""
        streams = list(self.streams)
        for stream in streams:
            stream.dropped = True
            if stream.request.transport is not None:
                stream.request.transport.abort()
            stream.wake.set()
        return len(streams)

    def expire_history(self) -> None:
        """Any resourceVersion handed out so far is now too old to watch from (410)."""
        self.resource_version += 1
        self.history.clear()
        self._floor = self.resource_version

    def add_namespace(self, name: str) -> None:
        self.namespaces.add(name)

    def remove_crd(self, kind: str = "pytorchjob") -> None:
        """The kind's CRDs are uninstalled: its API groups answer 404 page not found."""
        self.served_groups -= set(KINDS[kind])

    def restore_crd(self, kind: str = "pytorchjob") -> None:
        self.served_groups |= set(KINDS[kind])

    def seed_pvc(
        self,
        ns: str,
        name: str,
        capacity: str = "10Gi",
        access_modes: Iterable[str] = ("ReadWriteMany",),
        phase: str = "Bound",
        storage_class: str = "standard",
    ) -> dict[str, Any]:
        modes = list(access_modes)
        bound = phase == "Bound"
        return self.add({
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"accessModes": modes, "resources": {"requests": {"storage": capacity}},
                     "storageClassName": storage_class, "volumeMode": "Filesystem",
                     **({"volumeName": f"pvc-{uuid.uuid4()}"} if bound else {})},
            "status": {"phase": phase, **({"accessModes": modes, "capacity": {"storage": capacity}}
                                          if bound else {})},
        })  # fmt: skip

    def add_event(
        self,
        ns: str,
        involved_kind: str,
        involved_name: str,
        reason: str,
        message: str,
        type: str = "Normal",
        component: str | None = None,
    ) -> dict[str, Any]:
        involved: dict[str, Any] = {"kind": involved_kind, "namespace": ns, "name": involved_name}
        target = (
            self.get(BY_KIND.get(involved_kind, ""), ns, involved_name)
            if involved_kind in BY_KIND
            else None
        )
        involved["apiVersion"] = (
            RESOURCES[BY_KIND[involved_kind]].api_version if involved_kind in BY_KIND else "v1"
        )
        if target is not None:
            involved["uid"] = target["metadata"]["uid"]
            involved["resourceVersion"] = target["metadata"]["resourceVersion"]
        if component is None:
            component = {
                "FailedScheduling": "default-scheduler",
                "Scheduled": "default-scheduler",
            }.get(reason, "kubelet" if involved_kind == "Pod" else "pytorchjob-controller")
        now = rfc3339()
        return self.add({
            "kind": "Event",
            "metadata": {"name": f"{involved_name}.{uuid.uuid4().hex[:16]}", "namespace": ns},
            "involvedObject": involved, "reason": reason, "message": message, "type": type,
            "source": {"component": component}, "reportingComponent": component,
            "reportingInstance": "",
            "firstTimestamp": now, "lastTimestamp": now, "count": 1, "eventTime": None,
        })  # fmt: skip


CONTROL_HOOKS = {
    "add", "delete", "append_log", "terminate", "restart", "set_waiting", "set_pod_phase",
    "set_job_conditions", "deny", "allow_all", "require_token", "inject_error", "drop_streams",
    "expire_history", "remove_crd", "restore_crd", "seed_pvc", "add_event", "add_namespace",
    "remove_node", "stop_kubelet", "start_kubelet",
}  # fmt: skip
OPERATOR_HOOKS = {
    "enable", "disable", "create_pods", "reconcile", "run", "succeed", "exit", "back_off_over",
    "fail", "elapse", "suspend", "resume", "set_unschedulable",
}  # fmt: skip
