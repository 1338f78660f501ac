"""Structural checks of untrusted input, before any code reads it.

* ``load_json`` / ``plain_problem``: a request body or a YAML document must be plain
  JSON data (string keys; strings, finite numbers, booleans, null, lists, objects),
  at most ``MAX_DEPTH`` levels deep and ``MAX_VALUES`` values large. That bounds the
  work of everything after it (deep copies, merges, YAML dumps) and rules out what
  JSON cannot answer with (NaN, dates, ``!!binary``) and what an alias bomb expands to.
* ``manifest_shape_errors``: the JSON types of the manifest fields the job model
  reads (``parse_manifest``, ``build_manifest``'s merge of ``extras``, the webhook
  and admission rules) of either kind (``SHAPES``), each refused by its JSON path -
  ``spec.pytorchReplicaSpecs.Worker.replicas: must be an integer, got string 'abc'`` -
  instead of a ``TypeError`` later. A list's items are never null (a null object or
  list is read as absent, but ``containers: [null]`` is no container).

A small walker over a declarative shape, not a JSON Schema library: ``jsonschema``
takes seconds to import, which every ``ptjob`` command would pay.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any, Union

from .errors import FieldError, JobSpecInvalid

#: Kubernetes objects nest about 15 levels; 64 leaves room for any ``extras``.
MAX_DEPTH = 64
#: Values (scalars and containers) in one body or YAML document.
MAX_VALUES = 100_000


def load_json(raw: bytes, *, field: str = "body", what: str = "the request body") -> Any:
    """``raw`` as plain JSON data; ``JobSpecInvalid`` naming ``field`` if it is not
    UTF-8, not JSON, or not plain (see ``plain_problem``)."""

    def invalid(message: str) -> JobSpecInvalid:
        return JobSpecInvalid([FieldError(field, f"{what} {message}")])

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise invalid(f"is not UTF-8 text: {err}") from err
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as err:
        raise invalid(f"is nested more than {MAX_DEPTH} levels deep") from err
    except json.JSONDecodeError as err:
        raise invalid(f"is not valid JSON: {err}") from err
    except ValueError as err:  # an integer past Python's digit limit, or NaN/Infinity
        raise invalid(f"holds a number this API does not accept ({_number_problem(err)})") from err
    problem = plain_problem(value)
    if problem:
        raise invalid(problem)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity: not JSON


def _number_problem(err: ValueError) -> str:
    text = str(err)
    if "digits" in text:  # "Exceeds the limit (4300 digits) for integer string conversion"
        return f"more than {sys.get_int_max_str_digits()} digits"
    return text


def plain_problem(value: Any) -> str | None:
    """Why ``value`` is not plain, bounded JSON data, or None when it is.

    Iterative, so depth is checked without recursing; stops at the first problem
    (an alias bomb is refused after ``MAX_VALUES`` values, not after expanding it).
    """
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    count = 0
    while stack:
        item, depth, where = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return f"holds more than {MAX_VALUES} values"
        if depth > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep (at {where or 'the top'})"
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"has a key {key!r} that is not a string (at {where or 'the top'})"
                if not _is_unicode(key):
                    return f"has a key that is not Unicode text (at {where or 'the top'})"
                stack.append((child, depth + 1, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, f"{where}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str):
            if not _is_unicode(item):
                return f"holds a string that is not Unicode text (a lone surrogate) at {where}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"holds a number JSON cannot carry ({item}) at {where or 'the top'}"
        elif not (item is None or isinstance(item, int | bool)):
            return (
                f"holds a value of type {type(item).__name__} at {where or 'the top'}; only "
                "strings, numbers, true/false, null, lists and objects (quote dates and the like)"
            )
    return None


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate (``"\\ud800"`` is valid JSON, but no character)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- the manifest's shape -------------------------------------------------------------

#: A scalar's allowed Python types; ``type(None)`` among them allows null.
Scalar = tuple[type, ...]
#: A shape: a scalar, an object with known keys (others unchecked), a list of items of
#: one shape (``[shape]``), or ``MapOf(shape)`` (an object whose every value has it).
Shape = Union[Scalar, dict[str, "Shape"], list["Shape"], "MapOf"]


class MapOf:
    """An object whose values all have ``shape`` (labels, resource limits)."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape


NONE = type(None)
STRING: Scalar = (str, NONE)
INTEGER: Scalar = (int, NONE)
COUNT: Scalar = (int,)  # ``replicas``: absent means 1, null is not a number
BOOLEAN: Scalar = (bool, NONE)
QUANTITY: Scalar = (str, int, float)
OBJECT: dict[str, Shape] = {}

_METADATA: dict[str, Shape] = {
    "name": STRING,
    "namespace": STRING,
    "labels": MapOf(STRING),
    "annotations": MapOf(STRING),
}
_ENV: list[Shape] = [{"name": STRING, "value": STRING, "valueFrom": OBJECT}]
_RESOURCES: dict[str, Shape] = {"limits": MapOf(QUANTITY), "requests": MapOf(QUANTITY)}
_CONTAINER: dict[str, Shape] = {
    "name": STRING,
    "image": STRING,
    "command": [STRING],
    "args": [STRING],
    "workingDir": STRING,
    "env": _ENV,
    "resources": _RESOURCES,
    "volumeMounts": [{"name": STRING, "mountPath": STRING, "subPath": STRING, "readOnly": BOOLEAN}],
}
_POD_SPEC: dict[str, Shape] = {
    "containers": [_CONTAINER],
    "initContainers": [_CONTAINER],
    "volumes": [
        {
            "name": STRING,
            "persistentVolumeClaim": {"claimName": STRING, "readOnly": BOOLEAN},
            "emptyDir": {"medium": STRING, "sizeLimit": (*QUANTITY, NONE)},
        }
    ],
    "nodeSelector": MapOf(STRING),
    "tolerations": [
        {
            "key": STRING,
            "operator": STRING,
            "value": STRING,
            "effect": STRING,
            "tolerationSeconds": INTEGER,
        }
    ],
}
_REPLICA: dict[str, Shape] = {
    "replicas": COUNT,
    "restartPolicy": STRING,
    "template": {"metadata": _METADATA, "spec": _POD_SPEC},
}
MANIFEST: dict[str, Shape] = {
    "apiVersion": STRING,
    "kind": STRING,
    "metadata": _METADATA,
    "spec": {
        "nprocPerNode": (str, int, NONE),
        "elasticPolicy": OBJECT,
        "runPolicy": {
            "cleanPodPolicy": STRING,
            "backoffLimit": INTEGER,
            "activeDeadlineSeconds": INTEGER,
            "ttlSecondsAfterFinished": INTEGER,
            "managedBy": STRING,
            "suspend": BOOLEAN,
            "schedulingPolicy": OBJECT,
        },
        "pytorchReplicaSpecs": MapOf(_REPLICA),
    },
    "status": OBJECT,
}


_POD_TEMPLATE: dict[str, Shape] = {"metadata": _METADATA, "spec": _POD_SPEC}
#: A TrainJob (Kubeflow Trainer v2.3, ``pkg/apis/trainer/v1alpha1/trainjob_types.go``):
#: what ``kinds/trainjob`` reads, our runtime patch's pod template included.
TRAINJOB_MANIFEST: dict[str, Shape] = {
    "apiVersion": STRING,
    "kind": STRING,
    "metadata": _METADATA,
    "spec": {
        "runtimeRef": {"name": STRING, "kind": STRING, "apiGroup": STRING},
        "trainer": {
            "image": STRING,
            "command": [STRING],
            "args": [STRING],
            "env": _ENV,
            "numNodes": INTEGER,
            "numProcPerNode": INTEGER,
            "resourcesPerNode": _RESOURCES,
        },
        "initializer": {"dataset": OBJECT, "model": OBJECT},
        "runtimePatches": [
            {
                "manager": STRING,
                "trainingRuntimeSpec": {
                    "template": {
                        "metadata": _METADATA,
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": STRING,
                                    "template": {
                                        "metadata": _METADATA,
                                        "spec": {"template": _POD_TEMPLATE},
                                    },
                                }
                            ]
                        },
                    }
                },
            }
        ],
        "activeDeadlineSeconds": INTEGER,
        "suspend": BOOLEAN,
        "managedBy": STRING,
    },
    "status": OBJECT,
}
#: Each kind's shape by its ``kind``; any other kind is read as a PyTorchJob (the default).
SHAPES: dict[str, dict[str, Shape]] = {"PyTorchJob": MANIFEST, "TrainJob": TRAINJOB_MANIFEST}


def manifest_shape_errors(manifest: Any, *, prefix: str = "", kind: Any = None) -> list[FieldError]:
    """Every field of ``manifest`` (or of a manifest-shaped part, such as ``extras``)
    whose JSON type the job model cannot read, named by its path after ``prefix``.
    The shape is ``kind``'s (any case), else that of the manifest's own ``kind``."""
    if kind is None and isinstance(manifest, Mapping):
        kind = manifest.get("kind")
    shape = next(
        (s for name, s in SHAPES.items() if isinstance(kind, str) and name.lower() == kind.lower()),
        MANIFEST,
    )
    errors: list[FieldError] = []
    _check(manifest, shape, prefix, errors)
    return errors


_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    NONE: "null",
    dict: "an object",
    list: "a list",
}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _check(value: Any, shape: Shape, path: str, errors: list[FieldError]) -> None:
    if isinstance(shape, tuple):
        # JSON's true is no integer, though Python's True is an int.
        ok = bool in shape if isinstance(value, bool) else isinstance(value, shape)
        if not ok:
            wanted = " or ".join(_TYPE_NAMES[t] for t in shape if t is not NONE)
            shown = json.dumps(value)[:40] if not isinstance(value, dict | list) else ""
            errors.append(
                FieldError(path or "body", f"must be {wanted}, got {_kind(value)} {shown}".rstrip())
            )
        return
    if value is None:  # Kubernetes reads a null object or list as absent
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            errors.append(FieldError(path or "body", f"must be a list, got {_kind(value)}"))
            return
        for index, item in enumerate(value):
            if item is None:  # no container, no env var, no argument
                errors.append(FieldError(f"{path}[{index}]", "must not be null"))
                continue
            _check(item, shape[0], f"{path}[{index}]", errors)
        return
    if not isinstance(value, Mapping):
        errors.append(FieldError(path or "body", f"must be an object, got {_kind(value)}"))
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if isinstance(shape, MapOf):
            _check(item, shape.shape, where, errors)
        elif key in shape:
            _check(item, shape[key], where, errors)
