"""Label and field selectors with the API server's grammar (``labels/selector.go``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from jupyter_pytorchjob.job import k8s_rules


class SelectorError(ValueError):
    """Answered as 400 BadRequest with this message."""


_SPECIAL = "=!(),<>"
_TOKEN = re.compile(r"\s*(==|!=|[=!(),<>]|[^\s=!(),<>]+)")

Requirement = tuple[str, str, tuple[str, ...]]  # key, operator, values


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:  # only trailing whitespace left
            break
        out.append(match.group(1))
        pos = match.end()
    return out


def _is_ident(tok: str | None) -> bool:
    return tok is not None and tok[0] not in _SPECIAL


def parse_labels(text: str) -> list[Requirement]:
    """``a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3`` → requirements (empty = everything)."""
    toks = _tokens(text)
    reqs: list[Requirement] = []
    i = 0

    def peek() -> str | None:
        return toks[i] if i < len(toks) else None

    def fail(found: str | None, expected: str) -> SelectorError:
        return SelectorError(
            f"unable to parse requirement: found '{found or ''}', expected: {expected}"
        )

    while i < len(toks):
        negate = peek() == "!"
        if negate:
            i += 1
        key = peek()
        if not _is_ident(key):
            raise fail(key, "identifier")
        assert key is not None
        i += 1
        problem = k8s_rules.check_qualified_name(key)
        if problem:
            raise SelectorError(
                f'unable to parse requirement: key: Invalid value: "{key}": {problem}'
            )
        op = peek()
        if negate or op in (None, ","):
            if negate and op not in (None, ","):
                raise fail(op, "',' or 'end of string'")
            reqs.append((key, "!" if negate else "exists", ()))
        else:
            i += 1
            if op in ("in", "notin"):
                if peek() != "(":
                    raise fail(peek(), "'('")
                i += 1
                values: list[str] = []
                expect_value = True
                while peek() != ")":
                    tok = peek()
                    if tok == ",":
                        if expect_value:
                            values.append("")
                        expect_value = True
                    elif _is_ident(tok) and expect_value:
                        values.append(str(tok))
                        expect_value = False
                    else:
                        raise fail(tok, "',', ')' or identifier")
                    i += 1
                if values and expect_value:
                    values.append("")
                i += 1
                if not values:
                    raise SelectorError(
                        "unable to parse requirement: values: Invalid value: []: "
                        "for 'in', 'notin' operators, values set can't be empty"
                    )
                reqs.append((key, op, tuple(values)))
            elif op in ("=", "==", "!=", "<", ">"):
                tok = peek()
                value = ""
                if _is_ident(tok):
                    assert tok is not None
                    value = tok
                    i += 1
                elif tok not in (None, ","):
                    raise fail(tok, "identifier")
                if op in "<>" and not re.fullmatch(r"-?\d+", value):
                    raise SelectorError(
                        f'unable to parse requirement: values[0]: Invalid value: "{value}": '
                        "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                reqs.append((key, "!=" if op == "!=" else op if op in "<>" else "=", (value,)))
            else:
                raise fail(op, "[!=, <, =, ==, >, in, notin]")
            for value in reqs[-1][2]:
                problem = k8s_rules.check_label_value(value) if op not in "<>" else None
                if problem:
                    raise SelectorError(
                        f'unable to parse requirement: values[0][{key}]: Invalid value: "{value}": '
                        f"{problem}"
                    )
        if peek() == ",":
            i += 1
            if peek() is None:
                raise fail(None, "identifier")
        elif peek() is not None:
            raise fail(peek(), "','")
    return reqs


def labels_match(reqs: list[Requirement], labels: Mapping[str, str] | None) -> bool:
    labels = labels or {}
    for key, op, values in reqs:
        has = key in labels
        value = labels.get(key)
        if op == "exists" and not has:
            return False
        if op == "!" and has:
            return False
        if op in ("=", "in") and (not has or value not in values):
            return False
        if op in ("!=", "notin") and has and value in values:
            return False
        if op in "<>" and len(op) == 1:
            try:
                number = int(value or "")
            except ValueError:
                return False
            if (op == "<" and not number < int(values[0])) or (
                op == ">" and not number > int(values[0])
            ):
                return False
    return True


# Field selectors -------------------------------------------------------------

FieldReq = tuple[str, bool, str]  # field, equal?, value

_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
FIELDS: dict[str, tuple[str, ...]] = {
    "pytorchjobs": _COMMON_FIELDS,
    "persistentvolumeclaims": _COMMON_FIELDS,
    "services": _COMMON_FIELDS,
    "pods": (
        *_COMMON_FIELDS,
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "events": (
        *_COMMON_FIELDS,
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
}


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, escaped = [], [], False
    for ch in text:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            cur.append(ch)
            escaped = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_fields(text: str, resource: str) -> list[FieldReq]:
    reqs: list[FieldReq] = []
    if not text.strip():
        return reqs
    for term in _split_unescaped(text, ","):
        for op in ("!=", "==", "="):
            if op in term:
                field, value = term.split(op, 1)
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field = field.strip()
        if field not in FIELDS.get(resource, _COMMON_FIELDS):
            raise SelectorError(f"field label not supported: {field}")
        reqs.append((field, op != "!=", re.sub(r"\\(.)", r"\1", value)))
    return reqs


def _field_value(obj: Mapping[str, Any], field: str) -> str:
    if field == "source":
        return str((obj.get("source") or {}).get("component") or "")
    cur: Any = obj
    for part in field.split("."):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
    if isinstance(cur, bool):
        return str(cur).lower()
    return "" if cur is None else str(cur)


def fields_match(reqs: list[FieldReq], obj: Mapping[str, Any]) -> bool:
    return all((_field_value(obj, f) == v) == eq for f, eq, v in reqs)


def matcher(label_text: str, field_text: str, resource: str) -> Callable[[Mapping[str, Any]], bool]:
    """One predicate for both selectors; raises ``SelectorError`` for a bad one."""
    labels = parse_labels(label_text)
    fields = parse_fields(field_text, resource)

    def match(obj: Mapping[str, Any]) -> bool:
        return labels_match(labels, (obj.get("metadata") or {}).get("labels")) and fields_match(
            fields, obj
        )

    return match
