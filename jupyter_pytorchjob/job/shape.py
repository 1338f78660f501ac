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
from .messages import Message, either, msg

#: Kubernetes objects nest about 15 levels; 64 leaves room for any ``extras``.
MAX_DEPTH = 64
#: Values (scalars and containers) in one body or YAML document.
MAX_VALUES = 100_000


def load_json(raw: bytes, *, field: str = "body", what: str = "request_body") -> Any:
    """``raw`` as plain JSON data; ``JobSpecInvalid`` naming ``field`` if it is not
    UTF-8, not JSON, or not plain (see ``plain_problem``). ``what`` is the code of the
    message that names the text (``request_body``: "the request body")."""

    def invalid(problem: Message) -> JobSpecInvalid:
        return JobSpecInvalid(
            [FieldError(field, msg("what_problem", what=msg(what), problem=problem))]
        )

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise invalid(msg("not_utf8", error=str(err))) from err
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as err:
        raise invalid(msg("nested_deep", maximum=MAX_DEPTH)) from err
    except json.JSONDecodeError as err:
        raise invalid(msg("not_json", error=str(err))) from err
    except ValueError as err:  # an integer past Python's digit limit, or NaN/Infinity
        raise invalid(_number_problem(err)) from err
    problem = plain_problem(value)
    if problem:
        raise invalid(problem)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity: not JSON


def _number_problem(err: ValueError) -> Message:
    text = str(err)
    if "digits" in text:  # "Exceeds the limit (4300 digits) for integer string conversion"
        return msg("number_digits", digits=sys.get_int_max_str_digits())
    return msg("number_refused", error=text)


def plain_problem(value: Any) -> Message | None:
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
            return msg("too_many_values", maximum=MAX_VALUES)
        if depth > MAX_DEPTH:
            return msg("nested_deep_at", maximum=MAX_DEPTH, where=_at(where))
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return msg("key_not_string", key=repr(key), where=_at(where))
                if not _is_unicode(key):
                    return msg("key_not_unicode", where=_at(where))
                stack.append((child, depth + 1, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, f"{where}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str):
            if not _is_unicode(item):
                return msg("string_not_unicode", where=_at(where))
        elif isinstance(item, float):
            if not math.isfinite(item):
                return msg("number_not_json", number=str(item), where=_at(where))
        elif not (item is None or isinstance(item, int | bool)):
            return msg("value_not_json", type=type(item).__name__, where=_at(where))
    return None


def _at(where: str) -> str | Message:
    """Where in a value: its path, or "the top"."""
    return where or msg("the_top")


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
    str: msg("type_str"),
    int: msg("type_int"),
    float: msg("type_float"),
    bool: msg("type_bool"),
    NONE: msg("type_null"),
    dict: msg("type_dict"),
    list: msg("type_list"),
}


def _kind(value: Any) -> Message | str:
    if isinstance(value, bool):
        return _TYPE_NAMES[bool]
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _check(value: Any, shape: Shape, path: str, errors: list[FieldError]) -> None:
    if isinstance(shape, tuple):
        # JSON's true is no integer, though Python's True is an int.
        ok = bool in shape if isinstance(value, bool) else isinstance(value, shape)
        if not ok:
            wanted = either(*(_TYPE_NAMES[t] for t in shape if t is not NONE))
            got = _kind(value)
            if isinstance(value, dict | list):
                problem = msg("must_be_type", wanted=wanted, got=got)
            else:
                problem = msg(
                    "must_be_type_value", wanted=wanted, got=got, value=json.dumps(value)[:40]
                )
            errors.append(FieldError(path or "body", problem))
        return
    if value is None:  # Kubernetes reads a null object or list as absent
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            errors.append(
                FieldError(
                    path or "body", msg("must_be_type", wanted=msg("type_list"), got=_kind(value))
                )
            )
            return
        for index, item in enumerate(value):
            if item is None:  # no container, no env var, no argument
                errors.append(FieldError(f"{path}[{index}]", msg("not_null")))
                continue
            _check(item, shape[0], f"{path}[{index}]", errors)
        return
    if not isinstance(value, Mapping):
        errors.append(
            FieldError(
                path or "body", msg("must_be_type", wanted=msg("type_dict"), got=_kind(value))
            )
        )
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if isinstance(shape, MapOf):
            _check(item, shape.shape, where, errors)
        elif key in shape:
            _check(item, shape[key], where, errors)
