"""Package docstrings stay true to the code: every module a package's docstring lists
(``* ``name`` - ...``) exists in that package, and every module of the package is
listed, so a moved, renamed or added module cannot leave the prose behind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_pytorchjob"
# A bullet that names a module: "* ``store`` - ..." or "* ``capture.py`` - ...".
LISTED = re.compile(r"^\* ``([a-z0-9_]+)(?:\.py)?``\s+(?:-|is|owns)", re.MULTILINE)
# Packages whose docstring lists their modules (the others describe themselves in prose).
LISTING = sorted(
    init.parent
    for init in PACKAGE.rglob("__init__.py")
    if LISTED.search(ast.get_docstring(ast.parse(init.read_text())) or "")
)


def modules_of(package: Path) -> set[str]:
    return {
        p.stem if p.is_file() else p.name
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }


def test_the_packages_that_list_their_modules_are_found() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in LISTING}
    assert {"backends/local", "backends/kubernetes", "function", "job"} <= names


@pytest.mark.parametrize("package", LISTING, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_package_docstring_lists_exactly_its_modules(package: Path) -> None:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    listed = set(LISTED.findall(doc))
    present = modules_of(package)
    assert not listed - present, f"the docstring names missing modules: {listed - present}"
    assert not present - listed, f"modules the docstring does not list: {present - listed}"
