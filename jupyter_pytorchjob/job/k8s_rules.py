"""Kubernetes validation rules, as ``k8s.io/apimachinery`` states them.

Each ``check_*`` returns ``None`` when the value is fine, else a ``Message`` that
says what is allowed. The regular expressions and limits follow
``apimachinery/pkg/util/validation/validation.go`` and ``api/resource/quantity.go``.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # decimal is imported where quantities are parsed: reading jobs parses none
    from decimal import Decimal

from .messages import Message, msg

DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# The classic env-var rule (kubelets before 1.34 enforce it; the relaxed rule of
# newer clusters accepts a superset, so this is safe on every cluster).
ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
# The CRD's quantity pattern (resource.Quantity), anchored.
QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

LABEL_MAX = 63
SUBDOMAIN_MAX = 253
INT32_MAX = 2**31 - 1
# "No quantity may represent a number greater than 2^63-1 in magnitude" (quantity.go).
QUANTITY_MAX = 2**63 - 1
QUANTITY_MIN = "1e-9"  # 1n; Kubernetes rounds anything smaller up to it
# Linux: one path component (NAME_MAX) and a whole path (PATH_MAX, its NUL included).
NAME_MAX = 255
PATH_MAX = 4096

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {  # each a Decimal's text
    "n": "1e-9",
    "u": "1e-6",
    "m": "1e-3",
    "": "1",
    "k": "1e3",
    "M": "1e6",
    "G": "1e9",
    "T": "1e12",
    "P": "1e15",
    "E": "1e18",
}
_SUFFIX = re.compile(r"^([+-]?[0-9.]+)((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?[0-9.]+))?$")


def check_dns1035_label(value: str) -> Message | None:
    """RFC 1035 label: what PyTorchJob names and Service names must be."""
    if len(value) > LABEL_MAX:
        return msg("max_length", maximum=LABEL_MAX, length=len(value))
    if not DNS1035_LABEL.match(value):
        return msg("dns1035_label")
    return None


def check_dns1123_subdomain(value: str) -> Message | None:
    """RFC 1123 subdomain: names of most objects, PVCs included."""
    if len(value) > SUBDOMAIN_MAX:
        return msg("max_length", maximum=SUBDOMAIN_MAX, length=len(value))
    if not DNS1123_SUBDOMAIN.match(value):
        return msg("dns1123_subdomain")
    return None


def check_qualified_name(value: str) -> Message | None:
    """A label, annotation, node-selector or toleration key: ``[prefix/]name``."""
    prefix, slash, name = value.rpartition("/")
    if not slash:
        prefix, name = "", value
    elif not prefix:
        return msg("prefix_empty")
    if prefix:
        problem = check_dns1123_subdomain(prefix)
        if problem:
            return msg("prefix_invalid", prefix=repr(prefix), problem=problem)
    if not name:
        return msg("name_part_empty")
    if len(name) > LABEL_MAX:
        return msg("name_part_length", maximum=LABEL_MAX, length=len(name))
    if not QUALIFIED_NAME_PART.match(name):
        return msg("qualified_name")
    return None


def check_label_value(value: str) -> Message | None:
    """A label value (also node-selector and toleration values)."""
    if len(value) > LABEL_MAX:
        return msg("max_length", maximum=LABEL_MAX, length=len(value))
    if not LABEL_VALUE.match(value):
        return msg("label_value")
    return None


def check_env_name(value: str) -> Message | None:
    """An environment variable name."""
    if not ENV_VAR_NAME.match(value):
        return msg("env_var_name")
    return None


def parse_quantity(value: str) -> Decimal:
    """The numeric value of a Kubernetes quantity; ``ValueError`` if it is not one."""
    from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, localcontext

    text = value.strip()
    if not QUANTITY.match(text):
        raise ValueError(value)
    match = _SUFFIX.match(text)
    if match is None:  # pragma: no cover - QUANTITY and _SUFFIX agree
        raise ValueError(value)
    number, suffix = match.group(1), match.group(2) or ""
    # Exponents such as 1e1000000 are legal syntax: compute them without overflow
    # (an exact, unbounded context), and let the callers judge the size.
    with localcontext(Context(prec=64, Emax=MAX_EMAX, Emin=MIN_EMIN)):
        try:
            base = Decimal(number)
            if suffix in _BINARY:
                return base * _BINARY[suffix]
            if suffix in _DECIMAL:
                return base * Decimal(_DECIMAL[suffix])
            return base * (Decimal(10) ** Decimal(suffix[1:]))
        except ArithmeticError as err:  # beyond even the unbounded context
            raise ValueError(value) from err


def check_quantity(value: str, *, what: str, memory: bool) -> Message | None:
    """A positive quantity such as ``8Gi`` (memory) or ``500m`` (CPU)."""
    from decimal import Decimal

    shown = repr(value if len(value) <= 40 else value[:37] + "...")
    if value != value.strip() or not QUANTITY.match(value):
        return msg("quantity_memory" if memory else "quantity_cpu", got=shown)
    try:
        amount = parse_quantity(value)
    except ValueError:
        amount = Decimal(QUANTITY_MAX + 1)
    if amount <= 0:
        return msg("quantity_positive", what=what, got=shown)
    if amount > QUANTITY_MAX:
        return msg("quantity_max", what=what, got=shown)
    if amount < Decimal(QUANTITY_MIN):
        return msg("quantity_min", what=what, got=shown)
    if memory and value.endswith("m"):
        return msg(
            "quantity_milli", got=repr(value), amount=str(amount), suggestion=value[:-1] + "Mi"
        )
    return None


def check_absolute_path(value: str) -> Message | None:
    """An absolute, normalised container path without ``..``."""
    if not value.startswith("/"):
        return msg("absolute_path", got=repr(value))
    if ".." in value.split("/"):
        return msg("no_dotdot", got=repr(value))
    return _path_problem(value)


def _path_problem(value: str) -> Message | None:
    if "\x00" in value or "\n" in value:
        return msg("path_characters")
    if len(value.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        return msg("path_length", maximum=PATH_MAX)
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in value.split("/")):
        return msg("path_part_length", maximum=NAME_MAX)
    return None


def normalise_path(value: str) -> str:
    """``/a//b/./c/`` -> ``/a/b/c`` (``posixpath.normpath`` keeps a leading ``//``)."""
    normal = posixpath.normpath(value)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def check_relative_path(value: str) -> Message | None:
    """A volume sub-path: relative, no ``..``."""
    if value.startswith("/"):
        return msg("relative_path", got=repr(value))
    if ".." in value.split("/"):
        return msg("no_dotdot", got=repr(value))
    return _path_problem(value)
