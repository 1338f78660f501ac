"""One-node mutations of valid manifests of both kinds through a real server (issue 25,
item 6): never a 5xx, on either backend.

Seeds are valid PyTorchJobs and TrainJobs: built by our own render from varied job bodies,
the examples' jobs, and manifests as people and other tools write them. One node of a seed
is replaced by a value of another JSON type (``null``, a number, a string, ``[]``, ``{}``,
``[null]``, ``[1]``, deep nesting...) and the result goes where a user's edit goes:

* *Apply YAML*: ``POST render {"yaml": ...}`` (kubernetes: with the server-side dry run);
* as ``extras`` of the seed's job body: ``POST render``;
* what either accepted, ``POST jobs`` (local: real processes, running ``true``, every
  ``PTJOB_FUZZ_SUBMIT_EVERY``-th, default 5), and the job created then answers
  ``GET jobs/{name}``, ``GET jobs``, ``GET .../events``, ``PATCH`` and ``DELETE``.

Every answer is below 500; a refusal is a 400 naming the field (``field`` and every
``errors[].field`` non-empty) with a message. Examples: ``PTJOB_FUZZ_EXAMPLES`` per
backend (default 120, derandomized; the full sweep: ``PTJOB_FUZZ_EXAMPLES=5000 pytest
tests/test_fuzz_manifests.py -s``, which prints the tally).
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_pytorchjob.job.manifest_yaml import manifest_to_yaml
from jupyter_pytorchjob.job.spec import JobSpec
from jupyter_pytorchjob.kinds import kind_for, kind_of

from .both_backends import backend_name, jp_server_config
from .strategies import job_bodies, manifests, trainjob_bodies
from .test_trainjob_kind import FOREIGN

__all__ = ["backend_name", "jp_server_config"]  # fixtures

API = ("pytorchjob", "api")
EXAMPLES = int(os.environ.get("PTJOB_FUZZ_EXAMPLES", "120"))
# A local job is real processes (about 2 s to start and delete): the local backend submits
# every SUBMIT_EVERY-th mutant its render accepted (the kubernetes backend every one).
SUBMIT_EVERY = int(os.environ.get("PTJOB_FUZZ_SUBMIT_EVERY", "5"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
SCRIPTS = sorted(p.name for p in (Path(__file__).parent.parent / "examples").glob("*.py"))


def nested(depth: int, leaf: Any, *, as_list: bool) -> Any:
    for _ in range(depth):
        leaf = [leaf] if as_list else {"a": leaf}
    return leaf


# What a node is replaced by: every JSON type, the one-element lists the issue found,
# nesting under and over the body's depth limit.
REPLACEMENTS: list[Any] = [
    None,
    True,
    0,
    5,
    -1,
    1.5,
    10**30,
    "",
    "x",
    "5",
    "8Gi",
    [],
    {},
    [None],
    [1],
    ["x"],
    [{}],
    [[]],
    {"a": None},
    {"name": 1},
    nested(20, 1, as_list=True),
    nested(20, "x", as_list=False),
    nested(70, None, as_list=True),
]


def node_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every node's path below the root (keys and list indexes), parents first."""
    paths = [path] if path else []
    if isinstance(value, dict):
        for key, child in value.items():
            paths += node_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            paths += node_paths(child, (*path, index))
    return paths


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = copy.deepcopy(new)
    return out


def dotted(path: tuple[Any, ...]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def harmless(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` running ``true`` on one or two nodes without GPUs: what a local test may
    really start."""
    out = {k: v for k, v in body.items() if k not in ("script", "workdir", "args")}
    out["command"] = ["true"]
    out["nodes"] = min(out.get("nodes", 1), 2) if isinstance(out.get("nodes"), int) else 1
    out["gpus"] = 0
    for elastic in ("minNodes", "maxNodes"):
        if out.get(elastic) is not None:
            out[elastic] = out["nodes"]
    return out


def example_body(script: str, kind: str) -> dict[str, Any]:
    name = script.removesuffix(".py").replace("_", "-")
    return {"kind": kind, "name": name, "command": ["python", f"examples/{script}"], "nodes": 2}


@st.composite
def seeds(draw: st.DrawFn) -> dict[str, Any]:
    """A valid manifest of either kind (rendered, an example's, hand-written, foreign)."""
    source = draw(st.sampled_from(["pytorchjob", "trainjob", "example", "written", "foreign"]))
    if source == "written":
        return draw(manifests())
    if source == "foreign":
        return copy.deepcopy(FOREIGN)
    if source == "example":
        body = example_body(
            draw(st.sampled_from(SCRIPTS)), draw(st.sampled_from(["PyTorchJob", "TrainJob"]))
        )
    else:
        body = draw(job_bodies() if source == "pytorchjob" else trainjob_bodies())
    spec = JobSpec.from_wire(harmless(body))
    return kind_for(spec).build(spec)


@st.composite
def mutants(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """(the seed's job body, the seed with one node replaced, that node's path and new
    value as the report shows them)."""
    seed = draw(seeds())
    body = kind_of(seed).parse(seed).to_wire()
    paths = node_paths(seed)
    path = paths[draw(st.integers(0, len(paths) - 1))]
    new = draw(st.sampled_from(REPLACEMENTS))
    shown = f"{seed['kind']} {dotted(path)} = {json.dumps(new)[:30]}"
    return body, replaced(seed, path, new), dotted(path), shown


# -- the server, on either backend ------------------------------------------------------


@pytest.fixture
def backend(jp_serverapp: Any, jp_asyncio_loop: Any) -> Any:
    """The server's backend; every job left is deleted afterwards."""
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    yield backend
    for job in jp_asyncio_loop.run_until_complete(backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(backend.delete_job(job.name))


class Tally:
    """Answers by step and status; refusals that name the mutated node (or a part of it)."""

    def __init__(self) -> None:
        self.answers: Counter[tuple[str, int]] = Counter()
        self.refusals = 0
        self.named = 0
        self.cluster_refusals = 0
        self.mutant = ""
        # Wrong answers, collected rather than raised: the sweep runs on (no shrinking
        # with real processes) and the report counts them all.
        self.wrong: list[str] = []

    def check(self, step: str, response: Any, mutated: str | None = None) -> Any:
        self.answers[step, response.code] += 1
        body = response.body.decode(errors="replace")
        answer = json.loads(body) if body else None
        if response.code >= 500 or (
            response.code >= 400 and response.code not in (400, 404, 409, 413, 422)
        ):
            self.wrong.append(f"{step} {response.code} after {self.mutant}: {body[:300]}")
            return None
        if response.code >= 400 and not (isinstance(answer, dict) and answer.get("message")):
            self.wrong.append(f"{step} {response.code} says nothing: {body[:300]}")
        elif response.code in (400, 422) and "field" in answer:
            fields = [answer["field"], *(e.get("field") for e in answer.get("errors", []))]
            if not all(fields):
                self.wrong.append(f"{step} {response.code} names no field: {body[:300]}")
            if mutated is not None:
                self.refusals += 1
                self.named += any(related(f, mutated) for f in fields if f)
        elif response.code in (400, 422):
            # The API server's refusal (admission, the CRD schema): its message names the
            # field, as Kubernetes writes it.
            self.cluster_refusals += 1
        return answer

    def report(self, what: str) -> None:
        print(
            f"\n{what}: {sum(self.answers.values())} requests; answers "
            f"{dict(sorted(self.answers.items()))}; refusals naming the mutated node or a "
            f"part of it: {self.named} of {self.refusals}; refused by the API server: "
            f"{self.cluster_refusals}; wrong answers: {len(self.wrong)}"
        )
        for line in self.wrong[:40]:
            print("  ", line)


def related(field: str, mutated: str) -> bool:
    """Whether an error's field names the mutated node, a node inside it or around it
    (``extras.`` + its path when it came as ``extras``)."""
    field = field.removeprefix("extras.")
    return field.startswith(mutated) or mutated.startswith(field)


async def post(jp_fetch: Any, *path: str, body: Any) -> Any:
    return await jp_fetch(
        *API, *path, method="POST", body=json.dumps(body), raise_error=False, request_timeout=120
    )


async def exercise(jp_fetch: Any, tally: Tally, job: dict[str, Any], local: bool) -> None:
    """Submit ``job`` and, if created, read, suspend and delete it: never a 5xx."""
    if local:
        job = harmless(job)
    created = tally.check("POST jobs", await post(jp_fetch, "jobs", body=job))
    if created is None or "name" not in created or "state" not in created:
        return
    name = created["name"]
    try:
        for step, path in (
            ("GET job", ("jobs", name)),
            ("GET jobs", ("jobs",)),
            ("GET events", ("jobs", name, "events")),
        ):
            tally.check(step, await jp_fetch(*API, *path, raise_error=False))
        response = await jp_fetch(
            *API,
            "jobs",
            name,
            method="PATCH",
            body=json.dumps({"suspend": True}),
            raise_error=False,
        )
        tally.check("PATCH", response)
    finally:
        # 404: a job with ttlSecondsAfterFinished may be gone already.
        tally.check(
            "DELETE", await jp_fetch(*API, "jobs", name, method="DELETE", raise_error=False)
        )


@pytest.mark.slow
def test_one_node_mutations_never_answer_5xx(
    jp_fetch: Any, jp_asyncio_loop: Any, backend: Any, backend_name: str
) -> None:
    tally = Tally()
    local = backend_name == "local"
    accepted = [0]

    async def submit(job: dict[str, Any]) -> None:
        accepted[0] += 1
        if not local or accepted[0] % SUBMIT_EVERY == 1 or SUBMIT_EVERY == 1:
            await exercise(jp_fetch, tally, job, local)

    async def one(body: dict[str, Any], mutant: dict[str, Any], path: str, shown: str) -> None:
        tally.mutant = shown
        text = manifest_to_yaml(mutant)
        applied = tally.check(
            "render yaml", await post(jp_fetch, "render", body={"yaml": text}), path
        )
        if applied is not None and "job" in applied:
            await submit(applied["job"])
        extras = {**body, "extras": mutant}
        rendered = tally.check("render extras", await post(jp_fetch, "render", body=extras), path)
        if rendered is not None and "job" in rendered:
            await submit(extras)

    @FUZZ
    @given(mutants())
    def check(mutant: tuple[dict[str, Any], dict[str, Any], str, str]) -> None:
        jp_asyncio_loop.run_until_complete(one(*mutant))

    check()
    tally.report(f"one-node mutations, {backend_name} backend")
    assert tally.wrong == []
    assert tally.answers["render yaml", 200] and tally.answers["render yaml", 400]


# The findings, each refused naming the node: (kind, path, value).
POD = ("template", "spec")
TRAINJOB_POD = (
    "spec",
    "runtimePatches",
    0,
    "trainingRuntimeSpec",
    "template",
    "spec",
    "replicatedJobs",
    0,
    "template",
    "spec",
    "template",
    "spec",
)
MASTER_POD = ("spec", "pytorchReplicaSpecs", "Master", *POD)
FOUND: list[tuple[str, tuple[Any, ...], Any]] = [
    ("TrainJob", ("spec", "runtimeRef"), [1]),
    ("TrainJob", ("spec", "trainer"), [1]),
    ("TrainJob", (*TRAINJOB_POD, "nodeSelector"), 5),
    ("TrainJob", (*TRAINJOB_POD, "volumes"), [None]),
    ("PyTorchJob", (*MASTER_POD, "containers"), [None]),
    ("PyTorchJob", (*MASTER_POD, "containers", 0, "command"), ["python", None]),
    ("PyTorchJob", (*MASTER_POD, "volumes"), [None]),
]


@pytest.mark.parametrize(("kind", "path", "value"), FOUND, ids=[dotted(p) for _, p, _ in FOUND])
async def test_what_the_sweep_found_is_refused_by_name_and_nothing_is_created(
    jp_fetch: Any, backend: Any, kind: str, path: tuple[Any, ...], value: Any
) -> None:
    body = {
        "kind": kind,
        "name": "found",
        "nodes": 2,
        "command": ["true"],
        "nodeSelector": {"pool": "a"},
        "pvc": [{"claim": "data", "mountPath": "/data"}],
    }
    spec = JobSpec.from_wire(body)
    mutant = replaced(kind_for(spec).build(spec), path, value)
    tally = Tally()
    answer = tally.check(
        "render yaml", await post(jp_fetch, "render", body={"yaml": manifest_to_yaml(mutant)})
    )
    assert answer["field"].startswith(dotted(path)), answer
    for step in ("render", "jobs"):
        answer = tally.check(step, await post(jp_fetch, step, body={**body, "extras": mutant}))
        assert answer["field"].startswith(f"extras.{dotted(path)}"), answer
    assert tally.wrong == [] and set(tally.answers.values()) == {1}
    assert {code for _, code in tally.answers} == {400}, tally.answers
    assert await backend.list_jobs() == []
