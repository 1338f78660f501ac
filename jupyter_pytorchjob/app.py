"""The Jupyter server extension: configuration and routes.

Handlers stay thin (see ``handlers.py``); everything they do is delegated to the
job model and manifest builder in ``jupyter_pytorchjob.job``.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Unicode, default

from . import __version__
from .job.spec import DEFAULT_GPU_RESOURCE, DEFAULT_IMAGE, DEFAULT_SHM


class PyTorchJobApp(ExtensionApp):
    """Submit, watch and inspect Kubeflow PyTorchJobs from JupyterLab."""

    name = "jupyter_pytorchjob"
    load_other_extensions = True

    default_image = Unicode(
        DEFAULT_IMAGE,
        config=True,
        help=(
            "Container image a new job runs when the user names none. In a cluster the "
            "notebook's own image is preferred, so that the job sees the same packages."
        ),
    )
    gpu_resource = Unicode(
        DEFAULT_GPU_RESOURCE,
        config=True,
        help=(
            "Extended resource name used for GPUs in the container limits, e.g. "
            "'nvidia.com/gpu', 'amd.com/gpu' or a vendor's virtual GPU resource."
        ),
    )
    default_shm = Unicode(
        DEFAULT_SHM,
        config=True,
        help=(
            "Default size of /dev/shm (a memory-backed emptyDir) in every replica, as a "
            "Kubernetes quantity such as '2Gi'. The empty string turns it off by default. "
            "PyTorch DataLoader workers and NCCL need more than the container runtime's 64Mi."
        ),
    )
    backend = Unicode(
        config=True,
        help="Where jobs run: 'local' (processes on this machine) or 'kubernetes'.",
    )

    @default("backend")
    def _default_backend(self) -> str:
        return "local"

    def initialize_settings(self) -> None:
        """Expose the effective configuration to the handlers."""
        self.settings["pytorchjob_config"] = self.config_model()

    def config_model(self) -> dict[str, Any]:
        """The wire model of ``GET pytorchjob/api/config``."""
        return {
            "version": __version__,
            "backend": self.backend,
            "defaults": {
                "image": self.default_image,
                "gpuResource": self.gpu_resource,
                "shm": self.default_shm,
            },
        }

    def initialize_handlers(self) -> None:
        """Register the REST routes under ``<base_url>pytorchjob/api/``."""
        from .handlers import route_handlers

        self.handlers.extend(route_handlers())
