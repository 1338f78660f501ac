"""Our routes as the running server has them: (path, verb, handler) for each verb one
of our handler classes implements, with sample values in the path's groups."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tornado.routing import PathMatches, Rule
from tornado.web import RequestHandler

VERBS = ("get", "post", "put", "patch", "delete", "head", "options")
# Values for the path groups: names that could exist, so that a missing check shows
# as a 404 or a 200 rather than as a refusal.
SAMPLES = {"name": "demo", "tb_id": "0123456789ab", "proxied_path": "/data/environment"}


def our_rules(router: Any) -> Iterator[Rule]:
    """Every rule of the application (nested routers included) that one of our
    handlers serves."""
    for rule in getattr(router, "rules", []):
        target = rule.target
        if hasattr(target, "rules"):
            yield from our_rules(target)
        elif isinstance(target, type) and target.__module__.startswith("jupyter_pytorchjob."):
            yield rule


def concrete_path(pattern: str, base_url: str, values: Mapping[str, str] = SAMPLES) -> str:
    """``/base/pytorchjob/api/jobs/(?P<name>[^/]+)$`` -> ``pytorchjob/api/jobs/demo``."""
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values[m.group(1)], pattern)
    path = path.rstrip("$")
    assert path.startswith(base_url), (pattern, base_url)
    return path[len(base_url) :]


def routes(
    app: Any, base_url: str, values: Mapping[str, str] = SAMPLES
) -> list[tuple[str, str, type[RequestHandler]]]:
    """(path, VERB, handler) of our routes, the path's groups filled from ``values``."""
    found = []
    for rule in list(our_rules(app.default_router)) + list(our_rules(app.wildcard_router)):
        assert isinstance(rule.matcher, PathMatches)
        path = concrete_path(rule.matcher.regex.pattern, base_url, values)
        handler = rule.target
        ours = [k for k in handler.__mro__ if k.__module__.startswith("jupyter_pytorchjob.")]
        for verb in VERBS:
            # Verbs jupyter_server's base classes answer (OPTIONS: CORS preflight,
            # no data) are theirs to guard.
            if any(verb in klass.__dict__ for klass in ours):
                found.append((path, verb.upper(), handler))
    return found
