"""The API server's discovery: ``/version``, ``/api``, ``/api/v1``, ``/apis`` and each
group version's resource list, for the resources in ``api.RESOURCES`` and the CRDs
installed (``shared/notes/fake-kube.md``; k8s.io/apimachinery ``APIResourceList``,
``APIGroupList``, ``APIVersions``). Used by ``server.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from .api import CRD_GROUPS, RESOURCES, STATUS_SUBRESOURCE, PageNotFound

# ``/version`` (system:public-info-viewer: anyone may read it).
VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-fake",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T00:00:00Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def discovery(path: str, served_groups: Set[str], address: str) -> dict[str, Any] | None:
    """The discovery document at ``path`` (None: not a discovery path); the groups of
    CRDs not installed are left out, their own paths answer 404 page not found."""

    def resources(group_version: str, names: Iterable[str]) -> dict[str, Any]:
        items = []
        for plural in names:
            res = RESOURCES[plural]
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            items.append({"name": plural, "singularName": res.kind.lower(),
                          "namespaced": res.namespaced, "kind": res.kind,
                          "verbs": verbs})  # fmt: skip
            if plural in STATUS_SUBRESOURCE and plural != "pytorchjobs":
                items.append({"name": f"{plural}/status", "singularName": "",
                              "namespaced": True, "kind": res.kind,
                              "verbs": ["get", "patch", "update"]})  # fmt: skip
            if plural == "pods":
                items.append({"name": "pods/log", "singularName": "", "namespaced": True,
                              "kind": "Pod", "verbs": ["get"]})  # fmt: skip
            if plural == "pytorchjobs":
                items.append({"name": "pytorchjobs/status", "singularName": "",
                              "namespaced": True, "kind": "PyTorchJob",
                              "verbs": ["get", "patch", "update"]})  # fmt: skip
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": items}  # fmt: skip

    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0",
             "serverAddress": address}]}  # fmt: skip
    if path == "/api/v1":
        return resources(
            "v1",
            [
                "pods",
                "services",
                "persistentvolumeclaims",
                "events",
                "configmaps",
                "namespaces",
            ],
        )
    by_group: dict[str, tuple[str, list[str]]] = {}
    for plural, res in RESOURCES.items():
        if res.group:
            by_group.setdefault(res.group, (res.version, []))[1].append(plural)
    if path == "/apis":
        groups = []
        for group, (version_name, _) in by_group.items():
            if group in CRD_GROUPS and group not in served_groups:
                continue
            version = {"groupVersion": f"{group}/{version_name}", "version": version_name}
            groups.append({"name": group, "versions": [version], "preferredVersion": version})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    for group, (version_name, plurals) in by_group.items():
        if path in (f"/apis/{group}", f"/apis/{group}/{version_name}"):
            if group in CRD_GROUPS and group not in served_groups:
                raise PageNotFound
            if path == f"/apis/{group}/{version_name}":
                return resources(f"{group}/{version_name}", plurals)
    return None
