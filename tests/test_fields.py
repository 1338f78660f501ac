"""The field table (job/fields.py) is the one truth: JobSpec, each kind's manifest
places, openapi.yaml and src/tokens.ts (their job body generated from it by
``make fields``) must agree with it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import jupyter_pytorchjob
from jupyter_pytorchjob.job import wire_types
from jupyter_pytorchjob.job.fields import (
    FIELDS,
    FORM_CODECS,
    ITEM_CHOICES,
    SECTIONS,
    WIRE_FIELDS,
    config_fields,
    json_schema,
)
from jupyter_pytorchjob.job.spec import JobSpec, _WireReader
from jupyter_pytorchjob.kinds import KINDS
from jupyter_pytorchjob.kinds.pytorchjob import manifest as pytorchjob_manifest
from jupyter_pytorchjob.kinds.trainjob import manifest as trainjob_manifest

ROOT = Path(__file__).resolve().parent.parent
DOC = yaml.safe_load(
    (Path(jupyter_pytorchjob.__file__).parent / "api" / "openapi.yaml").read_text()
)
SCHEMAS = DOC["components"]["schemas"]
TOKENS = (ROOT / "src" / "tokens.ts").read_text(encoding="utf-8")


def ts_properties(interface: str) -> set[str]:
    """The property names of ``export interface <interface> { ... }`` in tokens.ts."""
    match = re.search(rf"^export interface {interface} \{{\n(.*?)^\}}", TOKENS, re.S | re.M)
    assert match, f"tokens.ts has no interface {interface}"
    return set(re.findall(r"^  (\w+)\??:", match.group(1), re.M))


def without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "description"}


def test_every_field_is_a_jobspec_attribute_with_a_reader() -> None:
    attributes = [f.name for f in dataclasses.fields(JobSpec)]
    assert [f.attr for f in FIELDS] == attributes
    for f in FIELDS:
        assert callable(getattr(_WireReader, f"read_{f.read}", None)), f.wire
        assert f.section in SECTIONS, f.wire
        if f.choices:
            assert f.default in f.choices or (f.nullable and f.default is None), f.wire


def test_openapi_job_body_is_the_table() -> None:
    body = SCHEMAS["JobBody"]
    assert list(body["properties"]) == list(WIRE_FIELDS)
    for f in FIELDS:
        assert without_descriptions(body["properties"][f.wire]) == json_schema(f), f.wire
    toleration = SCHEMAS["Toleration"]["properties"]
    for key, choices in ITEM_CHOICES["tolerations"].items():
        assert set(toleration[key]["enum"]) == set(choices), key


@pytest.mark.parametrize(("path", "comment", "generate"), wire_types.GENERATED)
def test_the_generated_job_body_is_the_tables(path: str, comment: str, generate: Any) -> None:
    """A field added to the table and not generated (``make fields``) fails here."""
    text = (ROOT / path).read_text(encoding="utf-8")
    assert text == wire_types.with_generated(text, comment, generate()), "run: make fields"


def test_every_field_has_a_form_codec() -> None:
    assert SCHEMAS["FieldInfo"]["properties"]["form"]["enum"] == list(FORM_CODECS)
    assert {f.codec for f in FIELDS} <= set(FORM_CODECS)
    assert config_fields()["nodes"]["form"] == "number"
    assert config_fields()["env"]["form"] == "map"
    assert config_fields()["pvc"]["form"] == "rows"


@pytest.mark.parametrize("module", [pytorchjob_manifest, trainjob_manifest])
def test_each_kind_places_every_field(module: Any) -> None:
    """Each kind says, in one table, where every field lives in its manifest."""
    assert list(module.PLACES) == list(WIRE_FIELDS)


def test_openapi_config_describes_the_fields() -> None:
    info = SCHEMAS["FieldInfo"]
    assert info["properties"]["section"]["enum"] == list(SECTIONS)
    for entry in config_fields().values():
        assert set(entry) <= set(info["properties"])


def test_tokens_ts_job_body_is_the_table() -> None:
    assert ts_properties("IJobBody") == set(WIRE_FIELDS)


@pytest.mark.parametrize(
    ("interface", "schema"),
    [
        ("IConfig", SCHEMAS["Config"]),
        ("IJobDefaults", SCHEMAS["Config"]["properties"]["defaults"]),
        ("IFieldInfo", SCHEMAS["FieldInfo"]),
        ("IPvcMount", SCHEMAS["PvcMount"]),
        ("IToleration", SCHEMAS["Toleration"]),
        ("IRuntime", SCHEMAS["Runtime"]),
        ("IJobFailure", SCHEMAS["Failure"]),
        ("IJobWaiting", SCHEMAS["Waiting"]),
    ],
)
def test_tokens_ts_types_what_the_server_sends(interface: str, schema: dict[str, Any]) -> None:
    """No field sent untyped (``defaults.namespace`` was), none typed but never sent
    (``rootDir``, ``defaults.workdir`` were)."""
    assert ts_properties(interface) == set(schema["properties"])


def test_the_jest_fixture_is_what_the_server_sends() -> None:
    fixture = json.loads((ROOT / "src" / "__tests__" / "fields.json").read_text())
    assert fixture == config_fields()


def test_the_jest_kinds_fixture_is_what_the_server_sends() -> None:
    """The form's kind switch and hidden fields are tested on GET config's ``kinds``."""
    fixture = json.loads((ROOT / "src" / "__tests__" / "kinds.json").read_text())
    assert fixture == [kind.to_wire() for kind in KINDS]


def test_the_readme_lists_every_flag() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("Job flags (shared with `%ptjob`") :]
    table = table[: table.index("\n\n", table.index("| flag"))]
    for f in FIELDS:
        if f.flag and f.cli != "command":
            assert f"`{f.flag}" in table, f.flag
