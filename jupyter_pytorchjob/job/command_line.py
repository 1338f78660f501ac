"""A job body as the ``ptjob submit`` command line that gives it back.

The inverse of ``arguments.job_body`` over the same field table: each flag whose value
differs from its field's default, a repeatable flag once per item (``--image-pull-secret
NAME``, ``--pvc CLAIM:MOUNT[:SUBPATH][:ro]``, ``--toleration KEY[=VALUE]:EFFECT``,
``--env K=V``), then
``--`` and the command. A job shipped as a script (``--script``, a function) has no such
line: its text does not travel on a command line. ``extras`` (manifest parts the flags
do not know) are left out; the manifest's YAML keeps them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from .fields import FIELDS


def submit_command(body: Mapping[str, Any]) -> str | None:
    """``ptjob submit ... -- COMMAND``, quoted for a POSIX shell; None for a script job."""
    if body.get("script"):
        return None
    words = ["ptjob", "submit"]
    for f in FIELDS:
        value = body.get(f.wire)
        if f.cli in ("command", "script", "") or value is None:
            continue
        if f.cli == "false":
            words += [f.flag] if value is False else []
        elif f.cli == "list":
            words += [w for item in value for w in (f.flag, str(item))]
        elif f.cli == "pairs":
            for key, item in value.items():
                words += [f.flag, f"{key}={item}"]
        elif f.cli == "pvc":
            words += [w for mount in value for w in (f.flag, _pvc_text(mount))]
        elif f.cli == "toleration":
            words += [w for toleration in value for w in (f.flag, _toleration_text(toleration))]
        elif value != f.default:
            words += [f.flag, str(value)]
    return shlex.join([*words, "--", *body.get("command", []), *body.get("args", [])])


def _pvc_text(mount: Mapping[str, Any]) -> str:
    parts = [mount["claim"], mount["mountPath"]]
    if mount.get("subPath"):
        parts.append(mount["subPath"])
    if mount.get("readOnly"):
        parts.append("ro")
    return ":".join(parts)


def _toleration_text(toleration: Mapping[str, Any]) -> str:
    text = toleration["key"]
    if toleration.get("operator", "Equal") == "Equal":
        text += f"={toleration.get('value', '')}"
    effect = toleration.get("effect")
    return f"{text}:{effect}" if effect else text
