"""The server's messages: each a stable code with named parameters beside its English
text (the CLI, the magic and the API print it), every code with a template the frontend
translates and a zh_CN entry in both catalogues (the .po and the JSON JupyterLab reads)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.failure import JobFailure, JobWaiting, failure_hint, job_waiting
from jupyter_pytorchjob.job.messages import MESSAGES, Message, msg, placeholders
from jupyter_pytorchjob.job.status import JobInfo, JobState, ReplicaInfo

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jupyter_pytorchjob"
LOCALE = PACKAGE / "locale" / "zh_CN" / "LC_MESSAGES"
# Codes a module builds from a word rather than spells out (backends/base.py: the
# action of ``finished_error``).
BUILT_CODES = {"finished_suspended": "finished_", "finished_resumed": "finished_"}


def invalid(body: dict[str, object]) -> JobSpecInvalid:
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"name": "ok", "command": ["python"], **body})
    return info.value


def test_a_field_error_carries_its_code_parameters_and_english_text() -> None:
    wire = invalid({"nodes": -1}).to_wire()
    expected = {
        "field": "nodes",
        "code": "whole_number",
        "params": {"minimum": 1, "got": -1},
        "message": "must be a whole number >= 1, got -1",
    }
    assert wire == {**expected, "errors": [expected]}


def test_the_minimum_comes_from_the_field_table() -> None:
    """No second list of constraints: the parameters are the table's."""
    problem = invalid({"deadline": 0}).errors[0].problem
    assert (problem.code, problem.params) == ("whole_number", {"minimum": 1, "got": 0})
    problem = invalid({"nodes": 5001}).errors[0].problem
    assert (problem.code, problem.params) == ("at_most", {"maximum": 5000, "got": 5001})


def test_a_rule_inside_a_sentence_is_a_nested_message() -> None:
    error = invalid({"datasetSecret": "Not_A_Name"}).errors[0]
    assert error.problem.code == "secret_name"
    assert error.problem.to_wire()["params"]["problem"] == {
        "code": "dns1123_subdomain",
        "params": {},
        "message": MESSAGES["dns1123_subdomain"],
    }
    assert error.message == "is the name of a Secret and " + MESSAGES["dns1123_subdomain"]


def test_the_cli_text_is_the_english_template_filled_in() -> None:
    error = invalid({"pvc": [{"claim": "data", "mountPath": "/"}]}).errors[0]
    assert str(error) == "pvc[0].mountPath: must not be '/'"
    assert str(msg("pvc_item")) == "must be an object {claim, mountPath, subPath, readOnly}"


def test_a_message_takes_exactly_its_templates_parameters() -> None:
    with pytest.raises(ValueError, match="no message has the code"):
        Message("no_such_code", {})
    with pytest.raises(ValueError, match="takes"):
        msg("whole_number", minimum=1)
    with pytest.raises(ValueError, match="takes"):
        msg("required", extra=1)
    with pytest.raises(TypeError, match="list"):
        msg("unknown_keys", keys=["a"])


def test_every_template_fills_in() -> None:
    for code, template in MESSAGES.items():
        text = str(Message(code, {name: "X" for name in placeholders(template)}))
        assert placeholders(text) == set() and "{{" not in text, code


def _catalogue_po() -> dict[str, str]:
    """msgid -> msgstr of the .po (one line each, as this project writes them)."""
    text = (LOCALE / "jupyter_pytorchjob.po").read_text(encoding="utf-8")
    pairs = re.findall(r'^msgid (".*")\nmsgstr (".*")$', text, re.MULTILINE)
    return {json.loads(k): json.loads(v) for k, v in pairs}


@pytest.mark.parametrize("code", list(MESSAGES))
def test_every_code_has_a_zh_cn_entry_with_its_placeholders(code: str) -> None:
    template = MESSAGES[code]
    catalogue = json.loads((LOCALE / "jupyter_pytorchjob.json").read_text(encoding="utf-8"))
    translated = catalogue.get(template, [""])[0]
    assert translated, code
    assert placeholders(translated) == placeholders(template), code
    assert translated.count("{{") == template.count("{{"), code
    assert _catalogue_po().get(template) == translated, "the .po and the JSON differ"


def test_every_code_has_a_frontend_template() -> None:
    """The frontend's table is generated from this one (``make fields``;
    tests/test_fields.py holds the file to it): every code, its English template."""
    text = (ROOT / "src" / "servermessages.ts").read_text(encoding="utf-8")
    entries = dict(re.findall(r"^  (\w+):\s*\n?\s*(['\"].*['\"]),?$", text, re.MULTILINE))
    assert set(entries) == set(MESSAGES)


def test_every_code_is_used() -> None:
    """No code declared and never sent: each is spelled in the package (or built from
    its prefix, BUILT_CODES)."""
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
        if path.name != "messages.py"
    ) + "\n".join(
        line
        for line in (PACKAGE / "job" / "messages.py").read_text().splitlines()
        if "msg(" in line or "joined(" in line
    )
    unused = [
        code
        for code in MESSAGES
        if f'"{code}"' not in sources and BUILT_CODES.get(code, "\0") not in sources
    ]
    assert unused == []


@pytest.mark.skipif(
    shutil.which("msgfmt") is None, reason="needs gettext's msgfmt (`make test` installs it)"
)
def test_msgfmt_checks_the_catalogue() -> None:
    """The .po compiles, each python-brace-format entry with its template's placeholders."""
    po = LOCALE / "jupyter_pytorchjob.po"
    result = subprocess.run(
        ["msgfmt", "--check", "-o", "/dev/null", str(po)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_a_failures_hint_travels_with_its_code_and_comes_back_from_storage() -> None:
    hint = failure_hint("OOMKilled", 137)
    failure = JobFailure("master-0", "OOMKilled", "", exit_code=137, hint=hint)
    wire = failure.to_wire()
    assert (wire["hint"], wire["hintCode"], wire["hintParams"]) == (
        "The replica ran out of memory: raise --memory (or lower the batch size or the "
        "DataLoader's num_workers).",
        "hint_oom",
        {"memory": "--memory"},
    )
    # job.json (local) and the job's annotation (kubernetes) keep it so.
    assert JobFailure.from_wire(json.loads(json.dumps(wire))) == failure


@pytest.mark.parametrize(
    "stored",
    [
        {"hint": "Raise it.", "hintCode": "no_such_code", "hintParams": {}},
        {"hint": "Raise it.", "hintCode": "hint_oom", "hintParams": {}},
        {"hint": "Raise it.", "hintCode": "hint_oom", "hintParams": {"memory": ["x"]}},
        {"hint": "Raise it."},  # an older version's record
    ],
)
def test_a_stored_hint_that_is_not_one_of_ours_is_dropped(stored: dict[str, object]) -> None:
    base = {"replica": "master-0", "reason": "Error", "message": "boom"}
    failure = JobFailure.from_wire({**base, **stored})
    assert failure is not None and failure.hint is None
    assert failure.to_wire()["hintCode"] is None


def test_a_suspended_job_waits_in_our_words_the_scheduler_in_its_own() -> None:
    waiting = job_waiting("Suspended", [])
    assert waiting is not None
    wire = waiting.to_wire()
    assert (wire["messageCode"], wire["messageParams"]) == ("waiting_suspended", {})
    assert wire["message"] == "the job is suspended: its pods are created when it is resumed"
    assert (wire["hintCode"], wire["hint"]) == ("hint_resume", "Resume it: ptjob resume <name>.")
    platform = JobWaiting("Unschedulable", "0/8 nodes are available", None).to_wire()
    assert (platform["messageCode"], platform["hintCode"]) == (None, None)


def test_a_jobs_warnings_travel_in_english_and_with_their_codes() -> None:
    warning = msg("warn_no_local_effect", fields="serviceAccount (--service-account)")
    wire = JobInfo("j", JobState.SUBMITTED, [], 1, 0, 0.0, warnings=[warning]).to_wire()
    english = (
        "serviceAccount (--service-account) has no effect on the local backend, which runs "
        "processes, not pods; a cluster uses it"
    )
    assert wire["warnings"] == [english]
    assert wire["warningMessages"] == [
        {
            "code": "warn_no_local_effect",
            "params": {"fields": "serviceAccount (--service-account)"},
            "message": english,
        }
    ]


def test_replicas_and_jobs_say_their_own_words_with_codes_the_platforms_without() -> None:
    ours = ReplicaInfo("master-0", "Deleted", reason="Deleted", message=msg("replica_deleted"))
    platform = ReplicaInfo("worker-0", "Pending", reason="ErrImagePull", message="not found")
    assert ours.to_wire()["message"] == "the pod was deleted after the job finished"
    assert (ours.to_wire()["messageCode"], ours.to_wire()["messageParams"]) == (
        "replica_deleted",
        {},
    )
    assert (platform.to_wire()["message"], platform.to_wire()["messageCode"]) == (
        "not found",
        None,
    )
    # init-pytorch waiting for the master (ours) is why the job waits, in our words.
    waits = ReplicaInfo(
        "worker-0", "Pending", reason="WaitingForMaster", message=msg("replica_waits_for_master")
    )
    waiting = job_waiting("Created", [waits])
    assert waiting is not None and waiting.to_wire()["messageCode"] == "replica_said"
    assert waiting.message == msg("replica_said", replica="worker-0", said=waits.message)
    assert (
        str(waiting.message) == "worker-0: init-pytorch is waiting for the master to be reachable"
    )
