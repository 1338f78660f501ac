"""The REST API on a real Jupyter server (pytest-jupyter), auth and XSRF included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.handlers import route_handlers
from jupyter_pytorchjob.job.messages import MESSAGES

from .crd import manifest_errors

API = ("pytorchjob", "api")


async def post_json(jp_fetch: Any, path: str, body: Any, **kwargs: Any) -> Any:
    return await jp_fetch(*API, path, method="POST", body=json.dumps(body), **kwargs)


async def test_config(jp_fetch: Any, jp_root_dir: Path) -> None:
    response = await jp_fetch(*API, "config")
    config = json.loads(response.body)
    assert config["backend"] == "local"
    root = str(jp_root_dir.resolve())
    assert config["defaults"] == {
        "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
        "gpuResource": "nvidia.com/gpu",
        "shm": "4Gi",
        # Where a local job without a workdir starts: the form shows it (issue 14).
        "workdir": root,
    }
    # The form makes "Run as PyTorch job" start in the file's directory from it.
    assert config["rootDir"] == root
    assert config["version"]


async def test_config_gives_the_form_its_choices_and_defaults(jp_fetch: Any) -> None:
    """The form shows the field table's choices and defaults instead of copies."""
    config = json.loads((await jp_fetch(*API, "config")).body)
    fields = config["fields"]
    assert fields["restartPolicy"] == {
        "section": "advanced",
        "default": "OnFailure",
        "choices": ["OnFailure", "Never", "Always", "ExitCode"],
        # How the form edits and shows it (the field's codec), from the same table.
        "form": "choice",
        "nullable": False,
    }
    assert fields["cleanPodPolicy"]["choices"] == ["Running", "All", "None"]
    assert fields["cleanPodPolicy"]["default"] == "None"
    assert fields["tolerations"]["itemChoices"]["effect"] == [
        "",
        "NoSchedule",
        "PreferNoSchedule",
        "NoExecute",
    ]
    assert fields["nodes"]["default"] == 1 and fields["backoffLimit"]["default"] == 3
    assert fields["shm"]["default"] == "2Gi"


async def test_render_valid_job(jp_fetch: Any) -> None:
    body = {"name": "demo", "nodes": 2, "command": ["python", "train.py"]}
    response = await post_json(jp_fetch, "render", body)
    answer = json.loads(response.body)
    assert manifest_errors(answer["manifest"]) == []
    assert answer["yaml"].startswith("apiVersion: kubeflow.org/v1\n")
    # The server's default shm (configured 4Gi) applies.
    master = answer["manifest"]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}} in master[
        "volumes"
    ]


async def test_render_warns_about_restart_policy_always(jp_fetch: Any) -> None:
    body = {"name": "demo", "command": ["python"], "restartPolicy": "Always"}
    answer = json.loads((await post_json(jp_fetch, "render", body)).body)
    assert len(answer["warnings"]) == 1 and "Always" in answer["warnings"][0]
    # Each with its code, for JupyterLab to translate.
    assert answer["warningMessages"] == [
        {"code": "warn_restart_always", "params": {}, "message": answer["warnings"][0]}
    ]
    body["restartPolicy"] = "OnFailure"
    assert json.loads((await post_json(jp_fetch, "render", body)).body)["warnings"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Bad", "command": ["x"]}, "name"),
        ({"name": "ok", "command": ["x"], "memory": "8 GB"}, "memory"),
        (
            {"name": "ok", "command": ["x"], "pvc": [{"claim": "d", "mountPath": "rel"}]},
            "pvc[0].mountPath",
        ),
        ({"name": "ok"}, "command"),
        ({"name": "ok", "command": ["x"], "colour": "red"}, "colour"),
    ],
)
async def test_render_invalid_job_is_400_with_field(
    jp_fetch: Any, body: dict[str, Any], field: str
) -> None:
    with pytest.raises(HTTPClientError) as info:
        await post_json(jp_fetch, "render", body)
    assert info.value.code == 400
    answer = json.loads(info.value.response.body)
    assert answer["field"] == field
    assert answer["message"]
    assert answer["errors"][0]["field"] == field
    # Each error with its stable code and parameters besides the English text.
    assert answer["code"] in MESSAGES and isinstance(answer["params"], dict)
    assert all(e["code"] in MESSAGES for e in answer["errors"])


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]"])
async def test_render_refuses_non_objects(jp_fetch: Any, raw: bytes) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, "render", method="POST", body=raw)
    assert info.value.code == 400
    assert "message" in json.loads(info.value.response.body)


@pytest.mark.parametrize(("path", "method"), [("config", "GET"), ("render", "POST")])
async def test_every_route_needs_auth(jp_fetch: Any, path: str, method: str) -> None:
    body = json.dumps({"name": "x", "command": ["x"]}) if method == "POST" else None
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, path, method=method, body=body, headers={"Authorization": ""})
    assert info.value.code == 403


def test_every_verb_is_decorated_authenticated() -> None:
    """The check jupyter_server itself warns about (JupyterServerAuthWarning)."""
    from jupyter_server.serverapp import ServerWebApplication

    for pattern, handler in route_handlers():
        missing = ServerWebApplication._check_handler_auth(None, pattern, handler)  # type: ignore[arg-type]
        assert missing == [], missing


async def test_cookie_authenticated_post_needs_xsrf(jp_fetch: Any) -> None:
    # A token request makes the server set its login cookie, as a browser gets it.
    response = await jp_fetch(*API, "config")
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    login = "; ".join(c for c in cookies if not c.startswith("_xsrf="))
    assert login, "the server sets a login cookie"
    body = {"name": "x", "command": ["x"]}
    with pytest.raises(HTTPClientError) as info:
        await post_json(jp_fetch, "render", body, headers={"Authorization": "", "Cookie": login})
    assert info.value.code == 403
    # With a matching _xsrf cookie and header, as ServerConnection sends them: accepted.
    xsrf = "0123456789abcdef"
    response = await post_json(
        jp_fetch,
        "render",
        body,
        headers={"Authorization": "", "Cookie": f"{login}; _xsrf={xsrf}", "X-XSRFToken": xsrf},
    )
    assert response.code == 200
