"""Small process helpers shared by the local backend and the CLI."""

from __future__ import annotations

import os


def pid_alive(pid: object) -> bool:
    """Whether a process with this pid exists (one we may not signal counts)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
