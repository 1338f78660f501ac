"""Hostile and absurd input on a real server: every one a 400 (or 413) naming the field.

Each case here was a 500 (or a 201 followed by a crash) before; none may create anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

API = ("pytorchjob", "api")
JOB = {"name": "bad", "command": ["python", "-c", "pass"]}
# Linux refuses to exec an argument or environment string this long (MAX_ARG_STRLEN).
MAX_ARG_STRLEN = 131072


def manifest_yaml(master: str) -> str:
    """A PyTorchJob whose Master replica spec is ``master`` (YAML flow text)."""
    return (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: y}\n"
        f"spec:\n  pytorchReplicaSpecs:\n    Master: {master}\n"
    )


GOOD_MASTER = (
    "{replicas: 1, template: {spec: {containers: [{name: pytorch, image: i, command: [x]}]}}}"
)
ALIAS_BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
)


async def answer(jp_fetch: Any, *path: str, method: str = "GET", body: Any = None) -> Any:
    raw = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    return await jp_fetch(*API, *path, method=method, body=raw, raise_error=False)


def refusal(response: Any) -> dict[str, Any]:
    """The JSON error body; it must carry a message a person can act on."""
    assert response.code < 500, response.body[:300]
    assert response.code in (400, 404, 413), (response.code, response.body[:300])
    body: dict[str, Any] = json.loads(response.body)
    assert body["message"], body
    return body


BAD_BODIES: list[tuple[str, bytes | Any, str]] = [
    ("invalid utf-8", b'{"name": "\xff\xfe", "command": ["x"]}', "body"),
    ("nested 100,000 deep", b"[" * 100_000 + b"]" * 100_000, "body"),
    ("extras nested 1,000 deep", b'{"extras": ' + b'{"a": ' * 1000 + b"1" + b"}" * 1001, "body"),
    ("5000-digit integer", b'{"name": "a", "nodes": 1' + b"0" * 5000 + b"}", "body"),
    ("NaN", b'{"name": "a", "command": ["x"], "extras": {"a": NaN}}', "body"),
    ("1e400 is infinite", b'{"name": "a", "command": ["x"], "extras": {"a": 1e400}}', "body"),
    ("nodes '0\\x1f' (\\s, but not int())", {**JOB, "nodes": "0\x1f"}, "nodes"),
    ("memory 1e1000000", {**JOB, "memory": "1e1000000"}, "memory"),
    ("memory beyond int64", {**JOB, "memory": "9999999999Ei"}, "memory"),
    ("cpu 1e-1000000", {**JOB, "cpu": "1e-1000000"}, "cpu"),
    ("shm 1e999999999999", {**JOB, "shm": "1e999999999999"}, "shm"),
    ("extras.spec a string", {**JOB, "extras": {"spec": "x"}}, "extras.spec"),
    ("extras.metadata a list", {**JOB, "extras": {"metadata": [1]}}, "extras.metadata"),
    (
        "extras replica specs a string",
        {**JOB, "extras": {"spec": {"pytorchReplicaSpecs": "x"}}},
        "extras.spec.pytorchReplicaSpecs",
    ),
    (
        "extras Master a list",
        {**JOB, "extras": {"spec": {"pytorchReplicaSpecs": {"Master": [1]}}}},
        "extras.spec.pytorchReplicaSpecs.Master",
    ),
    (
        "extras containers of numbers",
        {
            **JOB,
            "extras": {
                "spec": {
                    "pytorchReplicaSpecs": {"Master": {"template": {"spec": {"containers": [1]}}}}
                }
            },
        },
        "extras.spec.pytorchReplicaSpecs.Master.template.spec.containers[0]",
    ),
    (
        "extras backoffLimit a string",
        {**JOB, "extras": {"spec": {"runPolicy": {"backoffLimit": "x"}}}},
        "extras.spec.runPolicy.backoffLimit",
    ),
    ("NUL in an env value", {**JOB, "env": {"A": "x\x00y"}}, "env[A]"),
    ("NUL in an argument", {**JOB, "args": ["a\x00b"]}, "args[0]"),
    ("NUL in the command", {"name": "bad", "command": ["py\x00thon"]}, "command[0]"),
    ("argument over MAX_ARG_STRLEN", {**JOB, "args": ["x" * MAX_ARG_STRLEN]}, "args[0]"),
    ("env value over MAX_ARG_STRLEN", {**JOB, "env": {"A": "x" * MAX_ARG_STRLEN}}, "env[A]"),
    ("yaml: template a string", {"yaml": manifest_yaml("{replicas: 1, template: x}")}, None),
    (
        "yaml: metadata a list",
        {"yaml": manifest_yaml(GOOD_MASTER).replace("{name: y}", "[1]")},
        None,
    ),
    (
        "yaml: Worker replicas abc",
        {
            "yaml": manifest_yaml(GOOD_MASTER)
            + "    Worker: {replicas: abc, template: {spec: {containers: [{name: pytorch}]}}}\n"
        },
        "spec.pytorchReplicaSpecs.Worker.replicas",
    ),
    ("yaml: nested 10,000 deep", {"yaml": "[" * 10_000 + "]" * 10_000}, "yaml"),
    ("yaml: alias bomb", {"yaml": ALIAS_BOMB}, "yaml"),
    (
        "yaml: a date in extras",
        {"yaml": manifest_yaml(GOOD_MASTER) + "  when: 2026-01-01\n"},
        "yaml",
    ),
    ("yaml: binary", {"yaml": manifest_yaml(GOOD_MASTER) + "  blob: !!binary aGk=\n"}, "yaml"),
    ("yaml: infinity", {"yaml": manifest_yaml(GOOD_MASTER) + "  big: .inf\n"}, "yaml"),
    ("yaml: a number as key", {"yaml": manifest_yaml(GOOD_MASTER) + "  1: one\n"}, "yaml"),
    (
        "yaml: gpu limit 1.5",
        {
            "yaml": manifest_yaml(
                "{replicas: 1, template: {spec: {containers: [{name: pytorch, image: i,"
                " resources: {limits: {nvidia.com/gpu: '1.5'}}}]}}}"
            )
        },
        None,
    ),
]


@pytest.mark.parametrize(
    ("body", "field"), [(b, f) for _, b, f in BAD_BODIES], ids=[i for i, _, _ in BAD_BODIES]
)
async def test_render_refuses_naming_the_field(
    jp_fetch: Any, body: bytes | Any, field: str | None
) -> None:
    refused = refusal(await answer(jp_fetch, "render", method="POST", body=body))
    if field is not None:
        assert refused["field"] == field, refused
    else:
        assert refused["field"].split(".")[0] in ("spec", "metadata", "gpus"), refused


@pytest.mark.parametrize(
    "body",
    [b for _, b, _ in BAD_BODIES if not (isinstance(b, dict) and "yaml" in b)],
    ids=[i for i, b, _ in BAD_BODIES if not (isinstance(b, dict) and "yaml" in b)],
)
async def test_submit_refuses_and_creates_nothing(
    jp_fetch: Any, tmp_path: Path, body: bytes | Any
) -> None:
    refusal(await answer(jp_fetch, "jobs", method="POST", body=body))
    assert json.loads((await answer(jp_fetch, "jobs")).body)["jobs"] == []
    assert not list((tmp_path / "ptjob-home" / "jobs").glob("*"))


async def test_odd_but_harmless_yaml_renders(jp_fetch: Any) -> None:
    """'²' passes str.isdigit() but not int(): read like 'auto', not a crash."""
    body = {"yaml": manifest_yaml(GOOD_MASTER) + "  nprocPerNode: '\u00b2'\n"}
    response = await answer(jp_fetch, "render", method="POST", body=body)
    assert response.code == 200, response.body


async def test_an_oversized_body_is_413(jp_fetch: Any) -> None:
    script = "# padding\n" * 120_000  # 1.2 MB: over the default 1 MiB
    for path in ("render", "jobs", "tensorboards"):
        response = await answer(
            jp_fetch, path, method="POST", body={**JOB, "command": [], "script": script}
        )
        assert response.code == 413, (path, response.code)
        body = json.loads(response.body)
        assert "1048576" in body["message"] or "1 MiB" in body["message"], body


LONG = "a" * 300


@pytest.mark.parametrize(
    ("path", "method"),
    [
        (("jobs", LONG), "GET"),
        (("jobs", LONG), "DELETE"),
        (("jobs", LONG, "events"), "GET"),
        (("jobs", LONG, "logs"), "GET"),
        (("jobs", "Upper"), "GET"),
        (("jobs", "a_b", "events"), "GET"),
        (("jobs", "..%2F..%2Fx"), "GET"),
    ],
)
async def test_impossible_job_names_are_400(
    jp_fetch: Any, path: tuple[str, ...], method: str
) -> None:
    refused = refusal(await answer(jp_fetch, *path, method=method))
    assert refused["field"] == "name"


async def test_impossible_job_names_on_the_log_websocket(jp_ws_fetch: Any) -> None:
    ws = await jp_ws_fetch(*API, "jobs", LONG, "logs")
    message = json.loads(await ws.read_message())
    assert message["status"] == 400 and "name" in message["error"]
    assert await ws.read_message() is None  # closed


@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({"job": LONG}, "job", 400),
        ({"job": "../../x"}, "job", 400),
        ({"job": "../ptjob-home/jobs/x"}, "job", 400),
        ({"logdir": LONG}, "logdir", 400),
        ({"logdir": "/" + "/".join([LONG] * 20)}, "logdir", 400),
        ({"logdir": "does/not/exist"}, "logdir", 404),
    ],
)
async def test_tensorboard_refuses_impossible_names(
    jp_fetch: Any, jp_serverapp: Any, body: Any, field: str, status: int
) -> None:
    response = await answer(jp_fetch, "tensorboards", method="POST", body=body)
    refused = refusal(response)
    assert (response.code, refused["field"]) == (status, field), refused
    assert json.loads((await answer(jp_fetch, "tensorboards")).body) == []


async def test_tensorboard_job_name_never_reaches_a_path(
    jp_fetch: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    """``../`` in a job name would read another directory's ``job.json``."""
    elsewhere = tmp_path / "ptjob-home" / "elsewhere"
    elsewhere.mkdir(parents=True)
    (elsewhere / "job.json").write_text("{}")
    (elsewhere / "manifest.json").write_text("{}")
    response = await answer(jp_fetch, "tensorboards", method="POST", body={"job": "../elsewhere"})
    refused = refusal(response)
    assert response.code == 400 and refused["field"] == "job"
    assert "DNS-1035" in refused["message"] or "lower case" in refused["message"]
