"""The package's version, in a leaf module: the package root and the server extension both
name it without importing each other."""

from __future__ import annotations

try:
    from ._version import __version__
except ImportError:  # pragma: no cover - only in a source tree that was never built
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
