"""The fake's Kubeflow Trainer v2.3.0 with the runtimes of ``../shared/runtimes/more``: the
torchtune BuiltinTrainer runtimes (initializer jobs, ``tune run`` rewriting), the data-cache
runtime and the other frameworks, as v2.3.0 ships them (``manifests/base/runtimes``)."""

from __future__ import annotations

import pytest

from .crd import RUNTIMES_DIR, TRAINJOB_CRD, require_crds
from .fake_kube import FakeKube
from .test_fake_kube import apis

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
MORE = RUNTIMES_DIR / "more"
# manifests/base/runtimes at v2.3.0: the names of the runtimes beside torch-distributed and
# deepspeed-distributed (kustomization.yaml lists them).
MORE_RUNTIMES = {
    "torchtune-llama3.2-1b": "torchtune",
    "torchtune-llama3.2-3b": "torchtune",
    "torchtune-qwen2.5-1.5b": "torchtune",
    "torch-distributed-with-cache": "torch",
    "jax-distributed": "jax",
    "mlx-distributed": "mlx",
    "xgboost-distributed": "xgboost",
}


@pytest.fixture(autouse=True)
def _more_runtimes() -> None:
    """These tests need the TrainJob CRD and ../shared/runtimes/more beside the checkout."""
    require_crds(TRAINJOB_CRD)
    require_crds(MORE / "llama3_2_1B.yaml")


async def test_the_fake_serves_every_runtime_v2_3_0_ships(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        listed = await custom.list_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes")
    frameworks = {
        i["metadata"]["name"]: i["metadata"]["labels"]["trainer.kubeflow.org/framework"]
        for i in listed["items"]
    }
    assert frameworks.items() >= MORE_RUNTIMES.items()
    assert {"torch-distributed", "deepspeed-distributed"} <= set(frameworks)
