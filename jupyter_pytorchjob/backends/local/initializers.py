"""A TrainJob's dataset and model initializers, played locally for ``file://`` URIs.

In a cluster the runtime's ``dataset-initializer``/``model-initializer`` job downloads
``storageUri`` into the volume the trainer mounts at ``/workspace``: the dataset to
``/workspace/dataset``, the model to ``/workspace/model`` (Trainer v2.3.0
``pkg/initializers/utils/utils.py:27-33``, ``pkg/constants/constants.go:56,62``). Locally
the job's own ``workspace`` directory plays that volume: a ``file://`` source is copied
there before the nodes start (links are copied as links, never followed), and ``/workspace``
in the job's arguments and env is rewritten to it like a PVC's mount path
(``plan.Mounts``). Nothing is downloaded at run time: any other scheme is refused, naming it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ...job.errors import FieldError, JobSpecInvalid
from ...job.messages import msg
from ...job.spec import JobSpec

WORKSPACE = "/workspace"  # the initializer volume's mount path in the trainer
PARTS = ("dataset", "model")  # -> /workspace/dataset, /workspace/model


def local_sources(spec: JobSpec) -> dict[str, Path]:
    """Each initializer's local source (``dataset``/``model`` -> its path);
    ``JobSpecInvalid`` naming the field for a URI this machine cannot copy."""
    sources: dict[str, Path] = {}
    problems: list[FieldError] = [
        FieldError(f"{part}Secret", msg("local_no_secrets"))
        for part in PARTS
        if getattr(spec, f"{part}_secret") is not None
    ]
    for part in PARTS:
        uri = getattr(spec, part)
        if uri is None:
            continue
        parts = urlsplit(uri)
        if parts.scheme.lower() != "file":
            problems.append(
                FieldError(
                    part,
                    msg(
                        "local_download",
                        scheme=parts.scheme,
                        initializer=f"{part}-initializer",
                        path=f"{WORKSPACE}/{part}",
                    ),
                )
            )
            continue
        path = Path(unquote(parts.path))
        if parts.netloc not in ("", "localhost") or not path.is_absolute():
            problems.append(FieldError(part, msg("file_uri", got=repr(uri))))
        elif not path.exists():
            problems.append(FieldError(part, msg("local_missing", path=str(path))))
        else:
            sources[part] = path
    if problems:
        raise JobSpecInvalid(problems)
    return sources


def initialize(workspace: Path, sources: dict[str, Path]) -> dict[str, Path]:
    """Copy each source where its initializer would put it: a directory becomes
    ``workspace/<part>``, a file goes into it. Returns each part's local directory."""
    made: dict[str, Path] = {}
    for part, source in sources.items():
        target = workspace / part
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            target.mkdir(parents=True)
            shutil.copy2(source, target / source.name, follow_symlinks=False)
        made[part] = target
    return made
