"""Fuzzing the REST and websocket surface of a real server (local backend).

Properties, for bodies as arbitrary JSON and arbitrary bytes (``render``, ``jobs``,
``tensorboards``), YAML from a grammar of nested maps, lists and odd scalars (the
form's YAML editor), names of any length and alphabet on every ``{name}``/``{id}``
route, and ``since``/``tail`` of any JSON on the log websocket:

* never a 5xx;
* every refusal is a 400/404/409/413 with a non-empty message;
* no socket is left hanging: the websocket sends a message and closes within a deadline.

Example counts are bounded so the module runs in well under a minute; each test
prints how many inputs it tried (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import json
import string
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .log_messages import unbatch
from .routes import SAMPLES, routes
from .strategies import job_bodies
from .test_openapi import check as check_documented

API = ("pytorchjob", "api")
REFUSALS = (400, 404, 409, 413)
SOCKET_DEADLINE = 10.0
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)

# -- strategies -------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["", "0", "-1", "8Gi", "1e1000000", "\x00", "../..", "a" * 300, "\ud800"])
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
MANIFEST_WORDS = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "labels",
    "annotations",
    "spec",
    "pytorchReplicaSpecs",
    "Master",
    "Worker",
    "replicas",
    "restartPolicy",
    "template",
    "containers",
    "image",
    "command",
    "args",
    "env",
    "value",
    "resources",
    "limits",
    "requests",
    "nvidia.com/gpu",
    "volumeMounts",
    "mountPath",
    "volumes",
    "persistentVolumeClaim",
    "claimName",
    "emptyDir",
    "sizeLimit",
    "runPolicy",
    "backoffLimit",
    "nprocPerNode",
    "tolerations",
    "nodeSelector",
]
# Scalars as YAML spells them, unquoted: numbers, dates, tags, anchors, specials.
YAML_SCALARS = [
    "abc",
    "1",
    "-1",
    "1.5",
    "1e1000",
    "0x1F",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "~",
    "null",
    "yes",
    "true",
    ".inf",
    ".nan",
    "!!binary aGk=",
    "!!set {a}",
    "'\u00b2'",
    "'8Gi'",
    "pytorch",
    "kubeflow.org/v1",
    "PyTorchJob",
    '"\\0"',
    "1" * 5000,
    "&anchor x",
    "*anchor",
    "[",
    "{",
]
yaml_keys = st.sampled_from(MANIFEST_WORDS) | st.sampled_from(YAML_SCALARS[:8])
yaml_trees = st.recursive(
    st.sampled_from(YAML_SCALARS),
    lambda children: (
        st.lists(children, max_size=4).map(lambda items: items)
        | st.dictionaries(yaml_keys, children, max_size=4)
    ),
    max_leaves=25,
)


def flow(tree: Any) -> str:
    """A tree in YAML flow style, its scalars written as they are (unquoted)."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(flow(v) for v in tree) + "]"
    return str(tree)


@st.composite
def yaml_documents(draw: st.DrawFn) -> str:
    """Mostly PyTorchJob-headed documents whose parts are drawn from the grammar."""
    spec = draw(yaml_trees)
    if draw(st.booleans()):
        master = draw(st.dictionaries(st.sampled_from(MANIFEST_WORDS), yaml_trees, max_size=4))
        spec = {"pytorchReplicaSpecs": {"Master": master}}
    head = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n" if draw(st.booleans()) else ""
    return head + f"metadata: {flow(draw(yaml_trees))}\nspec: {flow(spec)}\n"


@st.composite
def mutated_bodies(draw: st.DrawFn, *, runnable: bool) -> dict[str, Any]:
    """A valid job body with one field replaced by arbitrary JSON. ``runnable=False``
    keeps the command harmless (``true``), for bodies that may really be submitted."""
    body = draw(job_bodies())
    field = draw(st.sampled_from(sorted(set(body) | {"extras", "env", "args", "memory"})))
    if not runnable:
        body.pop("script", None)
        body.pop("workdir", None)
        body["command"], body["args"] = ["true"], []
        if field in ("command", "args", "script", "workdir"):
            field = "extras"
    body[field] = draw(json_values)
    return body


# A name is one path segment: with a "/" in it the request is for another path, which
# is jupyter_server's to answer (its trailing-slash redirect refuses a DELETE with 403).
names = (
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="/"),
        min_size=1,
        max_size=300,
    )
    | st.text(string.ascii_lowercase + string.digits + "-.", min_size=1, max_size=300)
    | st.integers(1, 300).map(lambda length: "a" * length)
)

# -- plumbing -----------------------------------------------------------------------------


async def fetch(jp_fetch: Any, *path: str, method: str = "GET", body: bytes | None = None) -> Any:
    return await jp_fetch(
        *path,
        method=method,
        body=body,
        raise_error=False,
        follow_redirects=False,
        allow_nonstandard_methods=True,
        request_timeout=60,
    )


def check_answer(response: Any, ok: tuple[int, ...], documented_as: str | None = None) -> None:
    """Never a 5xx; a refusal is one of ``REFUSALS`` and says why (HEAD has no body);
    with ``documented_as`` (an OpenAPI path), the status and body are the documented ones."""
    assert response.code < 500, (response.code, response.body[:500])
    assert response.code in ok + REFUSALS, (response.code, response.body[:500])
    if response.code in REFUSALS and response.request.method != "HEAD":
        assert response.body.strip(), response.code
        if response.headers.get("Content-Type", "").startswith("application/json"):
            assert json.loads(response.body)["message"], response.body[:500]
    if documented_as is not None:
        method = response.request.method.lower()
        check_documented(documented_as, method, response.code, response.body)


def report(tally: Counter[Any], what: str) -> None:
    print(f"\n{what}: {sum(tally.values())} inputs, answers {dict(sorted(tally.items()))}")


# -- bodies ---------------------------------------------------------------------------------


def test_render_bodies(jp_fetch: Any, jp_asyncio_loop: Any) -> None:
    tally: Counter[int] = Counter()

    @settings(FUZZ, max_examples=300)
    @given(
        raw=st.binary(max_size=300)
        | json_values.map(lambda v: json.dumps(v).encode())
        | mutated_bodies(runnable=True).map(lambda v: json.dumps(v).encode())
        | yaml_documents().map(lambda text: json.dumps({"yaml": text}).encode())
    )
    def check(raw: bytes) -> None:
        response = jp_asyncio_loop.run_until_complete(
            fetch(jp_fetch, *API, "render", method="POST", body=raw)
        )
        tally[response.code] += 1
        check_answer(response, (200,), "/pytorchjob/api/render")

    check()
    report(tally, "POST render")
    assert tally[200] and tally[400]


def test_job_and_tensorboard_bodies(jp_fetch: Any, jp_asyncio_loop: Any) -> None:
    tally: Counter[tuple[str, int]] = Counter()

    async def post(path: str, raw: bytes) -> None:
        response = await fetch(jp_fetch, *API, path, method="POST", body=raw)
        tally[path, response.code] += 1
        check_answer(response, (201,), f"/pytorchjob/api/{path}")
        if response.code == 201:  # accepted: remove it again
            created = json.loads(response.body)
            await fetch(jp_fetch, *API, path, created.get("name") or created["id"], method="DELETE")

    @settings(FUZZ, max_examples=250)
    @given(
        path=st.sampled_from(["jobs", "tensorboards"]),
        raw=st.binary(max_size=300)
        | json_values.map(lambda v: json.dumps(v).encode())
        | mutated_bodies(runnable=False).map(lambda v: json.dumps(v).encode())
        | st.fixed_dictionaries({}, optional={"job": json_values, "logdir": json_values}).map(
            lambda v: json.dumps(v).encode()
        ),
    )
    def check(path: str, raw: bytes) -> None:
        jp_asyncio_loop.run_until_complete(post(path, raw))

    check()
    report(tally, "POST jobs, tensorboards")


# -- names on every route ---------------------------------------------------------------------


def test_names_on_every_name_route(
    jp_fetch: Any, jp_asyncio_loop: Any, jp_serverapp: Any, jp_base_url: str
) -> None:
    marker = "\x01NAME\x01"
    table = [
        (path, method)
        for path, method, _ in routes(
            jp_serverapp.web_app, jp_base_url, {**SAMPLES, "name": marker, "tb_id": marker}
        )
        if marker in path
    ]
    assert len(table) >= 6, table  # jobs/{name} GET DELETE, events, logs, tensorboards/{id}...
    tally: Counter[int] = Counter()

    @settings(FUZZ, max_examples=200)
    @given(route=st.sampled_from(table), name=names)
    def check(route: tuple[str, str], name: str) -> None:
        path, method = route
        response = jp_asyncio_loop.run_until_complete(
            fetch(jp_fetch, path.replace(marker, name), method=method)
        )
        tally[response.code] += 1
        documented = None
        if path.startswith("pytorchjob/api/"):
            documented = "/" + path.replace(marker, "{id}" if "tensorboards" in path else "{name}")
        check_answer(response, (200, 204, 302), documented)

    check()
    report(tally, f"names on {len(table)} routes")


# -- the log websocket ------------------------------------------------------------------------


@pytest.fixture
def finished_job(jp_fetch: Any, jp_asyncio_loop: Any) -> str:
    async def run() -> None:
        body = {"name": "fz", "nodes": 2, "shm": "off", "script": "print('a')\nprint('b')\n"}
        await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
        for _ in range(600):
            job = json.loads((await jp_fetch(*API, "jobs", "fz")).body)
            if job["state"] in ("Succeeded", "Failed"):
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the job did not finish")

    jp_asyncio_loop.run_until_complete(run())
    return "fz"


def test_since_and_tail_on_the_websocket(
    jp_ws_fetch: Any, jp_asyncio_loop: Any, finished_job: str
) -> None:
    tally: Counter[str] = Counter()

    async def read_all(params: dict[str, str]) -> list[dict[str, Any]]:
        ws = await jp_ws_fetch(*API, "jobs", finished_job, "logs", params=params)
        messages = []
        try:
            while True:
                try:
                    raw = await asyncio.wait_for(ws.read_message(), SOCKET_DEADLINE)
                except asyncio.TimeoutError:
                    tally["hung"] += 1
                    raise AssertionError(f"no message or close in {SOCKET_DEADLINE} s") from None
                if raw is None:
                    return messages
                messages.extend(unbatch(raw))
        finally:
            ws.close()

    @settings(FUZZ, max_examples=150)
    @given(
        key=st.sampled_from(["since", "tail", "follow", "previous", "replica"]),
        value=json_values.map(json.dumps)
        | st.text(max_size=40)
        | st.dictionaries(
            st.sampled_from(["master-0", "worker-0", "worker-9"]),
            st.integers(-(10**20), 10**20) | st.integers(-2, 8) | st.booleans() | st.floats(),
            max_size=2,
        ).map(json.dumps),
    )
    def check(key: str, value: str) -> None:
        messages = jp_asyncio_loop.run_until_complete(read_all({key: value}))
        assert messages, "closed without a word"
        last = messages[-1]
        if "error" in last:
            assert last["status"] in (400, 404) and last["error"], last
            tally[f"error {last['status']}"] += 1
        else:
            assert last == {"end": True}, last
            tally["end"] += 1
        # Whole lines only: a resume never starts inside one.
        for message in messages[:-1]:
            assert set(message["text"].splitlines()) <= {"a", "b"}, (value, message)

    check()
    report(tally, "log websocket queries")
    assert tally["hung"] == 0
