"""The OpenAPI document in the package describes the handlers, and the API never 500s."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_spec
from tornado.httpclient import HTTPClientError

import jupyter_pytorchjob
from jupyter_pytorchjob.handlers import route_handlers

from .log_messages import decode

DOC = yaml.safe_load(
    (Path(jupyter_pytorchjob.__file__).parent / "api" / "openapi.yaml").read_text()
)
VERBS = ("get", "post", "put", "patch", "delete")


def inline(schema: Any) -> Any:
    """The schema with every ``#/components/...`` reference replaced by its target."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            _, _, kind, name = schema["$ref"].split("/")
            return inline(DOC["components"][kind][name])
        return {k: inline(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [inline(v) for v in schema]
    return schema


def check(path: str, method: str, status: int, body: bytes) -> None:
    """The answer matches the documented response for that status."""
    responses = DOC["paths"][path][method]["responses"]
    assert str(status) in responses, f"{method} {path} answered an undocumented {status}"
    content = inline(responses[str(status)]).get("content", {}).get("application/json")
    if content is None:
        return
    answer = json.loads(body)
    errors = list(Draft202012Validator(content["schema"]).iter_errors(answer))
    assert errors == [], [e.message for e in errors]
    assert not_camel_case(answer) == [], f"{method} {path}: keys break the wire convention"


# Maps whose keys are the user's (or Kubernetes') own, not the API's.
USER_KEYED = {
    *("manifest", "extras", "env", "labels", "annotations", "nodeSelector", "fields"),
    *("metrics", "history"),  # a job's own metric names
    "runs",  # a TensorBoard's runs: by job name
}
CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")


def not_camel_case(value: Any, where: str = "") -> list[str]:
    """The keys of an answer that are not camelCase (job/wire.py's convention)."""
    if isinstance(value, list):
        return [bad for item in value for bad in not_camel_case(item, where + "[]")]
    if not isinstance(value, dict):
        return []
    bad = [f"{where}.{key}" for key in value if not CAMEL.fullmatch(key)]
    for key, item in value.items():
        if key not in USER_KEYED:
            bad += not_camel_case(item, f"{where}.{key}")
    return bad


def test_times_are_epoch_seconds_everywhere() -> None:
    """One time format: no schema of the document sends a date-time string."""
    assert "date-time" not in json.dumps(DOC)


def test_the_document_is_valid_openapi() -> None:
    validate_spec(DOC)


def template(pattern: str) -> str:
    """``/pytorchjob/api/jobs/(?P<name>...)`` -> ``/pytorchjob/api/jobs/{name}``."""
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern).replace("{tb_id}", "{id}")


def test_every_route_and_verb_is_documented_and_nothing_else() -> None:
    implemented: dict[str, set[str]] = {}
    for pattern, handler in route_handlers():
        path = template(pattern)
        if not path.startswith("/pytorchjob/api/"):
            continue  # the TensorBoard proxy is TensorBoard's own API
        verbs = {
            v for v in VERBS if getattr(handler, v) is not getattr(handler.__mro__[-2], v, None)
        }
        verbs = {
            v
            for v in verbs
            if v in handler.__dict__ or any(v in b.__dict__ for b in handler.__mro__[:3])
        }
        implemented[path] = verbs
    documented = {p: {v for v in ops if v in VERBS} for p, ops in DOC["paths"].items()}
    assert implemented == documented


API = "/pytorchjob/api"


async def test_responses_match_the_document(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    async def fetch(
        path: str,
        method: str = "GET",
        body: Any = None,
        doc_path: str | None = None,
        params: Any = None,
    ) -> Any:
        kwargs: dict[str, Any] = {"method": method, "params": params}
        if body is not None:
            kwargs["body"] = json.dumps(body)
        try:
            response = await jp_fetch(path.lstrip("/"), **kwargs)
            code, raw = response.code, response.body
        except HTTPClientError as err:
            code, raw = err.code, err.response.body
        check(doc_path or path, method.lower(), code, raw)
        return code, raw

    await fetch(f"{API}/config")
    await fetch(f"{API}/render", "POST", {"name": "r", "command": ["x"]})
    await fetch(f"{API}/render", "POST", {"name": "R", "command": ["x"]})
    await fetch(
        f"{API}/jobs", "POST", {"name": "j", "shm": "off", "command": ["python", "-c", "pass"]}
    )
    await fetch(f"{API}/jobs", "POST", {"name": "j", "command": ["x"]})  # 409
    await fetch(
        f"{API}/jobs", "POST", {"name": "j2", "shm": "off", "command": ["python", "-c", "pass"]}
    )
    await fetch(f"{API}/jobs")
    await fetch(f"{API}/jobs/j", doc_path=f"{API}/jobs/{{name}}")
    await fetch(f"{API}/jobs/nope", doc_path=f"{API}/jobs/{{name}}")
    await fetch(f"{API}/jobs/j/events", doc_path=f"{API}/jobs/{{name}}/events")
    await fetch(f"{API}/jobs/j/progress", doc_path=f"{API}/jobs/{{name}}/progress")
    await fetch(f"{API}/jobs/nope/progress", doc_path=f"{API}/jobs/{{name}}/progress")
    await fetch(f"{API}/jobs/j/clone", doc_path=f"{API}/jobs/{{name}}/clone")
    await fetch(f"{API}/jobs/nope/clone", doc_path=f"{API}/jobs/{{name}}/clone")
    for job in ("j", "nope", "Bad_Name"):
        await fetch(f"{API}/jobs/{job}/tensorboard", doc_path=f"{API}/jobs/{{name}}/tensorboard")
    await fetch(f"{API}/volumes")
    await fetch(f"{API}/compare", params=[("job", "j"), ("job", "nope")])  # 404
    await fetch(f"{API}/compare", params=[("job", "j")])  # 400
    await fetch(f"{API}/compare", params=[("job", "j"), ("job", "j2")])
    (jp_root_dir / "tb").mkdir()
    _, raw = await fetch(f"{API}/tensorboards", "POST", {"logdir": "tb"})
    tb = json.loads(raw)
    await fetch(f"{API}/tensorboards")
    await fetch(f"{API}/tensorboards/{tb['id']}", doc_path=f"{API}/tensorboards/{{id}}")
    await fetch(f"{API}/tensorboards/{tb['id']}", "DELETE", doc_path=f"{API}/tensorboards/{{id}}")
    await check_log_messages(jp_ws_fetch, "j")
    await fetch(f"{API}/jobs/j", "DELETE", doc_path=f"{API}/jobs/{{name}}")
    await fetch(f"{API}/jobs/j2", "DELETE", doc_path=f"{API}/jobs/{{name}}")


async def check_log_messages(jp_ws_fetch: Any, name: str) -> None:
    """Every websocket message of a job's log is a documented LogMessage."""
    schema = inline(DOC["components"]["schemas"]["LogMessage"])
    ws = await jp_ws_fetch("pytorchjob", "api", "jobs", name, "logs")
    try:
        while (raw := await ws.read_message()) is not None:
            message = decode(raw)
            errors = list(Draft202012Validator(schema).iter_errors(message))
            assert errors == [] and not_camel_case(message) == [], message
            if message.get("end") or "error" in message:
                break
    finally:
        ws.close()


def of_schema(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of the documented types (enough of JSON Schema for our own document)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = schema.get("type", "object")
    types = types if isinstance(types, list) else [types]
    options = []
    for kind in types:
        if kind == "string":
            options.append(st.text(max_size=12) | st.sampled_from(["8Gi", "/mnt/data", "a-b", "0"]))
        elif kind == "integer":
            options.append(st.integers(-3, 2**33))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            options.append(st.lists(of_schema(schema.get("items", {}), depth + 1), max_size=3))
        elif kind == "object" and "properties" in schema and depth < 3:
            props = schema["properties"]
            options.append(
                st.fixed_dictionaries(
                    {}, optional={k: of_schema(v, depth + 1) for k, v in props.items()}
                )
            )
        else:
            options.append(st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3))
    return st.one_of(options)


BODIES = of_schema(inline(DOC["components"]["schemas"]["JobBody"]))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.one_of(BODIES, JSON, st.fixed_dictionaries({"yaml": st.text(max_size=60)})))
def test_render_never_fails_with_a_500(jp_fetch: Any, jp_asyncio_loop: Any, body: Any) -> None:
    """Bodies from the documented schema, arbitrary JSON and arbitrary YAML text: each is
    either rendered (200) or refused naming a field (400) - never a server error."""

    async def post() -> tuple[int, bytes]:
        try:
            response = await jp_fetch(
                "pytorchjob", "api", "render", method="POST", body=json.dumps(body)
            )
            return response.code, response.body
        except HTTPClientError as err:
            return err.code, err.response.body

    code, raw = jp_asyncio_loop.run_until_complete(post())
    assert code in (200, 400), raw
    answer = json.loads(raw)
    if code == 200:
        check(f"{API}/render", "post", 200, raw)
    else:
        assert answer["message"]


async def test_a_failed_job_answers_its_failure(jp_fetch: Any) -> None:
    """GET jobs and GET jobs/{name} carry ``failure`` as documented (#26): the replica,
    its exit, the exception and the traceback."""
    body = {
        "name": "oops",
        "shm": "off",
        "restartPolicy": "Never",
        "command": ["python", "-c", "print('step 1', flush=True)\n1 / 0"],
    }
    await jp_fetch(f"{API}/jobs".lstrip("/"), method="POST", body=json.dumps(body))
    answers: dict[str, Any] = {}

    async def failed() -> bool:
        response = await jp_fetch(f"{API}/jobs/oops".lstrip("/"))
        answers["job"] = (response.code, response.body)
        return bool(json.loads(response.body)["state"] == "Failed")

    deadline = asyncio.get_running_loop().time() + 60
    while not await failed():
        assert asyncio.get_running_loop().time() < deadline, answers
        await asyncio.sleep(0.2)
    code, raw = answers["job"]
    check(f"{API}/jobs/{{name}}", "get", code, raw)
    failure = json.loads(raw)["failure"]
    assert failure["replica"] == "master-0" and failure["exitCode"] == 1
    assert failure["message"] == "ZeroDivisionError: division by zero"
    assert failure["tail"][0] == "Traceback (most recent call last):"
    assert failure["logSource"] == "current" and json.loads(raw)["waiting"] is None
    listing = await jp_fetch(f"{API}/jobs".lstrip("/"))
    check(f"{API}/jobs", "get", listing.code, listing.body)
    [listed] = json.loads(listing.body)["jobs"]
    assert listed["failure"] == failure
    await jp_fetch(f"{API}/jobs/oops".lstrip("/"), method="DELETE")
