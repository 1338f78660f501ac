"""What each node process of a local job runs: argv, environment, working directory.

A node gets exactly the environment its job kind's controllers give its pod
(``JobKind.local_nodes``: the Training Operator's for a PyTorchJob, the torch runtime's
``PET_*`` for a TrainJob) with the rendezvous at 127.0.0.1 and a free port per job.
Mount paths become local directories by **path rewriting**: wherever a PVC's mount path
starts a command word, an ``--opt=value``, an env value, the working directory or
``PTJOB_LOGDIR``, it is replaced by the claim's local directory. Scripts that take their
paths as arguments or from the environment (as the examples do) therefore run unchanged
here and in a cluster; a path hard-coded inside a script is not rewritten.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...job.messages import msg
from ...job.spec import OPERATOR_ENV, JobSpec
from ...kinds import kind_for, log_archive
from ...kinds.manifests import LOGDIR_ENV
from ..base import BackendError
from .initializers import WORKSPACE

# Inherited from the server's own environment, these would confuse a job (a server
# started inside another job, or a torchrun child).
_DROP_FROM_PARENT = (*OPERATOR_ENV, "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK")
_DROP_PREFIXES = ("PET_", "PTJOB_", "TORCHELASTIC_")
# Set on every node to the job's random mark (job.json's "mark"): what the job starts
# inherits it, so DELETE finds even processes that left its nodes' process groups.
MARK_ENV = "PTJOB_JOB_MARK"
MASTER_ADDR = "127.0.0.1"
# How the bootstrap starts a script (``kinds.manifests.BOOTSTRAP``), here without it.
LAUNCHERS = {"python": ["-u"], "torchrun": ["-m", "torch.distributed.run"]}


@dataclass(frozen=True)
class NodePlan:
    """How to start one node (replica) of the job."""

    replica: str
    argv: list[str]
    env: dict[str, str]
    cwd: str


@dataclass(frozen=True)
class Mounts:
    """Mount path in the job -> local directory, longest first."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def for_spec(
        cls, spec: JobSpec, claim_dir: dict[str, Path], workspace: Path | None = None
    ) -> Mounts:
        """The PVCs' mounts, and a TrainJob's initializer volume (``/workspace``) at
        ``workspace`` when it has one (``initializers``)."""
        pairs = []
        for pvc in spec.pvc:
            local = claim_dir[pvc.claim] / pvc.sub_path if pvc.sub_path else claim_dir[pvc.claim]
            pairs.append((pvc.mount_path, str(local)))
        if workspace is not None:
            pairs.append((WORKSPACE, str(workspace)))
        return cls(tuple(sorted(pairs, key=lambda p: -len(p[0]))))

    def rewrite_path(self, value: str) -> str:
        for mount, local in self.pairs:
            if value == mount or value.startswith(mount + "/"):
                return local + value[len(mount) :]
        return value

    def rewrite_word(self, word: str) -> str:
        """A command word, or the value of ``--opt=value``."""
        if word.startswith("-") and "=" in word:
            option, _, value = word.partition("=")
            return f"{option}={self.rewrite_path(value)}"
        return self.rewrite_path(word)


def local_argv(command: list[str]) -> list[str]:
    """Run ``python``, ``python3`` and ``torchrun`` with this server's interpreter, so a
    job sees the packages JupyterLab runs with, whatever PATH says."""
    if not command:
        raise BackendError(msg("no_command"), status=400)
    head, rest = command[0], command[1:]
    if head in ("python", "python3"):
        return [sys.executable, *rest]
    if head == "torchrun":
        return [sys.executable, "-m", "torch.distributed.run", *rest]
    return command


def plan_nodes(
    spec: JobSpec,
    *,
    claim_dir: dict[str, Path],
    port: int,
    default_cwd: Path,
    gpu_count: int,
    base_env: dict[str, str] | None = None,
    script_path: Path | None = None,
    manifest: Mapping[str, Any] | None = None,
    workspace: Path | None = None,
) -> list[NodePlan]:
    """The node processes of ``spec`` (its kind's ``manifest``, built when not given);
    ``BackendError`` if this machine cannot run it. A shipped script (``spec.script``)
    runs from ``script_path``, where the caller puts it; a TrainJob's initializers fill
    ``workspace``, its ``/workspace``."""
    if spec.gpus and spec.gpus * spec.nodes > gpu_count:
        raise BackendError(
            msg("local_gpus", gpus=spec.gpus, nodes=spec.nodes, have=gpu_count), status=400
        )
    mounts = Mounts.for_spec(spec, claim_dir, workspace)
    parent = {
        k: v
        for k, v in (os.environ if base_env is None else base_env).items()
        if k not in _DROP_FROM_PARENT and not k.startswith(_DROP_PREFIXES)
    }
    kind = kind_for(spec)
    if spec.script is not None:
        if script_path is None:
            raise ValueError("a job with a script needs script_path")
        # What the manifest's bootstrap execs once it has written the script to a file;
        # here the file is the job's own (removed with it), not a temporary directory
        # per node that nobody would remove.
        launcher = LAUNCHERS[kind.script_launcher(spec)]
        args = [mounts.rewrite_word(w) for w in spec.args]
        argv = [sys.executable, *launcher, str(script_path), *args]
    else:
        argv = [mounts.rewrite_word(w) for w in local_argv([*spec.command, *spec.args])]
    archive = spec.log_archive_base
    if archive is not None:  # the pods' wrapper, the same files on the claim's directory
        argv = [sys.executable, "-c", log_archive.WRAPPER, *argv]
    cwd = mounts.rewrite_path(spec.workdir) if spec.workdir else str(default_cwd)
    if not Path(cwd).is_dir():
        raise BackendError(msg("local_workdir", workdir=spec.workdir, path=str(cwd)), status=400)
    if manifest is None:
        manifest = kind.build(spec)
    nodes = kind.local_nodes(manifest, master_addr=MASTER_ADDR, master_port=port)
    plans = []
    for node, local in enumerate(nodes):
        env = dict(parent)
        env.update({k: mounts.rewrite_path(v) for k, v in spec.env.items()})
        if spec.logdir:
            env[LOGDIR_ENV] = mounts.rewrite_path(spec.logdir)
        if spec.gpus:
            first = node * spec.gpus
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(first + i) for i in range(spec.gpus))
        else:
            # A pod without GPU limits sees no GPU; so does the local node.
            env["CUDA_VISIBLE_DEVICES"] = ""
        env["HOSTNAME"] = local.hostname  # a pod's HOSTNAME is its hostname
        if archive is not None and spec.name:
            rtype_label, _, index_label = local.replica.rpartition("-")
            env[log_archive.ARCHIVE_ENV] = mounts.rewrite_path(
                log_archive.archive_dir(archive, spec.name)
            )
            env[log_archive.TYPE_ENV], env[log_archive.INDEX_ENV] = rtype_label, index_label
        # Last: what the controllers inject wins (the spec may not set those names).
        env.update({k: mounts.rewrite_path(v) for k, v in local.env.items()})
        plans.append(NodePlan(local.replica, argv, env, cwd))
    return plans


def plans_to_wire(plans: list[NodePlan]) -> list[dict[str, Any]]:
    return [asdict(p) for p in plans]


def plans_from_wire(data: list[dict[str, Any]]) -> list[NodePlan]:
    return [NodePlan(**d) for d in data]
