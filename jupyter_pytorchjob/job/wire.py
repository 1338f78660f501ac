"""The one wire convention of the REST API, for every model the server sends.

* Every wire model has ``to_wire()``; handlers never send ``__dict__``.
* Keys are camelCase, as the job body (the CLI's long flags), the manifest and
  JavaScript write them: ``exitCode``, ``lastTransition``, ``accessModes``.
* Times are seconds since the epoch, as numbers (``created``, ``time``,
  ``lastAccess``); durations are seconds too.
* Maps of the user's own keys (``env``, ``labels``, a manifest) keep their keys.

``tests/test_openapi.py`` checks what the handlers answer against it.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import fields, is_dataclass
from typing import Any


def camel(name: str) -> str:
    """``exit_code`` -> ``exitCode``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# Each dataclass's fields as (attribute, wire name), found once per class: ``fields()``
# and ``camel()`` per call were most of the time a list of 1,000 jobs took to serialise.
_WIRE_NAMES: dict[type, tuple[tuple[str, str], ...]] = {}
# Values sent as they are, checked before anything else (most of a model's values).
_PLAIN = (str, int, float, bool, type(None))


def dataclass_wire(model: Any, *, skip: Collection[str] = ()) -> dict[str, Any]:
    """A dataclass as a wire object: each field under its camelCase name, enums as
    their value, nested models by their own ``to_wire``. Field by field: ``asdict``
    deep-copies, ~10x slower on a list of 1,000 jobs."""
    names = _WIRE_NAMES.get(type(model))
    if names is None:
        assert is_dataclass(model)
        names = _WIRE_NAMES[type(model)] = tuple((f.name, camel(f.name)) for f in fields(model))
    return {wire: wire_value(getattr(model, name)) for name, wire in names if name not in skip}


def wire_value(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if isinstance(value, list | tuple):
        return [wire_value(v) for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value
