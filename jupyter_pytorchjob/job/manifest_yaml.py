"""Manifests as YAML text, whatever their kind: the builder's key order, scripts in
block style, and one plain JSON-like document read back (``shape.plain_problem``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import yaml

from .errors import FieldError, JobSpecInvalid
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


def manifest_from_yaml(text: str) -> dict[str, Any]:
    """Parse one YAML document into a manifest dict; ``JobSpecInvalid`` if it is not one."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise JobSpecInvalid([FieldError("yaml", f"is not valid YAML: {err}")]) from err
    except RecursionError as err:
        raise JobSpecInvalid([FieldError("yaml", "is nested too deeply")]) from err
    except ValueError as err:  # an integer past Python's digit limit
        message = f"holds a number with more than {sys.get_int_max_str_digits()} digits"
        raise JobSpecInvalid([FieldError("yaml", message)]) from err
    if not isinstance(data, dict):
        raise JobSpecInvalid([FieldError("yaml", "must be a single PyTorchJob object")])
    problem = plain_problem(data)
    if problem:
        raise JobSpecInvalid([FieldError("yaml", problem)])
    return data
