"""What Lightning and Hugging Face already write into a job's log directory, read as a
run's hyperparameters and checkpoints with no code change in the script (both
backends: the local claim's directory, a cluster job's PVC as this notebook mounts it).

Read, each through ``untrusted_files`` (no links, regular files only, bounded):

* Lightning's loggers (TensorBoard, CSV): ``<dir>/hparams.yaml`` - the module's
  ``save_hyperparameters()`` - with ``yaml.safe_load`` (a file with Python tags, which
  Lightning writes for objects it cannot turn into YAML, is left out whole); its
  ``ModelCheckpoint`` files ``*.ckpt`` (step and epoch from Lightning's default name
  ``epoch=2-step=300.ckpt``). A ``.ckpt`` is a pickle: only its name and time are read.
* Hugging Face's ``Trainer``: each ``checkpoint-<step>/`` directory of its
  ``output_dir``, its ``trainer_state.json`` giving the step, the last logged metrics and
  the run's ``train_batch_size``/``num_train_epochs``/``max_steps`` as hyperparameters.
  ``training_args.bin`` (a pickle) is never read, so the other ``TrainingArguments``
  are not shown: report them with ``report(hparams=...)``.

Only under the job's log directory (Lightning's ``default_root_dir``, HF's
``output_dir`` must be inside it), ``MAX_DEPTH`` levels deep, ``MAX_ENTRIES`` names.
Paths are given as the job sees them: its log directory joined with the file's path
below it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from .. import untrusted_files
from ..job.run import RunRecord

MAX_DEPTH = 5
MAX_ENTRIES = 20_000
MAX_FILE = 1 << 20  # an hparams.yaml or trainer_state.json larger than this is left out
LIGHTNING_NAME = re.compile(r"(?:epoch=(?P<epoch>\d+))?.*?(?:step=(?P<step>\d+))?\.ckpt$")
HF_CHECKPOINT = re.compile(r"^checkpoint-(?P<step>\d+)$")
HF_HPARAMS = ("train_batch_size", "num_train_epochs", "max_steps")


def _mtime(path: Path) -> float | None:
    try:
        with untrusted_files.opened(path) as f:
            return os.fstat(f.fileno()).st_mtime
    except OSError:
        return None


def _dir_mtime(path: Path) -> float | None:
    try:
        fd = untrusted_files.open_directory(path)
    except OSError:
        return None
    try:
        return os.fstat(fd).st_mtime
    finally:
        os.close(fd)


def _json(path: Path) -> Any:
    try:
        return json.loads(untrusted_files.read_bounded(path, MAX_FILE))
    except (OSError, ValueError, RecursionError):
        return None


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(untrusted_files.read_bounded(path, MAX_FILE))
    except (OSError, yaml.YAMLError, RecursionError):
        return None  # a Python tag (an object Lightning pickled into YAML): refused


def library_files(logdir: Path, job_logdir: str) -> RunRecord:
    """The hyperparameters and checkpoints found under ``logdir`` (this machine's path of
    the job's log directory ``job_logdir``)."""
    found = RunRecord()

    def job_path(path: Path) -> str:
        return str(PurePosixPath(job_logdir) / path.relative_to(logdir))

    for directory, files in untrusted_files.walk(
        logdir, max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES
    ):
        match = HF_CHECKPOINT.match(directory.name)
        if match and "trainer_state.json" in files:
            state = _json(directory / "trainer_state.json")
            state = state if isinstance(state, dict) else {}
            history = state.get("log_history")
            last = (
                history[-1]
                if isinstance(history, list) and history and isinstance(history[-1], dict)
                else {}
            )
            found.add_checkpoint(
                {
                    "path": job_path(directory),
                    "step": state.get("global_step", int(match["step"])),
                    "time": _dir_mtime(directory),
                    "metrics": {k: v for k, v in last.items() if k not in ("step", "epoch")},
                },
                source="huggingface",
            )
            found.add_hparams({k: state[k] for k in HF_HPARAMS if k in state})
        if "hparams.yaml" in files:
            hparams = _yaml(directory / "hparams.yaml")
            if isinstance(hparams, dict) and hparams:
                found.add_hparams(hparams)
        for name in files:
            if name.endswith(".ckpt"):
                match = LIGHTNING_NAME.match(name)
                path = directory / name
                found.add_checkpoint(
                    {
                        "path": job_path(path),
                        "step": int(match["step"]) if match and match["step"] else None,
                        "time": _mtime(path),
                    },
                    source="lightning",
                )
    found.dropped = 0  # the libraries' files are not the job's reports
    return found
