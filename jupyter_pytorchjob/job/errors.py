"""Typed validation errors that name the offending field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .messages import Message


@dataclass(frozen=True)
class FieldError:
    """One problem with one field.

    ``field`` is the wire name of the job body (camelCase, the CLI's long flag
    without dashes), with an index or key for list and map entries, e.g.
    ``pvc[1].mountPath`` or ``env[MY VAR]``. The CLI turns it back into a flag.
    ``problem`` is what is wrong, a ``Message`` (code and parameters) the frontend
    translates; ``message`` its English text.
    """

    field: str
    problem: Message

    @property
    def message(self) -> str:
        return str(self.problem)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    def to_wire(self) -> dict[str, Any]:
        """``{field, code, params, message}``."""
        return {"field": self.field, **self.problem.to_wire()}


class JobSpecInvalid(ValueError):
    """A job body or manifest failed validation; nothing was created."""

    def __init__(self, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("JobSpecInvalid needs at least one FieldError")
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))

    @property
    def field(self) -> str:
        """The first offending field."""
        return self.errors[0].field

    def to_wire(self) -> dict[str, Any]:
        """The 400 body of the REST API: the first error flat, then all of them."""
        return {**self.errors[0].to_wire(), "errors": [e.to_wire() for e in self.errors]}
