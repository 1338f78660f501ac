"""TrainJob manifests against the published ``kubeflow-trainer-api`` 2.3.0 models (always)
and the real v2.3.0 CRD schema when ``../shared/crds`` is there (see ``tests/crd.py``:
skipped with the reason without it, a failure under ``PTJOB_REQUIRE_CRDS=1``)."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema
import yaml

from .crd import CRDS_DIR, _close, _compare, require_crds

TRAINJOB_CRD = CRDS_DIR / "trainer.kubeflow.org_trainjobs.yaml"


def model_errors(manifest: dict[str, Any]) -> list[str]:
    """Fields the published models drop or change, each as ``path: problem``."""
    from kubeflow_trainer_api.models import TrainerV1alpha1TrainJob
    from pydantic import ValidationError

    try:
        back = TrainerV1alpha1TrainJob.from_dict(copy.deepcopy(manifest)).to_dict()
    except (ValidationError, ValueError, TypeError) as err:
        return [f"<model>: {err}"]
    problems: list[str] = []
    _compare(manifest, back, "", problems)
    return problems


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    crd = yaml.safe_load(TRAINJOB_CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return jsonschema.Draft7Validator(_close(version["schema"]["openAPIV3Schema"]))


def schema_errors(manifest: dict[str, Any]) -> list[str]:
    """The strict (no unknown field) CRD-schema errors; skips without the CRD."""
    require_crds()
    return [
        f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in _validator().iter_errors(manifest)
    ]
