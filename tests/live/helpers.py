"""What the live tests compare: every stored object by kind and uid with its resourceVersion."""

from __future__ import annotations

import copy

from inventory.models import KubeObject, Node, Pod, ResourceClaim, ResourceSlice

TYPED = (Node, ResourceSlice, ResourceClaim, Pod)


def stored(cluster) -> dict[tuple[str, str], str]:
    """(kind, uid) -> resourceVersion of every object stored for ``cluster``."""
    out = {}
    for model in TYPED:
        for uid, rv in model.objects.filter(cluster=cluster).values_list("uid", "resource_version"):
            out[(model.__name__, uid)] = rv
    for kind, uid, rv in KubeObject.objects.filter(cluster=cluster).values_list("kind", "uid", "resource_version"):
        out[(kind, uid)] = rv
    return out


def changed_counts(run) -> dict[str, dict[str, int]]:
    """kind -> {created, updated, deleted} of a run, kinds with no change left out."""
    out = {}
    for kind, c in run.counts.items():
        if kind == "skipped" or not isinstance(c, dict):
            continue
        moved = {k: c.get(k, 0) for k in ("created", "updated", "deleted") if c.get(k)}
        if moved:
            out[kind] = moved
    return out


def a_claim(fake, state_has="reservedFor"):
    """A served claim (with kind) whose status has ``state_has``."""
    path = "/apis/resource.k8s.io/v1/resourceclaims"
    item = next(i for i in fake.lists[path] if (i.get("status") or {}).get(state_has))
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1", **copy.deepcopy(item)}


def served(fake, kind: str, path: str, pick=lambda item: True):
    item = next(i for i in fake.lists[path] if pick(i))
    api = "v1" if path.startswith("/api/") else "/".join(path.split("/")[2:4])
    return {"kind": kind, "apiVersion": api, **copy.deepcopy(item)}
