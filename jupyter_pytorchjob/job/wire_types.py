"""The job body's declarations generated from the field table (fields.py): ``JobBody``
in ``api/openapi.yaml`` and ``IJobBody`` in ``src/tokens.ts``, each between the
``BEGIN``/``END generated`` marker lines of its file. ``make fields`` writes them;
tests/test_fields.py fails while a file differs from what the table generates. Pure:
text in, text out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .fields import FIELDS, json_schema

BEGIN = "BEGIN generated from jupyter_pytorchjob/job/fields.py: make fields"
END = "END generated"


def openapi_job_body() -> str:
    """The ``JobBody`` schema (under ``components.schemas``, 4 spaces in)."""
    lines = [
        "    JobBody:",
        "      type: object",
        "      description: >",
        "        A job as the form, the CLI flags (camelCase) and the magic describe it. Either",
        "        command or script. Integers may also be given as strings of digits.",
        "      additionalProperties: false",
        "      properties:",
    ]
    for f in FIELDS:
        schema = {**json_schema(f), "description": f.help}
        lines.append(f"        {f.wire}:")
        lines.extend(f"          {key}: {json.dumps(value)}" for key, value in schema.items())
    return "\n".join(lines)


def typescript_job_body() -> str:
    """``export interface IJobBody`` with each field's help as its doc comment."""
    lines = [
        "/**",
        " * The job body of `POST render` and `POST jobs`.",
        " *",
        " * Absent fields take the server's defaults.",
        " */",
        "export interface IJobBody {",
    ]
    for f in FIELDS:
        lines += ["  /**", f"   * {f.help}", "   */", f"  {f.wire}?: {_ts_type(json_schema(f))};"]
        lines.append("")
    lines[-1] = "}"
    return "\n".join(lines)


def _ts_type(schema: dict[str, Any]) -> str:
    """The TypeScript type of a JSON Schema of the job body."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return "Record<string, string>" if name == "StringMap" else f"I{name}"
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    names = {"integer": "number", "string": "string", "boolean": "boolean", "null": "null"}
    out = []
    for kind in kinds:
        if kind == "array":
            item = _ts_type(schema["items"])
            out.append(f"{item}[]")
        elif kind == "object":
            out.append("Record<string, unknown>")
        else:
            out.append(names[kind])
    return " | ".join(out)


# Each generated file: its path from the repository's root, its comment mark, its text.
GENERATED: tuple[tuple[str, str, Callable[[], str]], ...] = (
    ("jupyter_pytorchjob/api/openapi.yaml", "    #", openapi_job_body),
    ("src/tokens.ts", "//", typescript_job_body),
)


def with_generated(text: str, comment: str, block: str) -> str:
    """``text`` with the lines between its marker lines replaced by ``block``."""
    begin, end = f"{comment} {BEGIN}\n", f"{comment} {END}\n"
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise ValueError(f"no {begin.strip()!r} ... {end.strip()!r} lines")
    return head + begin + block + "\n" + end + rest.split(end, 1)[1]
