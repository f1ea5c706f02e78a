"""Which part of a cluster one change can move: the subjects a diagnosis must look at again.

Pure: no Django. A sync that changed a few claims, pods or Events need not diagnose the whole
cluster again: a finding is about its subjects (a claim, a pod, a node and what runs on it),
and a change reaches only the subjects related to what changed. ``change_scope`` answers
which ones, or None when the change can reach anything (a DeviceClass, a slice, a node, a
kubelet-plugin or control-plane pod, an Event about another kind), and the whole cluster is
diagnosed again.

The scope is closed over the relations the rules read: a claim brings its pods and the nodes
of its devices; a pod its claims and its node; a node every pod on it, every claim holding one
of its devices and its slices. So every finding whose main object is in the scope is made
again from subjects in the scope, and no finding outside it can have changed. A change to
what is allocated moves what every pending claim could get: then all of them are in the
scope (a pending claim's capacity verdict reads the whole cluster's free devices, which the
full state still gives).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

import msgspec

from inventory.kube import ObjectRef
from inventory.records import Event, KubeRecord, Pod, ResourceClaim

from .state import ClusterState

Key = tuple[str, str]  # (namespace, name)
# Kinds whose changes a scoped diagnosis follows; any other kind changed: the whole cluster.
SCOPED_KINDS = frozenset({"ResourceClaim", "Pod", "Event"})
# Event subjects the scope can place; an Event about anything else: the whole cluster.
_EVENT_SUBJECTS = frozenset({"Pod", "ResourceClaim", "Node"})


@dataclass(frozen=True)
class Scope:
    """Subjects to diagnose again: claims and pods by (namespace, name), nodes by name, and
    the slices published on those nodes. ``refs`` are the main objects whose findings the
    diagnosis of this scope replaces."""

    claims: frozenset[Key]
    pods: frozenset[Key]
    nodes: frozenset[str]
    slices: frozenset[str]

    @cached_property
    def refs(self) -> frozenset[ObjectRef]:
        return frozenset([
            *(ObjectRef("ResourceClaim", ns, n) for ns, n in self.claims),
            *(ObjectRef("Pod", ns, n) for ns, n in self.pods),
            *(ObjectRef("Node", None, n) for n in self.nodes),
            *(ObjectRef("ResourceSlice", None, n) for n in self.slices),
        ])

    def covers(self, ref: ObjectRef) -> bool:
        return ObjectRef(ref.kind, ref.namespace or None, ref.name) in self.refs


def _key(r: KubeRecord) -> Key:
    return (r.namespace or "", r.name)


def _event_subject(e: Event) -> tuple[str, Key] | None:
    if e.involved_kind not in _EVENT_SUBJECTS or not e.involved_name:
        return None
    ns = "" if e.involved_kind == "Node" else (e.involved_namespace or e.namespace or "")
    return e.involved_kind, (ns, e.involved_name)


def event_in(scope: Scope, e: Event) -> bool:
    """Is the Event about a subject of ``scope``?"""
    subject = _event_subject(e)
    if subject is None:
        return False
    kind, key = subject
    if kind == "Pod":
        return key in scope.pods
    if kind == "ResourceClaim":
        return key in scope.claims
    return key[1] in scope.nodes


def _allocation(c: ResourceClaim | None) -> object:
    return None if c is None else (c.allocated, c.results)


def close(state: ClusterState, claims: Iterable[Key] = (), pods: Iterable[Key] = (),
          nodes: Iterable[str] = (), old: Iterable[KubeRecord] = ()) -> Scope:
    """The smallest scope holding the given subjects and closed over the relations (module
    docstring). ``old``: records as they were before the change (their nodes and claims are
    subjects too: a claim moved off a node changes that node's findings)."""
    want_claims, want_pods, want_nodes = set(claims), set(pods), set(nodes)

    def relate(r: KubeRecord) -> None:  # what a claim or pod brings into the scope
        if isinstance(r, ResourceClaim):
            want_nodes.update(state.claim_nodes(r))
            want_pods.update(_key(p) for p in state.pods_using_claim(r))
            by_uid = state.pods_by_uid()
            want_pods.update(_key(by_uid[x.uid]) for x in r.reserved_for if x.uid in by_uid)
        elif isinstance(r, Pod):
            if r.node_name:
                want_nodes.add(r.node_name)
            want_claims.update((r.namespace or "", n) for _, n in state.pod_claim_names(r) if n)

    for r in old:
        (want_claims if isinstance(r, ResourceClaim) else want_pods).add(_key(r))
        relate(r)
    done_c: set[Key] = set()
    done_p: set[Key] = set()
    done_n: set[str] = set()
    while True:
        new_c, new_p, new_n = want_claims - done_c, want_pods - done_p, want_nodes - done_n
        if not (new_c or new_p or new_n):
            break
        done_c |= new_c
        done_p |= new_p
        done_n |= new_n
        for r in [*(state.claims.get(k) for k in new_c), *(state.pods.get(k) for k in new_p)]:
            if r is not None:
                relate(r)
        for n in new_n:
            want_pods.update(state.pods_by_node.get(n, ()))
            want_claims.update(state.claims_by_node.get(n, ()))
    slices = frozenset(s.name for n in done_n for s in state.slices_on_node(n))
    return Scope(frozenset(done_c), frozenset(done_p), frozenset(done_n), slices)


def moved(before: KubeRecord | None, after: KubeRecord | None) -> bool:
    """Did the change move anything a rule reads? An object written again with nothing its
    record keeps changed (an annotation, a managed-fields entry: a new ``resourceVersion``
    alone) moves no finding. Compared as encoded, not with ``==``: ``True == 1`` there, but a
    CEL selector tells a bool attribute from an int one."""
    if before is None or after is None or type(before) is not type(after):
        return True
    return _ENCODE(replace(before, resource_version=after.resource_version)) != _ENCODE(after)


_ENCODE = msgspec.msgpack.Encoder().encode


def change_scope(state: ClusterState, changed: Iterable[tuple[KubeRecord | None, KubeRecord | None]]) -> Scope | None:
    """The scope of a change: (record before, record after) per object created (None before),
    updated or deleted (None after), against ``state``, the cluster after the change. None
    when the change can reach the whole cluster (module docstring)."""
    claims: set[Key] = set()
    pods: set[Key] = set()
    nodes: set[str] = set()
    old: list[KubeRecord] = []
    allocation_moved = False
    claim_names_born: set[str] = set()
    for before, after in changed:
        for r in (before, after):
            if r is None:
                continue
            if r.kind not in SCOPED_KINDS:
                return None
            if isinstance(r, Pod) and state.pod_reaches_everything(r):
                return None
            if isinstance(r, Event):
                subject = _event_subject(r)
                if subject is None:
                    return None
                kind, key = subject
                (pods if kind == "Pod" else claims if kind == "ResourceClaim" else nodes).add(
                    key if kind != "Node" else key[1])  # type: ignore[arg-type]
        if before is not None and not isinstance(before, Event):
            old.append(before)
        if after is not None and not isinstance(after, Event):
            (claims if isinstance(after, ResourceClaim) else pods).add(_key(after))
        if isinstance(before or after, ResourceClaim):
            if _allocation(before) != _allocation(after):  # type: ignore[arg-type]
                allocation_moved = True
            if (before is None) != (after is None):
                claim_names_born.add((before or after).name)  # type: ignore[union-attr]
    if allocation_moved:
        claims.update(k for k, c in state.claims.items() if not c.allocated)
    if claim_names_born:
        # A claim created or gone by this name: pods elsewhere naming it (claim_not_found
        # lists the namespaces that have one) see it too.
        pods.update(k for k, p in state.pods.items()
                    if any(ref.claim_name in claim_names_born for ref in p.resource_claims))
    return close(state, claims, pods, nodes, old)

