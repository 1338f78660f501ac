"""What a client sends the API server, decoded as the API server decodes it: JSON numbers
as Go reads them, the object's type meta and namespace checked against the URL, RFC 7386
merge patches and RFC 6902 JSON patches. Errors are the ``metav1.Status`` answers of
k8s.io/apimachinery (``shared/notes/fake-kube.md``); used by ``server.py``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from aiohttp import web

from .api import KubeError, Resource, invalid


def go_float(text: str) -> float | int:
    """A JSON number with a fraction or exponent as the API server gives it back: it
    decodes it to a float64 (k8s.io/apimachinery pkg/util/json ``convertNumber``: not an
    int64, so ``Float64()``) and Go's encoding/json writes a whole float64 without a
    fraction (``floatEncoder``: ``strconv.AppendFloat(b, f, 'f', -1, 64)`` below 1e21),
    so ``2.0`` comes back as ``2`` - and stays ``2`` in every later read."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


async def read_body(request: web.Request) -> Any:
    """The request's JSON body (empty: null); 400 for what does not parse."""
    try:
        return json.loads(await request.read() or b"null", parse_float=go_float)
    except ValueError as err:
        raise KubeError(400, f"json parse error: {err}") from None


def check_body(res: Resource, body: Any, ns: str) -> dict[str, Any]:
    """The object a create or update sends: a map whose type meta and namespace, when
    given, are the URL's."""
    if not isinstance(body, dict):
        raise KubeError(400, f"the object provided is unrecognized (must be of type {res.kind})")
    if body.get("apiVersion") not in (None, res.api_version):
        raise KubeError(
            400,
            f"the API version in the data ({body['apiVersion']}) does not match the expected "
            f"API version ({res.api_version})",
        )
    if body.get("kind") not in (None, res.kind):
        # apiextensions-apiserver customresource/validator.go ValidateTypeMeta (422);
        # built-in types fail earlier, in decoding (400).
        if not res.group:
            raise KubeError(
                400,
                f"the kind in the data ({body['kind']}) does not match the expected kind "
                f"({res.kind})",
            )
        name = ((body.get("metadata") or {}) if isinstance(body.get("metadata"), dict) else {}).get(
            "name"
        ) or ""
        raise invalid(
            res,
            name,
            [("kind", f"Invalid value: {json.dumps(body['kind'])}: must be {res.kind}")],
        )
    meta = body.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise KubeError(400, "metadata must be an object")
    if res.namespaced and (meta or {}).get("namespace") not in (None, "", ns):
        raise KubeError(
            400,
            "the namespace of the provided object does not match the namespace sent on the request",
        )
    return body


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(doc: Any, ops: list[Any]) -> Any:
    """RFC 6902 (add, remove, replace, test, move, copy)."""
    doc = copy.deepcopy(doc)

    def split(path: str) -> tuple[Any, str]:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        return parent, parts[-1]

    def get(path: str) -> Any:
        parent, key = split(path)
        return parent[int(key)] if isinstance(parent, list) else parent[key]

    def put(path: str, value: Any, replace: bool) -> None:
        parent, key = split(path)
        if isinstance(parent, list):
            if key == "-":
                parent.append(value)
            elif replace:
                parent[int(key)] = value
            else:
                parent.insert(int(key), value)
        else:
            if replace and key not in parent:
                raise KeyError(key)
            parent[key] = value

    def remove(path: str) -> Any:
        parent, key = split(path)
        return parent.pop(int(key) if isinstance(parent, list) else key)

    try:
        for op in ops:
            kind, path = op["op"], op["path"]
            if kind == "add":
                put(path, copy.deepcopy(op["value"]), False)
            elif kind == "replace":
                put(path, copy.deepcopy(op["value"]), True)
            elif kind == "remove":
                remove(path)
            elif kind == "test":
                if get(path) != op["value"]:
                    raise ValueError(f"testing value {path} failed")
            elif kind in ("move", "copy"):
                value = remove(op["from"]) if kind == "move" else copy.deepcopy(get(op["from"]))
                put(path, value, False)
            else:
                raise ValueError(f"unexpected kind: {kind}")
    except (KeyError, IndexError, ValueError, TypeError) as err:
        raise KubeError(
            422, f"the server rejected our request due to an error in our request: {err}"
        ) from None
    return doc
