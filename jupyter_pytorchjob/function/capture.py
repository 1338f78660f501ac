"""A function's source with every notebook-level name it needs made explicit.

``capture(fn)`` reads ``fn``'s source with ``inspect`` and finds the global names it
uses (the ``LOAD_GLOBAL`` instructions of its code and of the code nested in it, and
the names its default values, annotations and decorators evaluate). Each becomes a
line of the job's script:

* a **module** (``import torch.nn as nn``): ``import torch.nn as nn``;
* a function or class **importable from a module** (``from torch import optim``):
  ``from torch import optim`` - the job's image must have that module too (also a
  module of your own beside the notebook: ship it on a PVC, on ``PYTHONPATH``);
* a **plain constant** (None, bool, int, float, str, bytes and tuples, lists, dicts,
  sets of those): ``NAME = <repr>``;
* a **function or class defined in the notebook**: its own source, captured by the
  same rules (dependencies first);
* any **other picklable value** up to ``PICKLE_MAX_BYTES`` whose pickle needs nothing
  defined in the notebook: ``NAME = pickle.loads(...)`` - a copy, made at submit time.

The values a nested function closes over are captured by the same rules, as globals
of the script. Builtins stay builtins. What is refused, with ``CaptureError`` naming
the function and the name: a lambda, a method or a function defined in a class body,
a builtin or any other callable that is not a ``def`` function (a class, a
``functools.partial``, an instance), async and generator functions, a function whose
source ``inspect`` cannot read, a name that is not defined, and a value that can be
neither imported, written as a constant, nor pickled (an open file, a lock, a CUDA
context, a model holding a notebook class...). Nothing else travels: the notebook's
files, its working directory and objects created after ``submit`` stay here.
"""

from __future__ import annotations

import ast
import base64
import builtins
import dis
import importlib
import inspect
import linecache
import pickle
import sys
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: The largest pickled value one name may carry (the whole script must stay small:
#: it travels in one environment variable).
PICKLE_MAX_BYTES = 32 * 1024

_GLOBAL_OPS = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"}
_CONSTANT_TYPES = (type(None), bool, int, float, complex, str, bytes)


class CaptureError(ValueError):
    """The function cannot travel as it is; ``str()`` says why and what to do."""


@dataclass(frozen=True)
class CapturedFunction:
    """A function ready to run elsewhere: ``source`` defines ``name`` and everything
    it uses; ``captured`` says how each notebook-level name travels
    (``("nn", "import torch.nn as nn")``, ``("LR", "constant")``...)."""

    name: str
    source: str
    captured: tuple[tuple[str, str], ...] = ()

    def took_along(self) -> str:
        """What travels with the function, in words: ``torch (import torch), LR (constant)``."""
        if not self.captured:
            return "no notebook names"
        return ", ".join(f"{name} ({how})" for name, how in self.captured)


@dataclass
class _Capture:
    imports: dict[str, str] = field(default_factory=dict)  # name -> import line
    values: dict[str, str] = field(default_factory=dict)  # name -> assignment line
    definitions: dict[str, str] = field(default_factory=dict)  # name -> source (post-order)
    how: dict[str, str] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)  # name -> the captured value
    visiting: set[int] = field(default_factory=set)


def capture(fn: Any) -> CapturedFunction:
    """``fn`` as source that defines it and every notebook-level name it uses;
    ``CaptureError`` when it cannot travel (see the module's docstring)."""
    _check_shippable(fn, what=f"the function {getattr(fn, '__qualname__', None) or fn!r}")
    state = _Capture()
    root = fn.__name__
    _capture_function(fn, root, state)
    parts = [
        *state.imports.values(),
        *state.values.values(),
        *state.definitions.values(),
    ]
    captured = tuple((n, state.how[n]) for n in state.how if n != root)
    return CapturedFunction(root, "\n".join(p.rstrip("\n") for p in parts) + "\n", captured)


def _check_shippable(fn: Any, *, what: str) -> None:
    if inspect.ismethod(fn):
        raise CaptureError(
            f"{what} is a bound method: its instance stays in the notebook. "
            "Submit a function defined with def at the top level of a cell or module"
        )
    if inspect.isbuiltin(fn) or isinstance(
        fn, types.MethodWrapperType | types.WrapperDescriptorType
    ):
        raise CaptureError(
            f"{what} is a builtin: it has no Python source to ship. "
            "Call it from a function defined with def and submit that"
        )
    if not inspect.isfunction(fn):
        kind = "a class" if inspect.isclass(fn) else f"a {type(fn).__name__}"
        raise CaptureError(
            f"{what} is {kind}, not a function defined with def: only a def "
            "function travels (put the call inside one; pass values through args=)"
        )
    if fn.__name__ == "<lambda>":
        raise CaptureError(
            f"{what} is a lambda: its source cannot be shipped on its own. "
            "Define it with def at the top level of a cell or module"
        )
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise CaptureError(f"{what} is async: submit a plain (synchronous) function")
    if inspect.isgeneratorfunction(fn):
        raise CaptureError(f"{what} is a generator: return the result instead of yielding")
    parts = fn.__qualname__.split(".")
    if len(parts) > 1 and parts[-2] != "<locals>":
        raise CaptureError(
            f"{what} is defined in a class body (a method): its class "
            "does not travel with it. Move it to the top level of a cell or module"
        )


def _source_of(obj: Any, name: str) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as err:
        raise CaptureError(
            f"cannot read the source of {name} ({err}): define it in a notebook cell or "
            "a .py file (not with exec or eval)"
        ) from None


def _capture_function(fn: types.FunctionType, name: str, state: _Capture) -> None:
    if id(fn) in state.visiting:
        return
    state.visiting.add(id(fn))
    source = _source_of(fn, fn.__qualname__)
    tree = ast.parse(source)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise CaptureError(f"the source inspect finds for {fn.__qualname__} is not its def")
    target = inspect.unwrap(fn)
    names = dict.fromkeys(_code_globals(target.__code__))
    names.update(dict.fromkeys(_def_time_names(node)))
    for free, cell in zip(target.__code__.co_freevars, target.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: assigned after the def
            raise CaptureError(
                f"{fn.__qualname__} uses {free!r} from the function around it before it has a value"
            ) from None
        _capture_name(free, value, state, user=fn.__qualname__)
    for used in names:
        _capture_global(used, target.__globals__, state, user=fn.__qualname__)
    if node.name != name:
        source += f"{name} = {node.name}\n"
    state.definitions[name] = source
    state.how.setdefault(name, "function source")
    state.objects.setdefault(name, fn)


def _code_globals(code: types.CodeType) -> Iterator[str]:
    """The global names ``code`` (and every code object nested in it) reads or writes."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in _GLOBAL_OPS and isinstance(instruction.argval, str):
            yield instruction.argval
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_globals(const)


def _def_time_names(node: ast.FunctionDef | ast.ClassDef) -> Iterator[str]:
    """The names a def or class statement evaluates when it runs: decorators, default
    values and annotations (a def), bases and keywords (a class)."""
    exprs: list[ast.AST] = list(node.decorator_list)
    if isinstance(node, ast.FunctionDef):
        a = node.args
        exprs += [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        exprs += [x.annotation for x in every if x is not None and x.annotation is not None]
        if node.returns is not None:
            exprs.append(node.returns)
    else:
        exprs += [*node.bases, *(k.value for k in node.keywords)]
    for expr in exprs:
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                yield sub.id


def _capture_global(
    name: str, namespace: dict[str, Any], state: _Capture, *, user: str, required: bool = True
) -> None:
    if name.startswith("__") and name.endswith("__"):
        return  # __name__, __file__...: the script's own
    if name not in namespace:
        if hasattr(builtins, name) or not required:
            return
        raise CaptureError(
            f"{user} uses {name!r}, which is not defined here (neither in the notebook "
            "nor a builtin): define it before submitting, or pass it through args="
        )
    _capture_name(name, namespace[name], state, user=user)


def _capture_name(name: str, value: Any, state: _Capture, *, user: str) -> None:
    if name in state.objects:
        if state.objects[name] is not value:
            raise CaptureError(
                f"{user} uses {name!r}, but another captured function uses a different "
                f"{name!r}: rename one of them"
            )
        return
    state.objects[name] = value
    if isinstance(value, types.ModuleType):
        state.imports[name] = _import_module(name, value, user)
        state.how[name] = state.imports[name]
        return
    line = _import_line(name, value)
    if line is not None:
        state.imports[name] = line
        state.how[name] = line
        return
    if _is_constant(value):
        state.values[name] = f"{name} = {value!r}"
        state.how[name] = "constant"
        return
    if inspect.isfunction(value) and not _importable(value):
        _check_shippable(value, what=f"{name!r} (used by {user})")
        del state.objects[name]
        _capture_function(value, name, state)
        return
    if inspect.isclass(value) and not _importable(value):
        _capture_class(name, value, state, user)
        return
    state.values[name] = _pickled(name, value, user)
    state.how[name] = "pickled copy"


def _import_module(name: str, module: types.ModuleType, user: str) -> str:
    spec = getattr(module, "__spec__", None)
    real = module.__name__
    if spec is None or real == "__main__":
        raise CaptureError(
            f"{user} uses the module {name!r}, which cannot be imported by name "
            "(it has no import spec); import it from a file the job's image has"
        )
    if real == name:
        return f"import {real}"
    head, _, tail = real.rpartition(".")
    if tail == name and head:
        return f"from {head} import {tail}"
    return f"import {real} as {name}"


def _import_line(name: str, value: Any) -> str | None:
    """``from module import x as name`` when ``value`` is importable by name, else None."""
    if not (inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value)):
        return None
    if not _importable(value):
        return None
    module, qualname = value.__module__, value.__qualname__
    head = qualname.split(".")[0]
    if "." in qualname:
        return None  # a method or nested object: pickle decides
    return f"from {module} import {head}" + (f" as {name}" if name != head else "")


def _importable(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", "")
    if not module or module == "__main__" or module == "builtins" or "<locals>" in qualname:
        return False
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:
        return False
    return found is value


def _is_constant(value: Any, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if isinstance(value, _CONSTANT_TYPES):
        if not isinstance(value, str | bytes | bool | type(None)):
            try:  # nan and inf have no literal
                return bool(ast.literal_eval(repr(value)) == value)
            except (ValueError, SyntaxError):
                return False
        return len(value) <= PICKLE_MAX_BYTES if isinstance(value, str | bytes) else True
    if type(value) in (tuple, list, set, frozenset):
        return type(value) is not frozenset and all(_is_constant(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(
            _is_constant(k, depth + 1) and _is_constant(v, depth + 1) for k, v in value.items()
        )
    return False


def _pickled(name: str, value: Any, user: str) -> str:
    kind = type(value).__name__
    try:
        data = pickle.dumps(value, protocol=4)
    except Exception as err:
        raise CaptureError(
            f"{user} uses {name!r} (a {kind}), which cannot travel: it is neither a "
            f"module, a constant nor picklable ({err}). Create it inside the function, "
            "or pass what it is made from through args="
        ) from None
    if b"__main__" in data:
        raise CaptureError(
            f"{user} uses {name!r} (a {kind}), whose pickle needs something defined in the "
            "notebook: create it inside the function instead"
        )
    if len(data) > PICKLE_MAX_BYTES:
        raise CaptureError(
            f"{user} uses {name!r} (a {kind}) of {len(data)} bytes pickled; at most "
            f"{PICKLE_MAX_BYTES} bytes travel inside the job. Put the data on a PVC and "
            "load it inside the function"
        )
    text = base64.b64encode(data).decode("ascii")
    return f"{name} = __import__('pickle').loads(__import__('base64').b64decode({text!r}))"


def _capture_class(name: str, cls: type, state: _Capture, user: str) -> None:
    if id(cls) in state.visiting:
        return
    state.visiting.add(id(cls))
    if "<locals>" in cls.__qualname__ or "." in cls.__qualname__:
        raise CaptureError(
            f"{user} uses the class {name!r}, defined inside a function or class: "
            "define it at the top level of a cell or module"
        )
    source = _class_source(cls)
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    methods = [_unwrap_member(v) for v in vars(cls).values()]
    functions = [m for m in methods if inspect.isfunction(m)]
    # The names the class body sees: its module's (the notebook's) globals.
    module = sys.modules.get(cls.__module__)
    namespace = functions[0].__globals__ if functions else vars(module) if module else {}
    names = dict.fromkeys(_def_time_names(node))
    for fn in functions:
        names.update(dict.fromkeys(_code_globals(inspect.unwrap(fn).__code__)))
    body_names = dict.fromkeys(
        sub.id
        for stmt in node.body
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
        for sub in ast.walk(stmt)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)
    )
    for fn_node in node.body:
        if isinstance(fn_node, ast.FunctionDef):
            names.update(dict.fromkeys(_def_time_names(fn_node)))
    for used in names:
        _capture_global(used, namespace, state, user=cls.__qualname__)
    for used in body_names:  # class-body names may be the class's own: no error if absent
        _capture_global(used, namespace, state, user=cls.__qualname__, required=False)
    if node.name != name:
        source += f"{name} = {node.name}\n"
    state.definitions[name] = source
    state.how[name] = "class source"


def _unwrap_member(value: Any) -> Any:
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    if isinstance(value, property):
        return value.fget
    return value


def _class_source(cls: type) -> str:
    """A class's source. ``inspect`` cannot find a class defined in a notebook cell on
    Python < 3.13 (``__main__`` has no file); its methods know their cell, whose
    source IPython keeps in ``linecache``: the class statement around them is it."""
    try:
        return textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        pass
    for member in vars(cls).values():
        fn = _unwrap_member(member)
        if not inspect.isfunction(fn):
            continue
        code = inspect.unwrap(fn).__code__
        lines = linecache.getlines(code.co_filename)
        if not lines:
            continue
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            continue
        for node in tree.body:
            if (
                isinstance(node, ast.ClassDef)
                and node.name == cls.__name__
                and node.lineno <= code.co_firstlineno <= (node.end_lineno or 0)
            ):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return textwrap.dedent("".join(lines[start - 1 : node.end_lineno]))
    raise CaptureError(
        f"cannot read the source of the class {cls.__qualname__}: define it in a notebook "
        "cell or a .py file, with at least one method"
    )
