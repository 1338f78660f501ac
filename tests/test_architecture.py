"""The layers of ARCHITECTURE.md, read from the imports themselves.

Python: every ``import`` of the package (ast), those inside functions too - a lazy import
breaks a cycle at run time but is still a dependency. TypeScript: the relative imports of
``src/`` (tests and declarations left out). Both fail on an import cycle and on an import
against the direction of the layers.
"""

from __future__ import annotations

import ast
import graphlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "jupyter_pytorchjob"
SRC = ROOT / "src"

Graph = dict[str, set[str]]
Edge = tuple[str, str]

# ---------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------

# The parts of the package (its first-level modules and subpackages; "" is the package's
# own __init__) and the other parts each may import. The job model is pure and at the
# bottom; the backends build on it; the shells (REST handlers, TensorBoard, app, CLI,
# magic) build on both; the package root only holds the lazily imported entry points.
MAY_IMPORT: dict[str, set[str]] = {
    "job": set(),
    "processes": set(),  # process identity and reaping: a leaf the local backend and CLI use
    "untrusted_files": set(),  # reading what a volume holds (see ANY_PART_MAY_IMPORT)
    "_version": set(),
    "package_version": {"_version"},  # the version, a leaf both the root and app name
    "report": set(),  # a training script's reporter: standard library only, copyable
    "api": set(),  # the package of openapi.yaml: no code
    "kinds": {"job"},  # PyTorchJob, TrainJob: manifests, rules, status - pure
    "backends": {"job", "kinds", "processes"},
    "arguments": {"job", "backends"},  # the one parser of `ptjob` and `%ptjob`
    "rest": {"job"},  # what the job API's and TensorBoard's handlers share
    "tensorboard": {"job", "processes", "rest"},
    "handlers": {"job", "kinds", "backends", "tensorboard", "rest"},
    "app": {"job", "kinds", "backends", "handlers", "tensorboard", "rest", "package_version"},
    # What the CLI and the magic share (server client, formatting, backend choice).
    "frontends": {"job", "kinds", "backends", "processes"},
    "cli": {"job", "kinds", "backends", "arguments", "frontends", "tensorboard"},
    # The magic: the Python API behind IPython's syntax.
    "magics": {"job", "kinds", "backends", "arguments", "frontends", "function", "sdk"},
    # A function as a job: capture, the job script, its result file (pure).
    "function": set(),
    # The Python API (submit, Job): plain Python, no IPython; the magic is built on it.
    "sdk": {"job", "kinds", "backends", "arguments", "frontends", "function"},
    "": {"package_version", "app", "magics", "sdk", "report"},
}

# The backends themselves, within ``backends``: what both share (the contract, the log
# archive, merging, progress, timestamps) imports neither; only the registry
# (``backends/__init__``) names them.
BACKEND_IMPLEMENTATIONS = ("local", "kubernetes")

# Leaves every part may import (standard library only): reading a file that a volume
# holds - an archive, an event file, a result - goes through one module, whatever the layer.
ANY_PART_MAY_IMPORT = {"untrusted_files"}

# The imports that break the rules today, each with what removes it. They are exempt from
# the direction and cycle checks; the test fails once one is gone, so the list only shrinks.
KNOWN_PYTHON_EXCEPTIONS: dict[Edge, str] = {}

# src/ modules that import only each other: no view, no model, no command.
TS_LEAVES = {"tokens", "commandids", "settings", "request", "icons"}

# Only the plugin (index.ts) and the commands themselves import the commands: the views
# name commands through commandids.ts.
TS_COMMANDS = "commands"
TS_COMMAND_USERS = {"index"}


# ---------------------------------------------------------------------------------------
# Reading the imports
# ---------------------------------------------------------------------------------------


def python_modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement may load (a module or a name in one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        if node.module:
            base.append(node.module)
        prefix = ".".join(base)
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" for alias in node.names] + [prefix]


def python_graph() -> Graph:
    """Module -> the modules of the package it imports."""
    modules = python_modules()
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = _imported_names(node, name, path.name == "__init__.py")
            # `from .x import y`: the module x.y when it is one, else x itself.
            candidates = names[:-1] if isinstance(node, ast.ImportFrom) else names
            for target in candidates:
                resolved = _nearest_module(target, modules)
                if resolved is None and isinstance(node, ast.ImportFrom):
                    resolved = _nearest_module(names[-1], modules)
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def _nearest_module(dotted: str, modules: Mapping[str, Path]) -> str | None:
    """The module a dotted name is, or the one it is a name in; None outside the package."""
    while dotted:
        if dotted in modules:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def python_part(module: str) -> str:
    """The part of the package a module belongs to ("" for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


TS_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}/[^'"]+)['"]"""
    r"""|^\s*import\s*['"](\.{1,2}/[^'"]+)['"]"""
    r"""|\bimport\(\s*['"](\.{1,2}/[^'"]+)['"]\s*\)""",
    re.MULTILINE,
)


def ts_modules() -> dict[str, Path]:
    """Every module of src/ by its path without extension, tests and declarations left out."""
    modules: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.ts*")):
        if "__tests__" in path.parts or path.name.endswith(".d.ts"):
            continue
        if path.suffix in (".ts", ".tsx"):
            modules[path.relative_to(SRC).with_suffix("").as_posix()] = path
    return modules


def ts_graph() -> Graph:
    """Module -> the modules of src/ it imports (assets outside src/ left out)."""
    modules = ts_modules()
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        for match in TS_IMPORT.finditer(path.read_text(encoding="utf-8")):
            specifier = next(group for group in match.groups() if group)
            target = (path.parent / specifier).resolve()
            if SRC.resolve() not in target.parents:
                continue
            relative = target.relative_to(SRC.resolve()).as_posix()
            found = [m for m in (relative, f"{relative}/index") if m in modules]
            assert found, f"src/{name}: cannot resolve the import of {specifier!r}"
            graph[name].add(found[0])
    return graph


# ---------------------------------------------------------------------------------------
# The checks (plain functions, also tested on small graphs below)
# ---------------------------------------------------------------------------------------


def first_cycle(graph: Mapping[str, Iterable[str]], exempt: Iterable[Edge] = ()) -> list[str]:
    """A cycle of imports (first module repeated at the end), or [] when there is none."""
    skip = set(exempt)
    dependencies = {
        name: {t for t in targets if (name, t) not in skip} for name, targets in graph.items()
    }
    try:
        graphlib.TopologicalSorter(dependencies).prepare()
    except graphlib.CycleError as error:
        cycle: list[str] = list(reversed(error.args[1]))
        return cycle
    return []


def python_layer_violations(
    graph: Mapping[str, Iterable[str]], exempt: Iterable[Edge] = ()
) -> list[str]:
    """Every import of one part of the package into a part it may not import."""
    skip = set(exempt)
    problems = []
    for module, targets in sorted(graph.items()):
        part = python_part(module)
        if part not in MAY_IMPORT:
            problems.append(f"{module}: the part {part!r} has no place in MAY_IMPORT; give it one")
            continue
        for target in sorted(targets):
            other = python_part(target)
            allowed = MAY_IMPORT[part] | ANY_PART_MAY_IMPORT
            if other != part and other not in allowed and (module, target) not in skip:
                problems.append(
                    f"{module} imports {target}: "
                    f"{part or 'the package root'} may not import {other or 'the package root'}"
                )
    return problems


def ts_direction_violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import out of a leaf into a non-leaf, and every import of the commands by a view."""
    problems = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if module in TS_LEAVES and target not in TS_LEAVES:
                problems.append(f"src/{module} is a leaf but imports src/{target}")
            if (
                _ts_area(target) == TS_COMMANDS
                and _ts_area(module) != TS_COMMANDS
                and module not in TS_COMMAND_USERS
            ):
                problems.append(
                    f"src/{module} imports src/{target}: only the plugin registers commands; "
                    "name them through commandids.ts"
                )
    return problems


def _ts_area(module: str) -> str:
    """The top folder (or module) of src/ a module is in."""
    return module.split("/")[0]


def stale_exceptions(graph: Mapping[str, Iterable[str]], exceptions: Iterable[Edge]) -> list[Edge]:
    """The exempted imports that no longer exist."""
    return [(a, b) for a, b in exceptions if b not in graph.get(a, ())]


# ---------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------


def test_python_graph_is_read() -> None:
    graph = python_graph()
    # A few imports every version of the package has: the reader must see them.
    assert f"{PACKAGE}.job.spec" in graph[f"{PACKAGE}.kinds.pytorchjob.manifest"]
    assert f"{PACKAGE}.job.spec" in graph[f"{PACKAGE}.backends.base"]
    assert f"{PACKAGE}.app" in graph[PACKAGE]  # inside a function
    assert all(python_part(m) in MAY_IMPORT for m in graph), sorted(
        set(map(python_part, graph)) - set(MAY_IMPORT)
    )


def test_python_imports_have_no_cycle() -> None:
    cycle = first_cycle(python_graph(), KNOWN_PYTHON_EXCEPTIONS)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_python_imports_follow_the_layers() -> None:
    problems = python_layer_violations(python_graph(), KNOWN_PYTHON_EXCEPTIONS)
    assert not problems, "\n".join(problems)


def shared_backend_violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of a backend implementation by a module both backends share."""
    backends = f"{PACKAGE}.backends"
    implementations = tuple(f"{backends}.{name}" for name in BACKEND_IMPLEMENTATIONS)

    def within(module: str) -> bool:
        return any(module == i or module.startswith(f"{i}.") for i in implementations)

    return [
        f"{module} imports {target}: what both backends share imports neither"
        for module, targets in sorted(graph.items())
        if module.startswith(f"{backends}.") and not within(module)
        for target in sorted(targets)
        if within(target)
    ]


def test_what_the_backends_share_imports_neither_backend() -> None:
    problems = shared_backend_violations(python_graph())
    assert not problems, "\n".join(problems)


def test_python_known_exceptions_still_exist() -> None:
    stale = stale_exceptions(python_graph(), KNOWN_PYTHON_EXCEPTIONS)
    assert not stale, f"fixed, remove from KNOWN_PYTHON_EXCEPTIONS: {stale}"


def test_ts_graph_is_read() -> None:
    graph = ts_graph()
    assert "tokens" in graph["api"]
    assert "commands/index" in graph["index"]
    assert "commandids" in graph["panel"]  # a multi-line import would do too
    assert set(TS_LEAVES) <= set(graph)


def test_ts_imports_have_no_cycle() -> None:
    cycle = first_cycle(ts_graph())
    assert not cycle, "import cycle: " + " -> ".join(f"src/{m}" for m in cycle)


def test_ts_imports_follow_the_direction() -> None:
    problems = ts_direction_violations(ts_graph())
    assert not problems, "\n".join(problems)


# The checks themselves, on graphs made for them: each must see what it is for.


def test_first_cycle_finds_a_lazy_cycle_unless_exempt() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    cycle = first_cycle(graph)
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert first_cycle(graph, [("c", "a")]) == []


@pytest.mark.parametrize(
    ("module", "target"),
    [
        (f"{PACKAGE}.job.spec", f"{PACKAGE}.backends.base"),
        (f"{PACKAGE}.backends.local.backend", f"{PACKAGE}.handlers"),
        (f"{PACKAGE}.backends.base", f"{PACKAGE}.tensorboard.manager"),
        (f"{PACKAGE}.backends.kubernetes.backend", f"{PACKAGE}.cli"),
        (f"{PACKAGE}.tensorboard.manager", f"{PACKAGE}.app"),
        (f"{PACKAGE}.cli", f"{PACKAGE}.magics"),
        (f"{PACKAGE}.untrusted_files", f"{PACKAGE}.job.errors"),  # a leaf: stdlib only
    ],
)
def test_layer_check_refuses_an_upward_import(module: str, target: str) -> None:
    assert python_layer_violations({module: {target}}) != []


def test_every_part_may_read_untrusted_files() -> None:
    graph = {
        f"{PACKAGE}.{part}.x" if part else PACKAGE: {f"{PACKAGE}.untrusted_files"}
        for part in MAY_IMPORT
        if part != "untrusted_files"
    }
    assert python_layer_violations(graph) == []


def test_ts_direction_check_refuses_a_leaf_on_a_view_and_a_view_on_the_commands() -> None:
    assert ts_direction_violations({"tokens": {"panel"}}) != []
    assert ts_direction_violations({"jobview": {"commands/index"}}) != []
    assert ts_direction_violations({"panel": {"commands"}}) != []  # the old commands.ts
    assert (
        ts_direction_violations(
            {"index": {"commands/index"}, "commands/jobs": {"commands/context"}}
        )
        == []
    )


def test_ts_reader_sees_every_import_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "index.ts").write_text("export const a = 1;\n")
    (src / "b.ts").write_text("export const b = 1;\n")
    (src / "c.ts").write_text("export const c = 1;\n")
    (src / "d.tsx").write_text("export const d = 1;\n")
    (src / "e.ts").write_text("export const e = 1;\n")
    (src / "main.ts").write_text(
        "import {\n  a\n} from './sub';\nexport * from './b';\nimport './c';\n"
        "import icon from '../style/x.svg';\nconst lazy = () => import('./d');\n"
        "export type { E } from './e';\n"
    )
    monkeypatch.setitem(globals(), "SRC", src)
    assert ts_graph()["main"] == {"sub/index", "b", "c", "d", "e"}


def test_the_package_cites_no_file_outside_the_repository() -> None:
    """A reader of the package has the package: say the rule in place, or cite upstream
    code (repository, tag, file), never the notes or product brief beside the checkout."""
    outside = re.compile(r"notes/\w+\.md|PRODUCT\.md|\.\./shared")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / PACKAGE).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert found == []
