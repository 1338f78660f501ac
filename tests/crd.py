"""Validation of manifests against the real PyTorchJob CRD and the webhook rules.

The CRD is read from ``../shared/crds/`` beside the checkout (or
``$PTJOB_CRDS_DIR``) and never copied into the project. Its schema accepts
unknown fields (the API server prunes them silently); ``strict_validator``
closes every object that declares ``properties``, like ``kubectl
--validate=strict`` does, so a misspelt key fails our tests.
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO = Path(__file__).resolve().parent.parent
CRDS_DIR = Path(os.environ.get("PTJOB_CRDS_DIR", REPO.parent / "shared" / "crds"))
PYTORCHJOB_CRD = CRDS_DIR / "kubeflow.org_pytorchjobs.yaml"


@functools.cache
def pytorchjob_schema() -> dict[str, Any]:
    if not PYTORCHJOB_CRD.exists():
        raise FileNotFoundError(
            f"{PYTORCHJOB_CRD} is missing: the tests need ../shared/crds beside the checkout "
            "(or PTJOB_CRDS_DIR)"
        )
    crd = yaml.safe_load(PYTORCHJOB_CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return version["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def _close(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _close(v) for k, v in schema.items()}
        if out.get("type") == "object" and "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(schema, list):
        return [_close(v) for v in schema]
    return schema


@functools.cache
def strict_validator() -> jsonschema.protocols.Validator:
    schema = _close(copy.deepcopy(pytorchjob_schema()))
    # apiVersion/kind/metadata/spec/status are the only top-level keys of any object.
    return jsonschema.Draft7Validator(schema)


@functools.cache
def lenient_validator() -> jsonschema.protocols.Validator:
    return jsonschema.Draft7Validator(pytorchjob_schema())


def schema_errors(manifest: dict[str, Any], *, strict: bool = True) -> list[str]:
    validator = strict_validator() if strict else lenient_validator()
    return [
        f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(manifest)
    ]
