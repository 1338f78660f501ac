"""Mutation check of the authorization tests: remove a check, the tests must fail.

For each ``@authorized`` decorator of our handlers, for the log websocket's own
authorizer call, and for the defences against foreign requests (``DEFENCES``: the
TensorBoard proxy stripping ``Cookie``/``Authorization``, the log websocket's origin
check), this copies the package and the tests into a temporary directory, removes that
one check, and runs ``TESTS`` there. A mutant whose tests still pass is a check no test
would miss: the script lists it and exits 1.

    python tests/mutation_auth.py            # every check on its own (about 20 runs)
    python tests/mutation_auth.py --all      # all checks removed at once (one run)

Run it from the repository root with the project's environment (CI: after the tests).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HANDLER_FILES = ("jupyter_pytorchjob/handlers.py", "jupyter_pytorchjob/tensorboard/handlers.py")
TESTS = ("tests/test_authorization.py", "tests/test_foreign_requests.py")
TEST = " ".join(TESTS)  # as the messages name them
# The websocket's check: the authorizer's answer must refuse the upgrade.
WS_CHECK = re.compile(r"^(\s*)if not allowed:\n\s*raise web\.HTTPError\(403\)$", re.MULTILINE)


# Defences against foreign requests: name -> (file, the code, the code without it).
_PROXY = "jupyter_pytorchjob/tensorboard/handlers.py"
_STRIPPED = 'for name in ("Authorization", "Cookie"):'
DEFENCES = {
    "proxy passes Cookie on": (_PROXY, _STRIPPED, 'for name in ("Authorization",):'),
    "proxy passes Authorization on": (_PROXY, _STRIPPED, 'for name in ("Cookie",):'),
    "log websocket takes any Origin": (
        "jupyter_pytorchjob/handlers.py",
        "    auth_resource = AUTH_RESOURCE\n    _task: asyncio.Task[None] | None = None\n",
        "    auth_resource = AUTH_RESOURCE\n    _task: asyncio.Task[None] | None = None\n\n"
        "    def check_origin(self, origin: str | None = None) -> bool:\n        return True\n",
    ),
}


@dataclass(frozen=True)
class Mutant:
    """One removed check: ``file``, the line it was on, and how it is removed."""

    file: str
    line: int
    what: str

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        if self.what in DEFENCES:
            old, new = DEFENCES[self.what][1:]
            assert text.count(old) == 1, f"{self.what}: {old!r} not found once"
            return text.replace(old, new)
        if self.what == "decorator":
            assert lines[self.line - 1].strip() == "@authorized", lines[self.line - 1]
            del lines[self.line - 1]
            return "\n".join(lines)
        mutated, count = WS_CHECK.subn(r"\1pass", text)
        assert count == 1, "the websocket's authorization check was not found"
        return mutated


def mutants() -> list[Mutant]:
    found = []
    for name in HANDLER_FILES:
        text = (ROOT / name).read_text()
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip() == "@authorized":
                found.append(Mutant(name, number, "decorator"))
        match = WS_CHECK.search(text)
        if match:
            found.append(Mutant(name, text[: match.start()].count("\n") + 2, "websocket check"))
    for what, (name, old, _) in DEFENCES.items():
        text = (ROOT / name).read_text()
        if old in text:
            found.append(Mutant(name, text[: text.index(old)].count("\n") + 1, what))
        else:
            print(f"{what}: not found in {name}: the script is out of date", file=sys.stderr)
            found.append(Mutant(name, 0, what))  # fails in apply: the run says so
    return found


def survives(applied: list[Mutant]) -> bool:
    """Whether the authorization tests pass on a copy with ``applied`` removed."""
    with tempfile.TemporaryDirectory(prefix="ptjob-mutant-") as tmp:
        copy = Path(tmp)
        shutil.copytree(ROOT / "jupyter_pytorchjob", copy / "jupyter_pytorchjob")
        shutil.copytree(ROOT / "tests", copy / "tests")
        shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
        for name in {m.file for m in applied}:
            path = copy / name
            text = path.read_text()
            # Bottom-up, so that earlier line numbers stay right.
            for mutant in sorted((m for m in applied if m.file == name), key=lambda m: -m.line):
                text = mutant.apply(text)
            path.write_text(text)
        env = {**os.environ, "PYTHONPATH": str(copy)}
        result = subprocess.run(
            [sys.executable, "-m", "pytest", *TESTS, "-q", "-x", "-p", "no:cacheprovider"],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        return result.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="remove every check at once")
    options = parser.parse_args()
    found = mutants()
    if not found:
        print("no authorization checks found: the script is out of date", file=sys.stderr)
        return 1
    if not survives([]):  # the control: unmutated, the copy's tests must pass
        print(f"{TEST} fails on an unmutated copy: fix that first", file=sys.stderr)
        return 1
    runs = [found] if options.all else [[m] for m in found]
    survivors = []
    for applied in runs:
        label = "all checks" if options.all else f"{applied[0].file}:{applied[0].line}"
        alive = survives(applied)
        print(f"{'SURVIVED' if alive else 'killed  '}  {label} ({applied[0].what})", flush=True)
        if alive:
            survivors.append(label)
    print(f"{len(runs) - len(survivors)} of {len(runs)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
