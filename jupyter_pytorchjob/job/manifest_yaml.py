"""Manifests as YAML text, whatever their kind: the builder's key order, scripts in
block style, and the job document of a file read back as plain JSON-like data
(``shape.plain_problem``). A file may hold other documents beside the job (a Kueue
LocalQueue, comments, a trailing ``---``, as upstream examples do): they are named and
left alone."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import FieldError, JobSpecInvalid
from .fields import KINDS
from .messages import Message, either, joined, msg
from .shape import plain_problem


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings, so an embedded script stays readable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Literal style only where it round-trips: printable lines, no trailing blanks.
    lines = value.split("\n")
    literal = len(lines) > 1 and all(line.isprintable() and line == line.rstrip() for line in lines)
    plain_text = all(line.isprintable() for line in lines)
    # Anything unusual (NEL, LS, control characters) goes double-quoted, escaped.
    style = "|" if literal else (None if plain_text else '"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def manifest_to_yaml(manifest: Mapping[str, Any]) -> str:
    """The manifest as YAML, in the builder's key order."""
    return yaml.dump(
        manifest, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


@dataclass
class JobYaml:
    """The job document of a YAML file, and a note on each other document in it."""

    manifest: dict[str, Any]
    others: list[Message] = field(default_factory=list)


def manifest_from_yaml(text: str) -> dict[str, Any]:
    """The job document of ``text`` as a manifest dict; ``JobSpecInvalid`` if none."""
    return read_job_yaml(text).manifest


def read_job_yaml(text: str) -> JobYaml:
    """Parse ``text``: its one job document (a kind of ours), or its only document; the
    other documents named (comments and empty ones are none). ``JobSpecInvalid`` naming
    ``yaml`` for invalid YAML, no job, or several jobs (naming each)."""
    try:
        loaded = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise _invalid(msg("yaml_invalid", error=str(err))) from err
    except RecursionError as err:
        raise _invalid(msg("yaml_deep")) from err
    except ValueError as err:  # an integer past Python's digit limit
        raise _invalid(msg("yaml_digits", digits=sys.get_int_max_str_digits())) from err
    documents = [(n, doc) for n, doc in enumerate(loaded, 1) if doc is not None]
    if len(documents) == 1:
        return JobYaml(_plain_object(documents[0][1]))
    jobs = [(n, doc) for n, doc in documents if _is_job(doc)]
    if not jobs:
        found = joined("list_semicolon", *(_describe(n, doc) for n, doc in documents))
        raise _invalid(msg("yaml_no_job", kinds=either(*KINDS), found=found or msg("no_document")))
    if len(jobs) > 1:
        named = joined("list_and", *(_describe(n, doc) for n, doc in jobs))
        raise _invalid(msg("yaml_jobs", count=len(jobs), jobs=named))
    others = [
        msg("yaml_left_alone", document=_describe(n, doc))
        for n, doc in documents
        if doc is not jobs[0][1]
    ]
    return JobYaml(_plain_object(jobs[0][1]), others)


def _is_job(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") in KINDS


def _describe(number: int, doc: Any) -> Message:
    """``LocalQueue 'user-queue' (document 1)``, as far as the document says."""
    if not isinstance(doc, dict):
        return msg("yaml_document", what=type(doc).__name__, number=number)
    kind = doc.get("kind") if isinstance(doc.get("kind"), str) else msg("type_dict")
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if isinstance(name, str):
        return msg("yaml_document_named", kind=kind, name=repr(name), number=number)
    return msg("yaml_document", what=kind, number=number)


def _plain_object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _invalid(msg("yaml_single_job", kinds=either(*KINDS)))
    problem = plain_problem(data)
    if problem:
        raise _invalid(problem)
    return data


def _invalid(problem: Message) -> JobSpecInvalid:
    return JobSpecInvalid([FieldError("yaml", problem)])
