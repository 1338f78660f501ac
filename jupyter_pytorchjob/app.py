"""The Jupyter server extension: configuration and routes.

Handlers stay thin (see ``handlers.py``); everything they do is delegated to the
job model and manifest builder in ``jupyter_pytorchjob.job``.
"""

from __future__ import annotations

import functools
import gc
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, CaselessStrEnum, Dict, Float, Integer, List, Unicode, default

from .backends import Backend, BackendError, create_backend
from .job.fields import DEFAULT_GPU_RESOURCE, DEFAULT_IMAGE, DEFAULT_SHM, config_fields
from .package_version import __version__
from .rest import DEFAULT_MAX_LOG_STREAMS


class PyTorchJobApp(ExtensionApp):
    """Submit, watch and inspect Kubeflow PyTorchJobs and TrainJobs from JupyterLab (the
    class keeps its name: it is the ``c.PyTorchJobApp`` section of users' configuration)."""

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
    api_max_body_size = Integer(
        1024 * 1024,
        min=1024,
        config=True,
        help=(
            "Largest JSON request body, in bytes, of the pytorchjob API (a job, a render, "
            "a TensorBoard request); a larger one is refused with 413. A job's script "
            "travels in its body (at most 120 KiB each)."
        ),
    )

    @default("backend")
    def _default_backend(self) -> str:
        return "local"

    # -- kubernetes backend (jupyter_pytorchjob.backends.kubernetes) -------------------
    namespace = Unicode(
        "",
        config=True,
        help=(
            "Kubernetes namespace of the jobs. Empty: the notebook pod's own namespace "
            "(its service account's) in a cluster, else the kubeconfig context's."
        ),
    )
    allowed_namespaces = List(
        Unicode(),
        config=True,
        help=(
            "Other namespaces a request may name (?namespace= in the REST API). A request "
            "for any namespace not listed here is refused with 403."
        ),
    )
    dry_run = Bool(
        False,
        config=True,
        help=(
            "Validate every submission with a server-side dry run (dryRun=All) first, so the "
            "operator's webhook rejects a bad job before anything is created."
        ),
    )

    kubernetes_connect_timeout = Float(
        5.0,
        config=True,
        help=(
            "Seconds to connect to the Kubernetes API server, TLS handshake included. A "
            "server that accepts connections but never answers fails after this long with "
            "a message saying so, instead of holding the panel for a minute."
        ),
    )
    kubernetes_request_timeout = Float(
        30.0,
        config=True,
        help=(
            "Seconds to wait for the Kubernetes API server's answer to one request. Followed "
            "logs are exempt: a quiet training job may print nothing for a long time."
        ),
    )

    max_log_streams = Integer(
        DEFAULT_MAX_LOG_STREAMS,
        config=True,
        help=(
            "Log streams (log views, `ptjob logs`, websockets or plain) this server serves "
            "at once; one more is refused with 503 saying so. Each holds a connection to "
            "the Kubernetes API server per replica, or a poll of the local log files."
        ),
    )

    kubernetes_progress_interval = Float(
        5.0,
        config=True,
        help=(
            "Seconds between reads of each running job's progress on the kubernetes "
            "backend while somebody looks at the job list: the new lines of its master's "
            "(else rank 0's) pod log through the API server, and its TensorBoard event "
            "files where this notebook mounts the job's PVC. One small log request per "
            "running job per interval; polling stops a minute after the last look. 0 "
            "turns these sources off (a TrainJob's trainerStatus still shows)."
        ),
    )

    notebook_pod = Unicode(
        "",
        config=True,
        help=(
            "Name of the notebook's own pod, read to default a new job's image and PVC "
            "mounts to the notebook's and to find a job's log directory on a shared PVC. "
            "Empty: $HOSTNAME when running in a pod."
        ),
    )

    # -- local backend (jupyter_pytorchjob.backends.local) ---------------------------
    local_root = Unicode(
        "",
        config=True,
        help=(
            "Where the local backend keeps its jobs (state, logs). Empty: $PTJOB_HOME, else "
            "<jupyter data dir>/pytorchjob - the same place the ptjob CLI and the %ptjob "
            "magic use, so all three see the same jobs."
        ),
    )
    volume_root = Unicode(
        "",
        config=True,
        help=(
            "The local backend maps a PVC claim to <volume_root>/<claim> (created on first "
            "use). Empty: $PTJOB_VOLUMES, else <local_root>/volumes."
        ),
    )
    claim_dirs = Dict(
        value_trait=Unicode(),
        config=True,
        help=(
            "Local backend: explicit claim -> directory mappings that override volume_root, "
            "e.g. {'workspace': '/home/me'} so that a job mounting the claim 'workspace' "
            "reads and writes your home directory."
        ),
    )

    local_max_nodes = Integer(
        0,
        min=0,
        config=True,
        help=(
            "Local backend: the most nodes one job may have on this machine (each node is "
            "a process; with torchrun, nprocPerNode of them). A job asking for more is "
            "refused with a message naming this setting. 0: 4 per CPU of this machine."
        ),
    )

    # -- TensorBoard (jupyter_pytorchjob.tensorboard) ---------------------------
    tensorboard_roots = List(
        Unicode(),
        config=True,
        help=(
            "Directories TensorBoard may read: a requested log directory must lie inside "
            "one of them after symlinks are resolved ('..' is always refused). Relative roots "
            "and relative log directories are taken relative to the server's root_dir. "
            "Default: root_dir plus the directories the backend stores job data in (the "
            "local backend's volume_root and claim_dirs)."
        ),
    )
    tensorboard_idle_timeout = Float(
        3600.0,
        config=True,
        help=(
            "Seconds without a request through the proxy after which a TensorBoard process "
            "is stopped. 0 keeps them until they are closed or the server stops."
        ),
    )
    tensorboard_reload_interval = Float(
        2.0,
        config=True,
        help=(
            "TensorBoard's --reload_interval in seconds: how often it rescans the log "
            "directory, so that new scalars of a running job appear within seconds. "
            "0 loads the data once."
        ),
    )
    tensorboard_load_fast = CaselessStrEnum(
        ["false", "true", "auto"],
        default_value="auto",
        config=True,
        help=(
            "TensorBoard's --load_fast: 'false' (the Python loader), 'true' (the Rust data "
            "server) or 'auto' (Rust when its binary is installed, as with the tensorboard "
            "wheel). The Rust server loads large logs faster (100,000 points: about 0.7 s "
            "against 1.4-2 s); on small logs both answer within a second."
        ),
    )
    tensorboard_max_instances = Integer(
        8,
        min=0,
        config=True,
        help=(
            "Most TensorBoard processes running at once (0: no limit). Starting one more "
            "stops the least recently used one that nobody used for two minutes; when all "
            "are in use, the request is refused with 429 naming one to stop."
        ),
    )
    tensorboard_start_timeout = Float(
        60.0,
        config=True,
        help="Seconds to wait for a new TensorBoard to answer before giving up on it.",
    )

    freeze_gc = Bool(
        True,
        config=True,
        help="Once the server has started, move every object it holds into the garbage "
        "collector's permanent generation (gc.freeze): a full collection then scans only "
        "what came later, instead of pausing every kernel and panel on this server for "
        "100-650 ms while logs stream.",
    )

    def initialize_settings(self) -> None:
        """Expose the effective configuration and the backend to the handlers."""
        from .rest import LOG_STREAMS_SETTING, MAX_BODY_SETTING, LogStreamSlots

        if self.freeze_gc:
            from tornado.ioloop import IOLoop

            # Runs when the loop starts: after every extension has loaded.
            IOLoop.current().add_callback(gc.freeze)

        self.settings["pytorchjob_config"] = self.config_model()
        self.settings[MAX_BODY_SETTING] = self.api_max_body_size
        self.settings[LOG_STREAMS_SETTING] = LogStreamSlots(self.max_log_streams)
        backend = self.settings["pytorchjob_backend"] = self.create_backend()
        self.settings["pytorchjob_logdir_resolver"] = functools.partial(job_logdir, backend)
        self._init_tensorboards()

    def _init_tensorboards(self) -> None:
        from .tensorboard.handlers import MANAGER_SETTING
        from .tensorboard.manager import TensorBoardManager

        root_dir = self.serverapp.root_dir if self.serverapp else "."
        self.settings[MANAGER_SETTING] = TensorBoardManager(
            # Relative roots are relative to root_dir (an absolute one replaces it).
            roots=[Path(root_dir, r) for r in self.tensorboard_roots]
            or [root_dir, *self.settings["pytorchjob_backend"].readable_roots()],
            relative_to=root_dir,
            base_url=self.serverapp.base_url if self.serverapp else "/",
            reload_interval=self.tensorboard_reload_interval,
            load_fast=self.tensorboard_load_fast.lower(),
            start_timeout=self.tensorboard_start_timeout,
            idle_timeout=self.tensorboard_idle_timeout,
            max_instances=self.tensorboard_max_instances,
            log=self.log,
        )

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """Connect the backend once the loop runs, so the first request (or the first
        log stream) does not pay for configuration and client set-up."""
        backend = self.settings["pytorchjob_backend"]
        try:
            await backend.warm_up()
        except BackendError as err:
            self.log.warning("jupyter_pytorchjob: the %s backend: %s", backend.name, err.message)

    async def stop_extension(self) -> None:
        """Stop every TensorBoard (normal shutdown, SIGTERM and SIGINT alike)."""
        from .tensorboard.handlers import MANAGER_SETTING

        manager = self.settings.get(MANAGER_SETTING)
        if manager is not None:
            await manager.stop_all()
        backend = self.settings.get("pytorchjob_backend")
        if backend is not None:
            await backend.close()

    def create_backend(self) -> Backend:
        """The configured backend (``local`` needs no cluster)."""
        options: dict[str, Any] = {}
        if self.backend == "kubernetes":
            options = {
                "namespace": self.namespace or None,
                "allowed_namespaces": list(self.allowed_namespaces),
                "dry_run": self.dry_run,
                "self_pod": self.notebook_pod or None,
                "connect_timeout": self.kubernetes_connect_timeout,
                "request_timeout": self.kubernetes_request_timeout,
                "progress_interval": self.kubernetes_progress_interval,
                "progress_parse_in_process": True,
            }
        if self.backend == "local":
            root_dir = self.serverapp.root_dir if self.serverapp else None
            options = {
                "root": self.local_root or None,
                "volume_root": self.volume_root or None,
                "claim_dirs": dict(self.claim_dirs),
                "default_workdir": root_dir,
                "max_nodes": self.local_max_nodes or None,
            }
        return create_backend(self.backend, **options)

    def config_model(self) -> dict[str, Any]:
        """The wire model of ``GET pytorchjob/api/config``: the defaults of a new job,
        and every field's section, default and choices (the field table's)."""
        defaults: dict[str, Any] = {
            "image": self.default_image,
            "gpuResource": self.gpu_resource,
            "shm": self.default_shm,
        }
        config: dict[str, Any] = {
            "version": __version__,
            "backend": self.backend,
            "defaults": defaults,
            "fields": config_fields(),
        }
        if self.serverapp is not None:
            root_dir = str(Path(self.serverapp.root_dir).resolve())
            config["rootDir"] = root_dir
            if self.backend == "local":
                defaults["workdir"] = root_dir  # where create_backend starts local jobs
        return config

    def initialize_handlers(self) -> None:
        """Register the REST routes under ``<base_url>pytorchjob/api/``."""
        from .handlers import route_handlers

        self.handlers.extend(route_handlers())


async def job_logdir(backend: Backend, name: str) -> str:
    """TensorBoard's ``{"job": NAME}``: the job's log directory, as this server sees it."""
    from .backends import JobNotFound
    from .tensorboard.manager import TensorBoardError

    try:
        return await backend.job_logdir(name)
    except JobNotFound as err:
        raise LookupError(err.problem or err.message) from err
    except BackendError as err:
        raise TensorBoardError("job", err.problem or err.message, err.status) from err
