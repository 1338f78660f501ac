"""What the API server does with a custom resource's structural schema on write.

Written from the apiextensions-apiserver's behaviour (k8s.io/apiextensions-apiserver
``pkg/apiserver/schema/pruning/algorithm.go`` and ``pkg/apiserver/validation``), not
from our code:

* **Pruning**: a field not declared in an object schema's ``properties`` is dropped
  silently, unless the schema says ``x-kubernetes-preserve-unknown-fields: true``;
  maps (``additionalProperties``) keep every key. The root ``metadata`` is
  ObjectMeta (the server keeps only its own fields there).
* **Validation** of what is left, with errors worded as ``field.Error`` prints them:
  ``spec.nprocPerNode: Invalid value: "integer": spec.nprocPerNode in body must be of
  type string: "integer"``.

The schema is the real CRD read from ``../shared/crds`` (never copied into the
project); without it (a bare clone) ``load`` returns None and the fake neither
prunes nor validates the schema — the tests that need it skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

# ObjectMeta's fields (k8s.io/apimachinery/pkg/apis/meta/v1/types.go): the only keys the
# server keeps in a root ``metadata``.
OBJECT_META = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
}  # fmt: skip
GO_TYPES = {
    str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
    dict: "object", type(None): "null",
}  # fmt: skip


def field_path(parts: Iterator[Any] | list[Any]) -> str:
    """``['spec', 'containers', 0, 'name']`` -> ``spec.containers[0].name``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _go_value(value: Any) -> str:
    """A value as ``field.Invalid`` quotes it (strings quoted, numbers bare)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


class StructuralSchema:
    """One CRD version's ``openAPIV3Schema``: prune, then validate."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator = jsonschema.Draft7Validator(schema)

    # -- pruning ------------------------------------------------------------------------

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Drop undeclared fields in place; the paths dropped (for tests to check)."""
        dropped: list[str] = []
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            for key in [k for k in meta if k not in OBJECT_META]:
                del meta[key]
                dropped.append(f"metadata.{key}")
        properties = self.schema.get("properties") or {}
        for key in list(obj):
            if key in ("apiVersion", "kind", "metadata"):
                continue
            if key not in properties:
                del obj[key]
                dropped.append(key)
            else:
                self._prune(obj[key], properties[key], [key], dropped)
        return dropped

    def _prune(
        self, value: Any, schema: dict[str, Any], path: list[Any], dropped: list[str]
    ) -> None:
        if isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                for i, item in enumerate(value):
                    self._prune(item, items, [*path, i], dropped)
            return
        if not isinstance(value, dict):
            return
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            # Unknown fields stay; declared ones are still pruned inside.
            for key, sub in (schema.get("properties") or {}).items():
                if key in value:
                    self._prune(value[key], sub, [*path, key], dropped)
            return
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in value:
                self._prune(value[key], additional, [*path, key], dropped)
            return
        properties = schema.get("properties") or {}
        for key in list(value):
            if key in properties:
                self._prune(value[key], properties[key], [*path, key], dropped)
            elif additional is not True:
                del value[key]
                dropped.append(field_path([*path, key]))

    # -- defaulting ---------------------------------------------------------------------

    def default(self, obj: dict[str, Any]) -> None:
        """Fill the schema's ``default`` values where a field is missing, in place (the
        apiextensions-apiserver defaults on create, update and read,
        ``pkg/apiserver/schema/defaulting/algorithm.go``)."""
        self._default(obj, self.schema)

    def _default(self, value: Any, schema: dict[str, Any]) -> None:
        if isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                for item in value:
                    self._default(item, items)
            return
        if not isinstance(value, dict):
            return
        for key, sub in (schema.get("properties") or {}).items():
            if key == "metadata" and schema is self.schema:
                continue
            if key not in value and "default" in sub:
                value[key] = json.loads(json.dumps(sub["default"]))
            if key in value:
                self._default(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for sub_value in value.values():
                self._default(sub_value, additional)

    # -- validation ---------------------------------------------------------------------

    def errors(self, obj: dict[str, Any]) -> list[tuple[str, str]]:
        """``(field, detail)`` pairs as the API server words them; root metadata is the
        server's own business (checked elsewhere), so it is left out here."""
        out = []
        for err in sorted(self._validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            parts = list(err.absolute_path)
            if parts[:1] == ["metadata"]:
                continue
            out.append(self._worded(err, parts))
        return out

    @staticmethod
    def _worded(err: jsonschema.ValidationError, parts: list[Any]) -> tuple[str, str]:
        where = field_path(parts)
        value = err.instance
        if err.validator == "type":
            actual = GO_TYPES.get(type(value), "object")
            return where, (
                f'Invalid value: "{actual}": {where} in body must be of type '
                f'{err.validator_value}: "{actual}"'
            )
        if err.validator == "enum":
            allowed = ", ".join(json.dumps(v) for v in err.validator_value)
            return where, f"Unsupported value: {_go_value(value)}: supported values: {allowed}"
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else "?"
            return field_path([*parts, missing]), "Required value"
        if err.validator in ("minimum", "maximum"):
            relation = "greater" if err.validator == "minimum" else "less"
            return where, (
                f"Invalid value: {_go_value(value)}: {where} in body should be {relation} than "
                f"or equal to {err.validator_value}"
            )
        if err.validator == "pattern":
            return where, (
                f"Invalid value: {_go_value(value)}: {where} in body should match "
                f"'{err.validator_value}'"
            )
        if err.validator == "maxLength":
            return where, f"Too long: may not be longer than {err.validator_value}"
        if err.validator == "minLength":
            return where, (
                f"Invalid value: {_go_value(value)}: {where} in body should be at least "
                f"{err.validator_value} chars long"
            )
        return where, f"Invalid value: {_go_value(value)}: {err.message}"


def load(crd: dict[str, Any] | None, version: str) -> StructuralSchema | None:
    if crd is None:
        return None
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            return StructuralSchema(entry["schema"]["openAPIV3Schema"])
    return None
