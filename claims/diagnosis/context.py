"""What every rule receives: the state, the moment, the thresholds, and shared derived facts.

Pure: no Django. Derived facts (allocated devices, feasibility of pending claims) are computed
once per diagnosis and shared, so rule families agree on them (e.g. the driver rules claim the
pending claims that the pending rules must then not call ``no_matching_device``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from claims.diagnosis.feasibility import ClaimFeasibility, DeviceKey, allocated_devices, assess_claim
from claims.diagnosis.findings import Finding
from claims.diagnosis.scope import Scope, event_in
from claims.diagnosis.state import ClusterState
from claims.diagnosis.thresholds import Thresholds
from inventory.dcgm import DcgmSample, TelemetryJoin, join_samples, parse_scrape
from inventory.kube import ObjectRef, parse_time
from inventory.records import Device, Event, Node, Pod, ResourceClaim


def claim_ref(c: ResourceClaim) -> ObjectRef:
    return ObjectRef("ResourceClaim", c.namespace, c.name)


def pod_ref(p: Pod) -> ObjectRef:
    return ObjectRef("Pod", p.namespace, p.name)


def node_ref(name: str) -> ObjectRef:
    return ObjectRef("Node", None, name)


def slice_ref(name: str) -> ObjectRef:
    return ObjectRef("ResourceSlice", None, name)


def earliest(times: Iterable[str | None]) -> str | None:
    parsed = [(parse_time(t), t) for t in times if t]
    parsed = [(d, t) for d, t in parsed if d is not None]
    return min(parsed)[1] if parsed else None


def minutes(seconds: float) -> str:
    m = int(seconds // 60)
    if m < 120:
        return f"{m} min"
    return f"{m // 60} h {m % 60} min"


@dataclass
class Context:
    """Inputs of one diagnosis run plus lazily computed shared facts."""

    state: ClusterState
    now: datetime
    thresholds: Thresholds
    _used: dict[DeviceKey, list[ResourceClaim]] | None = None
    _feasibility: dict[tuple[str, str], ClaimFeasibility] = field(default_factory=dict)
    _feasibility_memo: dict[Any, Any] = field(default_factory=dict)
    _class_slices: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    # Per-run memo of derived evidence shared by many findings (claims of one request shape
    # share their feasibility and its evidence): key -> value, e.g. nodes ranked by free devices.
    memo: dict[Any, Any] = field(default_factory=dict)
    # Findings the rules before the current one reported (the engine appends them), so the
    # last rule can tell which pending claims nothing explained.
    reported: list[Finding] = field(default_factory=list)
    # Rules that raised so far (``engine.AnalysisFailure``): what they could have said is missing.
    failed: list[Any] = field(default_factory=list)
    _telemetry: tuple[Any, Any] | None = None
    # The subjects the current rule looks at (``claims.diagnosis.scope``): None, the whole
    # cluster. The engine sets it per rule; lookups always see the whole state.
    scope: Scope | None = None
    _scoped: dict[str, list[Any]] = field(default_factory=dict)

    def _keyed(self, what: str, everything: Iterable[Any], keys: Any) -> Iterable[Any]:
        if self.scope is None:
            return everything
        if what not in self._scoped:  # once per diagnosis, in the state's order
            self._scoped[what] = self.state.in_order(what, keys)
        return self._scoped[what]

    def each_claim(self) -> Iterable[ResourceClaim]:
        """The claims a rule reports on: every claim, or those of the scope."""
        return self._keyed("claims", self.state.claims.values(), self.scope and self.scope.claims)

    def each_pod(self) -> Iterable[Pod]:
        return self._keyed("pods", self.state.pods.values(), self.scope and self.scope.pods)

    def each_node(self) -> Iterable[Node]:
        return self._keyed("nodes", self.state.nodes.values(), self.scope and self.scope.nodes)

    def each_event(self) -> Iterable[Event]:
        sc = self.scope
        if sc is None:
            return self.state.events
        if "events" not in self._scoped:
            about = [*(("ResourceClaim", n) for _, n in sc.claims), *(("Pod", n) for _, n in sc.pods),
                     *(("Node", n) for n in sc.nodes)]
            self._scoped["events"] = [e for e in self.state.events_about(about) if event_in(sc, e)]
        return self._scoped["events"]

    def each_device(self) -> Iterable[Device]:
        """Devices of the scope's nodes (and those on no node: a scope cannot place them)."""
        sc = self.scope
        if sc is None:
            return self.state.devices.values()
        if "devices" not in self._scoped:  # by slice: the scope's are few, the devices many
            devices = self.state.devices
            self._scoped["devices"] = list({
                d.key: devices[d.key] for s in self.state.slices_of_nodes(sc.nodes)
                for d in s.devices if d.key in devices and (not d.node_name or d.node_name in sc.nodes)
            }.values())
        return self._scoped["devices"]

    def telemetry(self) -> tuple[list[DcgmSample], TelemetryJoin]:
        """The DCGM samples of every scrape in ``state.prom`` and their join to the slice
        devices, parsed once per diagnosis for all telemetry rules (``inventory.dcgm``; a
        malformed line is skipped, the rest of its file kept)."""
        if self._telemetry is None:
            samples: list[DcgmSample] = []
            for text in self.state.prom.values():
                samples.extend(parse_scrape(text).samples)
            self._telemetry = (samples, join_samples(samples, self.state.devices.values()))
        return self._telemetry

    def age(self, since: str | None) -> float | None:
        """Seconds from ``since`` to ``now``; None when unknown."""
        dt = parse_time(since)
        return None if dt is None else (self.now - dt).total_seconds()

    def older_than(self, since: str | None, seconds: int) -> bool:
        """Unknown start counts as old enough: the structural evidence stands on its own."""
        a = self.age(since)
        return a is None or a >= seconds

    @property
    def used(self) -> dict[DeviceKey, list[ResourceClaim]]:
        if self._used is None:
            self._used = allocated_devices(self.state)
        return self._used

    def feasibility(self, claim: ResourceClaim) -> ClaimFeasibility:
        key = (claim.namespace, claim.name)
        if key not in self._feasibility:
            self._feasibility[key] = assess_claim(self.state, claim, self.used, self._feasibility_memo)
        return self._feasibility[key]

    def slices_with_class_devices(self, classes: tuple[str, ...], matches: Any) -> list[str]:
        """Names of the slices publishing a device that one of the DeviceClasses ``classes``
        selects (``matches(class, device)``), once per set of classes and run: many claims
        stuck on the same classes would each evaluate every device's selectors again."""
        if classes not in self._class_slices:
            self._class_slices[classes] = sorted(
                {d.slice_name for d in self.state.devices.values() if any(matches(c, d) for c in classes)}
            )
        return self._class_slices[classes]

    def pending_consumers(self, claim: ResourceClaim) -> list[Pod]:
        """Live, unbound pods waiting for this unallocated claim."""
        return [
            p
            for p in self.state.pods_using_claim(claim)
            if not p.terminal and not p.deletion_timestamp and not p.node_name
        ]

    def pending_claims(self) -> list[tuple[ResourceClaim, list[Pod]]]:
        """Unallocated, not-deleting claims that an unbound live pod waits for."""
        out = []
        for c in self.each_claim():
            if c.allocated or c.deletion_timestamp:
                continue
            pods = self.pending_consumers(c)
            if pods:
                out.append((c, pods))
        return out

    def pending_since(self, claim: ResourceClaim | None, pods: list[Pod]) -> str | None:
        """Start of the wait: claim/pod creation, first scheduling failure, PodScheduled=False."""
        times: list[str | None] = [claim.created if claim else None]
        for p in pods:
            times.append(p.created)
            cond = p.condition("PodScheduled")
            if cond and cond.status == "False":
                times.append(cond.last_transition_time)
            for e in self.state.events_for("Pod", p.namespace, p.name):
                if e.reason in ("FailedScheduling", "FailedResourceClaimCreation"):
                    times.append(e.first)
        return earliest(times)

    def template_ref_for(self, claim: ResourceClaim, pods: list[Pod]) -> ObjectRef | None:
        for p in pods:
            for ref, name in self.state.pod_claim_names(p):
                if name == claim.name and ref.template_name:
                    return ObjectRef("ResourceClaimTemplate", p.namespace, ref.template_name)
        return None

    def scheduling_messages(self, pods: list[Pod]) -> list[dict[str, Any]]:
        out = []
        for p in pods:
            for e in self.state.events_for("Pod", p.namespace, p.name):
                if e.reason == "FailedScheduling":
                    out.append({"pod": p.name, "message": e.message, "count": e.count, "last": e.last})
        return out
