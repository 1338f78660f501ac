"""Hypothesis strategies for valid job bodies (the wire form of JobSpec)."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

from jupyter_pytorchjob.job.spec import CLEAN_POD_POLICIES, RESTART_POLICIES, max_name_length

LOWER = string.ascii_lowercase
ALNUM = LOWER + string.digits


def dns1035(max_len: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda first, middle, last: (first + middle + last)[:max_len].rstrip("-"),
        st.sampled_from(LOWER),
        st.text(ALNUM + "-", max_size=max_len),
        st.sampled_from(ALNUM),
    ).filter(lambda s: 1 <= len(s) <= max_len)


def dns1123_label(max_len: int = 20) -> st.SearchStrategy[str]:
    return st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?\Z").filter(
        lambda s: len(s) <= max_len
    )


claims = st.one_of(
    dns1123_label(), st.builds(lambda a, b: f"{a}.{b}", dns1123_label(), dns1123_label())
)
label_keys = st.one_of(
    st.from_regex(r"\A[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,10}[a-zA-Z0-9])?\Z"),
    st.builds(
        lambda p, n: f"{p}.example.com/{n}",
        dns1123_label(),
        st.from_regex(r"\A[a-z0-9]([-a-z0-9_.]{0,8}[a-z0-9])?\Z"),
    ),
).filter(lambda k: not k.startswith("kueue.x-k8s.io/"))
label_values = st.from_regex(r"\A(([A-Za-z0-9][-A-Za-z0-9_.]{0,10})?[A-Za-z0-9])?\Z")
env_names = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z").filter(
    lambda n: (
        n not in {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PYTHONUNBUFFERED"}
        and not n.startswith(("PET_", "PTJOB_"))
    )
)
path_parts = st.from_regex(r"\A[a-z0-9_][a-z0-9_.-]{0,8}\Z").filter(lambda p: p not in (".", ".."))
abs_paths = st.lists(path_parts, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p))
quantities_mem = st.sampled_from(["512Mi", "8Gi", "1G", "1.5Gi", "100M", "64Mi", "2Ti", "1e9"])
quantities_cpu = st.sampled_from(["1", "500m", "4", "0.5", "16", "250m"])
free_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)


@st.composite
def pvc_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    mounts = draw(st.lists(abs_paths, max_size=4, unique=True))
    mounts = [m for m in mounts if not m.startswith("/dev/shm")]
    # Mount paths must be unique after normalisation; the strategy's are normal already.
    return [
        {
            "claim": draw(claims),
            "mountPath": m,
            "subPath": draw(st.one_of(st.just(""), path_parts)),
            "readOnly": draw(st.booleans()),
        }
        for m in mounts
    ]


@st.composite
def tolerations(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(["Equal", "Exists"]))
    effect = draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]))
    t: dict[str, Any] = {
        "key": draw(label_keys),
        "operator": operator,
        "value": draw(label_values) if operator == "Equal" else "",
        "effect": effect,
    }
    if effect == "NoExecute" and draw(st.booleans()):
        t["tolerationSeconds"] = draw(st.integers(0, 3600))
    return t


@st.composite
def job_bodies(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(st.integers(1, 130))
    gpus = draw(st.integers(0, 8))
    body: dict[str, Any] = {
        "name": draw(dns1035(max_name_length(nodes))),
        "image": draw(
            st.sampled_from(
                ["pytorch/pytorch:2.13.0", "registry.local:5000/a/b@sha256:" + "a" * 64]
            )
        ),
        "nodes": nodes,
        "gpus": gpus,
        "pvc": draw(pvc_lists()),
        "env": draw(st.dictionaries(env_names, free_text, max_size=4)),
        "labels": draw(st.dictionaries(label_keys, label_values, max_size=3)),
        "annotations": draw(st.dictionaries(label_keys, free_text, max_size=3)),
        "nodeSelector": draw(st.dictionaries(label_keys, label_values, max_size=2)),
        "tolerations": draw(st.lists(tolerations(), max_size=3)),
        "restartPolicy": draw(st.sampled_from(RESTART_POLICIES)),
        "cleanPodPolicy": draw(st.sampled_from(CLEAN_POD_POLICIES)),
    }
    optional = {
        "cpu": quantities_cpu,
        "memory": quantities_mem,
        "shm": st.one_of(quantities_mem, st.just("off")),
        "nprocPerNode": st.integers(1, 8),
        "gpuResource": st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]),
        "backoffLimit": st.one_of(st.none(), st.integers(0, 100)),
        "deadline": st.integers(1, 10**7),
        "ttl": st.integers(0, 10**6),
        "queue": st.from_regex(r"\A[a-z]([-a-z0-9]{0,10}[a-z0-9])?\Z"),
        "logdir": abs_paths,
        "workdir": abs_paths,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            body[key] = draw(strategy)
    if draw(st.booleans()):
        body["script"] = draw(st.text(min_size=1, max_size=200).filter(str.strip))
        body["args"] = draw(st.lists(free_text, max_size=3))
    else:
        first = draw(st.text(min_size=1, max_size=20).filter(str.strip))
        body["command"] = [first, *draw(st.lists(st.text(max_size=20), max_size=4))]
    return body
