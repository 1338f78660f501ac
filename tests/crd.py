"""Validation of manifests: the published API models always, the real CRD when it is there.

Two independent checks:

- ``model_errors``: the manifest read into ``KubeflowOrgV1PyTorchJob`` (the
  ``kubeflow-training`` 1.9.4 models, over the sync ``kubernetes`` client's
  ``V1PodTemplateSpec`` and friends) with the generated ``ApiClient.deserialize``
  and written back with ``sanitize_for_serialization``. A field the models do
  not know (a misspelt key), a value of the wrong type or a missing required
  field shows as a lost or changed field. It needs nothing beside the checkout,
  so it runs everywhere.
- ``schema_errors``: the CRD's ``openAPIV3Schema`` as JSON Schema. The CRD is
  read from ``../shared/crds/`` beside the checkout (or ``$PTJOB_CRDS_DIR``)
  and never copied into the project. Its schema accepts unknown fields (the API
  server prunes them silently); the strict form closes every object that
  declares ``properties``, like ``kubectl --validate=strict`` does. Without the
  CRD a test calling it is skipped with the reason, or fails when
  ``PTJOB_REQUIRE_CRDS=1`` (CI sets it, so CI always runs them).

``manifest_errors`` is what the other tests use: the models, plus the strict
schema when the CRD is there.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO = Path(__file__).resolve().parent.parent
CRDS_DIR = Path(os.environ.get("PTJOB_CRDS_DIR", REPO.parent / "shared" / "crds"))
PYTORCHJOB_CRD = CRDS_DIR / "kubeflow.org_pytorchjobs.yaml"
# Kubeflow Trainer v2.3.0: the TrainJob CRD and the runtimes as shipped (../shared/runtimes).
TRAINJOB_CRD = CRDS_DIR / "trainer.kubeflow.org_trainjobs.yaml"
RUNTIMES_DIR = CRDS_DIR.parent / "runtimes"
REQUIRE_CRDS_VAR = "PTJOB_REQUIRE_CRDS"


def crds_available() -> bool:
    return PYTORCHJOB_CRD.exists()


def require_crds(crd: Path = PYTORCHJOB_CRD) -> None:
    """Skip the calling test when the CRD is missing (fail under PTJOB_REQUIRE_CRDS=1)."""
    if crd.exists():
        return
    import pytest

    reason = (
        f"CRD-schema test: {crd} is missing (put ../shared/crds beside the "
        "checkout or set PTJOB_CRDS_DIR); manifests are still checked against the "
        "kubeflow-training API models"
    )
    if os.environ.get(REQUIRE_CRDS_VAR) == "1":
        pytest.fail(f"{reason}, but {REQUIRE_CRDS_VAR}=1 requires the CRD")
    pytest.skip(reason)


# -- the published API models ----------------------------------------------------------

# Values the models declare as strings but the API accepts as int-or-string (quantities):
# an int read back as its string is the same value.
_QUANTITY_PARENTS = frozenset({"limits", "requests", "overhead", "minResources"})
_QUANTITY_KEYS = frozenset({"sizeLimit"})


class _Response:
    """What ``ApiClient.deserialize`` reads: an object with ``.data``."""

    def __init__(self, data: str) -> None:
        self.data = data


@functools.cache
def _api_client() -> Any:
    import kubeflow.training.models as models
    from kubeflow.training.api_client import ApiClient
    from kubernetes.client import V2MetricSpec

    # kubeflow-training 1.9.4's models name two types they do not ship: elasticPolicy.metrics
    # items are autoscaling/v2 MetricSpecs (the kubernetes client's V2MetricSpec), and
    # schedulingPolicy.minResources values are quantities (int or string, kept as written).
    if not hasattr(models, "K8sIoApiAutoscalingV2MetricSpec"):
        models.K8sIoApiAutoscalingV2MetricSpec = V2MetricSpec
    client = ApiClient()
    client.NATIVE_TYPES_MAPPING = {**client.NATIVE_TYPES_MAPPING, "Quantity": object}
    return client


def model_errors(manifest: dict[str, Any]) -> list[str]:
    """Fields the published models drop or change, each as ``path: problem``."""
    client = _api_client()
    try:
        model = client.deserialize(_Response(json.dumps(manifest)), "KubeflowOrgV1PyTorchJob")
    except (ValueError, TypeError) as err:  # a required field missing, a wrong type
        return [f"<model>: {err}"]
    back = client.sanitize_for_serialization(model)
    problems: list[str] = []
    _compare(manifest, back, "", problems)
    return problems


def _compare(original: Any, back: Any, path: str, problems: list[str]) -> None:
    if isinstance(original, dict):
        if not isinstance(back, dict):
            problems.append(f"{path or '<root>'}: object became {back!r}")
            return
        for key, value in original.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in back:
                if value is not None:
                    problems.append(f"{where}: unknown to the API models (dropped)")
                continue
            if (
                (path.rsplit(".", 1)[-1] in _QUANTITY_PARENTS or key in _QUANTITY_KEYS)
                and not isinstance(value, bool)
                and str(back[key]) in (str(value), f"{value}.0")
            ):
                continue  # a quantity read back as a string or number of the same value
            _compare(value, back[key], where, problems)
    elif isinstance(original, list):
        if not isinstance(back, list) or len(back) != len(original):
            problems.append(f"{path}: list became {back!r}")
            return
        for index, (item, item_back) in enumerate(zip(original, back, strict=True)):
            _compare(item, item_back, f"{path}[{index}]", problems)
    elif original != back or type(original) is not type(back):
        problems.append(f"{path}: {original!r} became {back!r}")


# -- the CRD schema ---------------------------------------------------------------------


@functools.cache
def pytorchjob_schema() -> dict[str, Any]:
    if not PYTORCHJOB_CRD.exists():
        raise FileNotFoundError(
            f"{PYTORCHJOB_CRD} is missing: the CRD-schema checks need ../shared/crds beside "
            "the checkout (or PTJOB_CRDS_DIR)"
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
    """CRD-schema errors; skips the calling test without the CRD (see ``require_crds``)."""
    require_crds()
    return _schema_errors(manifest, strict=strict)


def _schema_errors(manifest: dict[str, Any], *, strict: bool) -> list[str]:
    validator = strict_validator() if strict else lenient_validator()
    return [
        f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(manifest)
    ]


def manifest_errors(manifest: dict[str, Any]) -> list[str]:
    """The API models' complaints, plus the strict CRD schema's when the CRD is there."""
    errors = model_errors(manifest)
    if crds_available():
        errors += _schema_errors(manifest, strict=True)
    return errors
