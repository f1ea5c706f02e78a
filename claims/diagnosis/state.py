"""ClusterState: a frozen, typed snapshot of everything the diagnosis reads.

Pure: no Django. Built once from parsed records (``inventory.records``: ``from_records``) or
from raw Kubernetes objects of any kinds and served versions, as ``kubectl get -o yaml`` prints
them or the live source lists them (``from_objects`` parses them through the same layer), plus
optional DCGM scrapes; every rule reads this object and nothing else. Kinds the diagnosis does
not use are ignored.

What it derives from the records: control-plane components, from static pods in
``kube-system`` (``component`` label or name prefix), with ``--feature-gates`` and the image
tag as version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inventory import capacity
from inventory import records as rec
from inventory.kube import CONTROL_PLANE_COMPONENTS, GPU_DRIVER, Version, feature_gates, parse_time, parse_version
from inventory.records import (
    ClusterRole,
    ConfigMap,
    DaemonSet,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceTaintRule,
    Event,
    Node,
    Pod,
    PodClaimRef,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

__all__ = ["ClusterState", "ComponentInfo", "parse_time"]  # parse_time: callers import it from here too


def _by_name(obj: Any) -> tuple[str, str]:
    return (obj.namespace or "", obj.name)


@dataclass(frozen=True)
class ComponentInfo:
    """A control-plane component seen as a static pod: version and ``--feature-gates``."""

    component: str
    pod_namespace: str
    pod_name: str
    version: Version | None
    feature_gates: Mapping[str, bool]


@dataclass(frozen=True)
class ClusterState:
    """Everything a diagnosis reads; build it with ``from_records`` or ``from_objects``.

    Keys: nodes, DeviceClasses, taint rules and ClusterRoles by name; claims, templates, pods
    and ConfigMaps by (namespace, name); devices by (driver, pool, name).
    """

    nodes: Mapping[str, Node]
    device_classes: Mapping[str, DeviceClass]
    slices: tuple[ResourceSlice, ...]
    devices: Mapping[tuple[str, str, str], Device]
    claims: Mapping[tuple[str, str], ResourceClaim]
    templates: Mapping[tuple[str, str], ResourceClaimTemplate]
    pods: Mapping[tuple[str, str], Pod]
    events: tuple[Event, ...]
    daemonsets: tuple[DaemonSet, ...]
    taint_rules: tuple[DeviceTaintRule, ...]
    components: Mapping[str, ComponentInfo]
    cluster_roles: Mapping[str, ClusterRole]
    config_maps: Mapping[tuple[str, str], ConfigMap]
    prom: Mapping[str, str]
    kinds_seen: frozenset[str]
    errors: tuple[str, ...] = field(default=())

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def from_records(
        cls, records: Iterable[rec.KubeRecord], prom: Mapping[str, str] | None = None, errors: Iterable[str] = ()
    ) -> ClusterState:
        """Build the snapshot from parsed records (any kinds; those the diagnosis does not read
        are ignored). ``errors``: problems met while parsing, kept in ``errors``."""
        nodes: dict[str, Node] = {}
        classes: dict[str, DeviceClass] = {}
        slices: list[ResourceSlice] = []
        claims: dict[tuple[str, str], ResourceClaim] = {}
        templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
        pods: dict[tuple[str, str], Pod] = {}
        events: list[Event] = []
        daemonsets: list[DaemonSet] = []
        taint_rules: list[DeviceTaintRule] = []
        components: dict[str, ComponentInfo] = {}
        roles: dict[str, ClusterRole] = {}
        cms: dict[tuple[str, str], ConfigMap] = {}
        kinds: set[str] = set()
        for r in records:
            kinds.add(r.kind)
            # The many first (pods, claims, Events): each record meets fewer checks.
            if isinstance(r, Pod):
                key = (r.namespace or "", r.name)
                if key not in pods or _held_over(pods[key], r):
                    pods[key] = r
                if r.namespace == "kube-system":
                    comp = _component(r)
                    if comp is not None:
                        components[comp.component] = comp
            elif isinstance(r, ResourceClaim):
                key = (r.namespace, r.name)
                if key not in claims or _held_over(claims[key], r):
                    claims[key] = r
            elif isinstance(r, Event):
                events.append(r)
            elif isinstance(r, Node):
                nodes[r.name] = r
            elif isinstance(r, ResourceSlice):
                slices.append(r)
            elif isinstance(r, DeviceClass):
                classes[r.name] = r
            elif isinstance(r, ResourceClaimTemplate):
                templates[(r.namespace or "", r.name)] = r
            elif isinstance(r, DaemonSet):
                daemonsets.append(r)
            elif isinstance(r, DeviceTaintRule):
                taint_rules.append(r)
            elif isinstance(r, ClusterRole):
                roles[r.name] = r
            elif isinstance(r, ConfigMap):
                cms[(r.namespace or "", r.name)] = r
        # Device.key, without 160,000 calls; only a pool's newest generation publishes (as the
        # scheduler reads it): a device an older slice alone lists is no device to allocate.
        devices = {(d.driver, d.pool, d.name): d for s in capacity.newest_slices(slices) for d in s.devices}
        return cls(
            nodes=nodes,
            device_classes=classes,
            slices=tuple(slices),
            devices=devices,
            claims=claims,
            templates=templates,
            pods=pods,
            events=tuple(events),
            daemonsets=tuple(daemonsets),
            taint_rules=tuple(taint_rules),
            components=components,
            cluster_roles=roles,
            config_maps=cms,
            prom=dict(prom or {}),
            kinds_seen=frozenset(kinds),
            errors=tuple(errors),
        )

    @classmethod
    def from_objects(cls, objects: Iterable[Any], prom: Mapping[str, str] | None = None) -> ClusterState:
        """Parse raw objects (``inventory.records.parse_object``; records pass through) and
        build the snapshot. Raises ``inventory.normalize.UnknownAPIVersion`` for a DRA object
        of an unknown ``resource.k8s.io`` version; malformed single objects are skipped and
        listed in ``errors``."""
        errors: list[str] = []
        records = list(rec.as_records(objects, errors))
        return cls.from_records(records, prom, errors)

# ---- lookups ------------------------------------------------------------------------

    def pods_by_uid(self) -> dict[str, Pod]:
        """uid -> pod (built once per state; do not change it)."""
        return self._pods_by_uid

    @cached_property
    def _pods_by_uid(self) -> dict[str, Pod]:
        return {p.uid: p for p in self.pods.values() if p.uid}

    def claims_reserving(self, uid: str) -> list[ResourceClaim]:
        """The claims whose ``status.reservedFor`` names the consumer ``uid``, by namespace and
        name: a patched state holds its claims in another order than a fresh one."""
        return sorted(self._claims_by_reserved.get(uid, ()), key=_by_name) if uid else []

    @cached_property
    def _claims_by_reserved(self) -> dict[str, list[ResourceClaim]]:
        out: dict[str, list[ResourceClaim]] = {}
        for c in self.claims.values():
            for r in dict.fromkeys(r.uid for r in c.reserved_for if r.uid):
                out.setdefault(r, []).append(c)
        return out

    @cached_property
    def devices_by_uuid(self) -> dict[tuple[str, str | None, str], Device]:
        """(driver, node, uuid) -> device, for the devices that publish a uuid."""
        return devices_by_uuid(self.devices.values())

    @cached_property
    def pods_by_node(self) -> dict[str, set[tuple[str, str]]]:
        """node name -> (namespace, name) of the pods bound to it."""
        out: dict[str, set[tuple[str, str]]] = {}
        for key, p in self.pods.items():
            if p.node_name:
                out.setdefault(p.node_name, set()).add(key)
        return out

    @cached_property
    def claims_by_node(self) -> dict[str, set[tuple[str, str]]]:
        """node name -> (namespace, name) of the claims allocated there (``claim_nodes``)."""
        out: dict[str, set[tuple[str, str]]] = {}
        for key, c in self.claims.items():
            if not c.results and not c.allocation_nodes:  # pending: on no node
                continue
            for n in self.claim_nodes(c):
                out.setdefault(n, set()).add(key)
        return out

    def claim_nodes(self, c: ResourceClaim) -> set[str]:
        """Nodes a claim's allocation is on: its devices' nodes and ``allocation.nodeSelector``'s."""
        out = set(c.allocation_nodes)
        for r in c.results:
            d = self.devices.get(r.device_key)
            if d is not None and d.node_name:
                out.add(d.node_name)
        return out

    def pod_reaches_everything(self, p: Pod) -> bool:
        """A pod whose change a per-subject view cannot follow: a DRA kubelet plugin (whether a
        driver runs anywhere is read cluster-wide), a control-plane component (its version and
        feature gates), anything in kube-system."""
        return p.namespace == "kube-system" or self.is_kubelet_plugin(p)

    # ---- a state changed in place of one rebuilt ------------------------------------------

    def patched(self, changes: Iterable[tuple[rec.KubeRecord | None, rec.KubeRecord | None]]) -> ClusterState | None:
        """This state after ``changes`` ((record before or None, record after or None) per
        claim, pod or Event created, updated or deleted), as ``from_records`` would build it
        from the changed records (same order of objects), in time linear in the change but
        for copying the maps. The indexes the change cannot move are carried over, the
        node and uid indexes patched, the others built again on first use. None when the
        change holds another kind, a kubelet-plugin or control-plane pod, or removes the
        last object of a kind (then build the state with ``from_records``)."""
        changes = list(changes)
        claims = dict(self.claims)
        pods = dict(self.pods)
        # The Events indexed only when some changed (most changes are claims and pods).
        events_moved = any(isinstance(b or a, Event) for b, a in changes)
        events: dict[int, Event] = dict(enumerate(self.events)) if events_moved else {}
        event_at = {(e.namespace, e.name, e.uid): i for i, e in events.items()}
        nxt = len(events)
        kinds = set(self.kinds_seen)
        # Each claim's and pod's place in its map, when known (``in_order``; the pods-by-claim
        # index is patched in pod order): a new key goes last, as in the map.
        seqs = {id(m): [dict(self.__dict__[name]), self.__dict__[f"{name}_next"], name]
                for m, name in ((claims, "_claim_seq"), (pods, "_pod_seq")) if name in self.__dict__}
        pods_moved: list[tuple[Pod | None, Pod | None]] = []
        claims_moved: list[tuple[ResourceClaim | None, ResourceClaim | None]] = []
        for before, after in changes:
            for r in (before, after):
                if r is None:
                    continue
                if not isinstance(r, (ResourceClaim, Pod, Event)):
                    return None
                if isinstance(r, Pod) and self.pod_reaches_everything(r):
                    return None
            if isinstance(before or after, Event):
                if before is not None:
                    i = event_at.pop((before.namespace, before.name, before.uid), None)
                    if i is not None and after is not None and after.uid == before.uid:
                        events[i] = after  # updated in place, as the model keeps it
                        event_at[(after.namespace, after.name, after.uid)] = i
                        continue
                    if i is not None:
                        del events[i]
                if after is not None:
                    events[nxt] = after
                    event_at[(after.namespace, after.name, after.uid)] = nxt
                    nxt += 1
                continue
            target = claims if isinstance(before or after, ResourceClaim) else pods
            seq = seqs.get(id(target))
            key = (before.namespace or "", before.name) if before is not None else None
            if key is not None and (after is None or before.uid != after.uid) and target.get(key) is before:
                del target[key]  # not a namesake the same sync created
                if seq is not None:
                    del seq[0][key]
            if after is not None:
                akey = (after.namespace or "", after.name)
                if (held := target.get(akey)) is not None and held.uid != after.uid:
                    del target[akey]  # a namesake re-created: at the end, as a new uid is in the model
                if seq is not None and akey not in target:
                    seq[0][akey] = seq[1]
                    seq[1] += 1
                target[akey] = after
                kinds.add(after.kind)
            (claims_moved if target is claims else pods_moved).append((before, after))  # type: ignore[arg-type]
        if not pods or not claims or (events_moved and not events and "Event" in self.kinds_seen):
            return None
        new = ClusterState(
            nodes=self.nodes, device_classes=self.device_classes, slices=self.slices, devices=self.devices,
            claims=claims, templates=self.templates, pods=pods,
            events=tuple(events.values()) if events_moved else self.events,
            daemonsets=self.daemonsets, taint_rules=self.taint_rules, components=self.components,
            cluster_roles=self.cluster_roles, config_maps=self.config_maps, prom=self.prom,
            kinds_seen=frozenset(kinds), errors=self.errors,
        )  # fmt: skip
        for name in ("_slices_by_node", "_slice_seq", "shareable_devices", "_plugin_daemonsets", "_plugin_pods_by_node", "devices_by_uuid",
                     "_node_seq", "node_facts", "device_matches", "incomplete_pools", "superseded_devices", "invalid_pools"):
            if name in self.__dict__:  # what only slices, DaemonSets and plugin pods move
                new.__dict__[name] = self.__dict__[name]
        for name in () if events_moved else ("_events_by_object", "_event_seq"):
            if name in self.__dict__:  # the same Event objects in the same order
                new.__dict__[name] = self.__dict__[name]
        if "pods_by_node" in self.__dict__:
            new.__dict__["pods_by_node"] = _moved(self.pods_by_node, (
                (b and b.node_name and {b.node_name}, a and a.node_name and {a.node_name}, b or a) for b, a in pods_moved))
        if "claims_by_node" in self.__dict__:
            new.__dict__["claims_by_node"] = _moved(self.claims_by_node, (
                (b and self.claim_nodes(b), a and new.claim_nodes(a), b or a) for b, a in claims_moved))
        if "_pods_by_uid" in self.__dict__:
            by_uid = dict(self._pods_by_uid)
            for before, after in pods_moved:
                if before is not None and before.uid and by_uid.get(before.uid) is before:
                    del by_uid[before.uid]
                if after is not None and after.uid:
                    by_uid[after.uid] = after
            new.__dict__["_pods_by_uid"] = by_uid
        for seq, seq_next, name in seqs.values():
            new.__dict__[name], new.__dict__[f"{name}_next"] = seq, seq_next
        if "_pods_by_claim" in self.__dict__:
            self._patch_pods_by_claim(new, pods_moved, claims_moved)
        return new

    def index_for_patching(self) -> None:
        """Build now the indexes ``patched`` carries over and edits (a worker keeps this state
        for its next sync): else the first change after a full build pays for them, over every
        claim and pod of the cluster (5,000 nodes: about 0.05-0.1 s of a one-claim change)."""
        for name in ("_claims_by_owner", "_pods_by_uid", "_pods_by_claim"):
            getattr(self, name)

    def _patch_pods_by_claim(self, new: ClusterState, pods_moved: list[tuple[Any, Any]],
                             claims_moved: list[tuple[Any, Any]]) -> None:
        """``new``'s claims-by-owner and pods-by-claim indexes from this state's: the entries
        of the changed pods, and of the pods that own a changed claim (their template entries
        resolve to it), taken out as this state resolved them and put back as ``new`` does,
        each list in the order of ``new.pods``."""
        owners = dict(self._claims_by_owner)
        for before, after in claims_moved:
            if before is not None:
                k = (before.namespace, before.owner_pod_uid, before.pod_claim_name)
                if owners.get(k) == before.name:
                    del owners[k]
            if after is not None:
                owners.setdefault((after.namespace, after.owner_pod_uid, after.pod_claim_name), after.name)
        new.__dict__["_claims_by_owner"] = owners
        moved = list(pods_moved)
        for before, after in claims_moved:  # pods whose template entry resolves to a changed claim
            for uid in {c.owner_pod_uid for c in (before, after) if c is not None and c.owner_pod_uid}:
                old_pod, new_pod = self.pods_by_uid().get(uid), new.pods_by_uid().get(uid)
                if old_pod is not None or new_pod is not None:
                    moved.append((old_pod, new_pod))
        index = dict(self._pods_by_claim)
        copied: set[tuple[str, str]] = set()
        seq = new.__dict__["_pod_seq"]

        def edit(key: tuple[str, str]) -> list[Pod]:
            if key not in copied:
                index[key] = list(index.get(key, ()))
                copied.add(key)
            return index[key]

        for before, after in moved:
            if before is not None:
                for name in dict.fromkeys(n for _, n in self.pod_claim_names(before) if n is not None):
                    lst = edit((before.namespace, name))
                    lst[:] = [p for p in lst if p is not before]
            if after is not None and new.pods.get((after.namespace or "", after.name)) is after:
                for name in dict.fromkeys(n for _, n in new.pod_claim_names(after) if n is not None):
                    lst = edit((after.namespace, name))
                    if not any(p is after for p in lst):
                        lst.append(after)
        for key in copied:
            lst = index[key]
            lst.sort(key=lambda p: seq[(p.namespace or "", p.name)])
            if not lst:
                del index[key]
        new.__dict__["_pods_by_claim"] = index

    # Indexes built on first use (the dataclass is frozen; ``cached_property`` writes to the
    # instance dict directly). Rules ask per claim and per node; scanning every pod, event or
    # slice on each question made a 1,000-node fleet quadratic.

    @cached_property
    def device_matches(self) -> dict[tuple[str, ...], Any]:
        """CEL selector set -> (keys of the devices it selects, first runtime errors), filled
        by ``feasibility``: a function of the devices alone, so ``patched`` carries it over."""
        return {}

    @cached_property
    def _claims_by_owner(self) -> dict[tuple[str, str | None, str | None], str]:
        out: dict[tuple[str, str | None, str | None], str] = {}
        for (ns, cname), c in self.claims.items():
            out.setdefault((ns, c.owner_pod_uid, c.pod_claim_name), cname)
        return out

    @cached_property
    def _pod_seq(self) -> dict[tuple[str, str], int]:
        """Each pod's place in ``pods`` (``patched`` keeps the pods-by-claim lists in it)."""
        self.__dict__["_pod_seq_next"] = len(self.pods)
        return {k: i for i, k in enumerate(self.pods)}

    @cached_property
    def _claim_seq(self) -> dict[tuple[str, str], int]:
        self.__dict__["_claim_seq_next"] = len(self.claims)
        return {k: i for i, k in enumerate(self.claims)}

    @cached_property
    def _node_seq(self) -> dict[str, int]:
        return {k: i for i, k in enumerate(self.nodes)}

    def in_order(self, what: str, keys: Iterable[Any]) -> list[Any]:
        """The claims, pods or nodes (``what``) of ``keys`` that the state holds, in the
        order of its map, in time of the keys (a scoped diagnosis reads a few of many)."""
        of, seq = {"claims": (self.claims, self._claim_seq), "pods": (self.pods, self._pod_seq),
                   "nodes": (self.nodes, self._node_seq)}[what]
        return [of[k] for k in sorted((k for k in keys if k in of), key=seq.__getitem__)]

    @cached_property
    def _pods_by_claim(self) -> dict[tuple[str, str], list[Pod]]:
        _ = self._pod_seq  # with it, a patched state patches this index in order
        out: dict[tuple[str, str], list[Pod]] = {}
        for pod in self.pods.values():
            if not pod.resource_claims:  # most pods (DaemonSets, CPU work) name no claim
                continue
            for name in dict.fromkeys(n for _, n in self.pod_claim_names(pod) if n is not None):
                out.setdefault((pod.namespace, name), []).append(pod)
        return out

    @cached_property
    def node_facts(self) -> dict[str, Any]:
        """A memo for facts a rule derives from nodes, slices, DeviceClasses, DaemonSets and
        kubelet-plugin pods alone (never claims, other pods or Events): ``patched`` carries it
        over, since a change it follows moves none of those."""
        return {}

    @cached_property
    def _event_seq(self) -> dict[int, int]:
        return {id(e): i for i, e in enumerate(self.events)}

    def events_about(self, subjects: Iterable[tuple[str, str]]) -> list[Event]:
        """The Events whose ``involvedObject`` is one of ``subjects`` ((kind, name); any
        namespace), in the state's order, in time of what they name."""
        found = {id(e): e for k in subjects for e in self._events_by_object.get(k, ())}
        seq = self._event_seq
        return [found[i] for i in sorted(found, key=seq.__getitem__)]

    @cached_property
    def _events_by_object(self) -> dict[tuple[str | None, str | None], list[Event]]:
        out: dict[tuple[str | None, str | None], list[Event]] = {}
        for e in self.events:
            out.setdefault((e.involved_kind, e.involved_name), []).append(e)
        return out

    @cached_property
    def shareable_devices(self) -> frozenset[tuple[str, str, str]]:
        """Keys of devices published with ``allowMultipleAllocations``: allocated, still free."""
        return frozenset(d.key for s in self.slices if s.allow_multiple for d in s.devices if d.name in s.allow_multiple)

    @cached_property
    def superseded_devices(self) -> frozenset[tuple[str, str, str]]:
        """Keys of devices only a slice of an older generation of their pool lists: published
        once, but not offered by the scheduler, which reads a pool's newest generation alone."""
        return frozenset(d.key for s in self.slices for d in s.devices if d.key not in self.devices)

    @cached_property
    def incomplete_pools(self) -> dict[tuple[str, str], capacity.PoolState]:
        """(driver, pool) -> state of each pool the scheduler gathers as incomplete (its newest
        generation has another number of slices than they declare): a request for All devices
        fails on a node that sees such a pool (``inventory.capacity.PoolState``)."""
        states = capacity.pool_states((s.driver, s.pool, s.pool_generation, s.resource_slice_count) for s in self.slices)
        return {k: v for k, v in states.items() if v.incomplete}

    @cached_property
    def invalid_pools(self) -> dict[tuple[str, str], list[str]]:
        """(driver, pool) -> device names its newest generation lists twice: the scheduler
        allocates nothing from a node that sees such a pool (``inventory.capacity.invalid_pools``)."""
        return capacity.invalid_pools((s.driver, s.pool, s.pool_generation, (d.name for d in s.devices)) for s in self.slices)

    @cached_property
    def holdings(self) -> dict[tuple[str, str, str], capacity.Holding]:
        """Device key -> its holders (``inventory.capacity.holdings``: admin access apart)."""
        return capacity.holdings(self.claims.values())

    @cached_property
    def counters_left(self) -> dict[Any, Any]:
        """(counter set, counter) -> amount left once the held devices' ``consumesCounters``
        are taken (``inventory.capacity.remaining_counters``)."""
        return capacity.remaining_counters(self.devices.values(), capacity.counter_sets(self.slices), self.holdings)

    def counters_available(self, device: Device) -> bool:
        """Are the shared counters this device consumes still available (NVIDIA dynamic MIG:
        a placement whose GPU's memory slices another placement or the whole GPU took is not
        allocatable)? True for a device that consumes none, or that is already held."""
        if not device.consumes_counters:
            return True
        h = self.holdings.get(device.key)
        if h is not None and h.taken:
            return True
        left = self.counters_left
        for cc in device.consumes_counters:
            for name, amount in cc.counters.items():
                if left.get(((device.driver, device.pool, cc.counter_set), name), 0) < amount:
                    return False
        return True

    def shared_device_has_room(self, device: Device) -> bool:
        """A device with ``allowMultipleAllocations`` can take one more claim: capacity left
        after its holders' ``consumedCapacity`` (``inventory.capacity.has_room``)."""
        return capacity.has_room(device, self.holdings.get(device.key))

    @cached_property
    def _slices_by_node(self) -> dict[str | None, list[ResourceSlice]]:
        out: dict[str | None, list[ResourceSlice]] = {}
        for s in self.slices:
            out.setdefault(s.node_name, []).append(s)
        return out

    @cached_property
    def _plugin_daemonsets(self) -> frozenset[tuple[str | None, str]]:
        """(namespace, name) of the DaemonSets that run a DRA kubelet plugin (by their labels;
        the records do not keep the pod template's)."""
        return frozenset(
            (ds.namespace, ds.name) for ds in self.daemonsets
            if is_kubelet_plugin_labels(ds.labels)
        )

    def is_kubelet_plugin(self, pod: Pod) -> bool:
        """A DRA kubelet-plugin pod: its labels name the kubelet-plugin component (the NVIDIA
        chart's ``<chart>-component: kubelet-plugin``, the GPU Operator's
        ``app.kubernetes.io/component: nvidia-dra-driver-kubelet-plugin``), or its controller
        is a DaemonSet whose labels do. Never judged by the pod's name."""
        if is_kubelet_plugin_labels(pod.labels):
            return True
        owner = pod.controller
        return owner is not None and owner.kind == "DaemonSet" and (pod.namespace, owner.name) in self._plugin_daemonsets

    def is_gpu_kubelet_plugin(self, pod: Pod) -> bool:
        """The NVIDIA GPU DRA driver's kubelet plugin: a kubelet-plugin pod running the
        ``gpus`` container (the chart's GPU plugin; ``compute-domains`` is the ComputeDomain
        plugin, which alone serves no GPU) or the ``gpu-kubelet-plugin`` binary."""
        if not self.is_kubelet_plugin(pod):
            return False
        for c in pod.pod_spec.containers:
            if c.name == GPU_PLUGIN_CONTAINER or any(x.rpartition("/")[2] == GPU_PLUGIN_BINARY for x in c.command):
                return True
        return False

    @cached_property
    def _plugin_pods_by_node(self) -> dict[str | None, list[Pod]]:
        out: dict[str | None, list[Pod]] = {}
        for p in self.pods.values():
            if self.is_kubelet_plugin(p):
                out.setdefault(p.node_name, []).append(p)
        return out

    def pod_claim_names(self, pod: Pod) -> list[tuple[PodClaimRef, str | None]]:
        """Each of the pod's claim references with the ResourceClaim name it resolves to.

        Direct ``resourceClaimName``; for templates ``status.resourceClaimStatuses`` or a claim
        owned by the pod whose ``resource.kubernetes.io/pod-claim-name`` is the entry's name.
        Claims are namespaced: only the pod's namespace is searched.
        """
        out: list[tuple[PodClaimRef, str | None]] = []
        for ref in pod.resource_claims:
            name = ref.claim_name or ref.status_claim_name
            if name is None and ref.template_name:
                name = self._claims_by_owner.get((pod.namespace, pod.uid, ref.name))
            out.append((ref, name))
        return out

    def pods_using_claim(self, claim: ResourceClaim) -> list[Pod]:
        """Pods in the claim's namespace that reference it (directly or via a template), by name."""
        return sorted(self._pods_by_claim.get((claim.namespace, claim.name), ()), key=_by_name)

    def events_for(self, kind: str, namespace: str | None, name: str) -> list[Event]:
        return [
            e
            for e in self._events_by_object.get((kind, name), ())
            if namespace is None or e.involved_namespace in (namespace, None)
        ]

    def slices_on_node(self, node: str) -> list[ResourceSlice]:
        return list(self._slices_by_node.get(node, ()))

    def slices_of_nodes(self, nodes: Iterable[str]) -> list[ResourceSlice]:
        """The slices published on ``nodes`` and those on no node, in the state's order (a
        scope reads a few nodes' slices of many)."""
        by_node = self._slices_by_node
        found = [s for n in (*nodes, None, "") for s in by_node.get(n, ())]
        seq = self._slice_seq
        return sorted({id(s): s for s in found}.values(), key=lambda s: seq[id(s)])

    @cached_property
    def _slice_seq(self) -> dict[int, int]:
        return {id(s): i for i, s in enumerate(self.slices)}

    def plugin_pods_on_node(self, node: str) -> list[Pod]:
        return list(self._plugin_pods_by_node.get(node, ()))

    def gpu_driver_expected(self) -> bool:
        """Is the NVIDIA GPU DRA driver meant to run here (it publishes somewhere, or its
        DeviceClass or kubelet-plugin pods exist)?"""
        if any(s.driver == GPU_DRIVER for s in self.slices):
            return True
        if GPU_DRIVER in self.device_classes:
            return True
        return any(self.is_gpu_kubelet_plugin(p) for p in self.pods.values())

    def requests_of(self, claim: ResourceClaim) -> list[dict[str, Any]]:
        """Each request flattened (``DeviceRequest.summary``)."""
        return [r.summary() for r in claim.requests]

    def template_requests(self, namespace: str, name: str) -> tuple[DeviceRequest, ...] | None:
        t = self.templates.get((namespace, name))
        return t.requests if t is not None else None


def devices_by_uuid(devices: Iterable[Device]) -> dict[tuple[str, str | None, str], Device]:
    """(driver, node, uuid) -> device, for those of ``devices`` that publish a uuid (the last
    of a repeated uuid wins)."""
    return {(d.driver, d.node_name, d.uuid): d for d in devices if d.uuid}


def _held_over(held: rec.KubeRecord, other: rec.KubeRecord) -> bool:
    """Of two claims or pods under one namespace/name (only a hand-made file holds them), the
    one a state keeps: the greater uid, whatever order the records come in (a worker's model, the
    stored chunks and the database each give their own)."""
    return other.uid >= held.uid


def _moved(index: dict[str, set[tuple[str, str]]], moves: Iterable[tuple[Any, Any, Any]]) -> dict[str, set[tuple[str, str]]]:
    """``index`` (node -> object keys) with each (nodes before, nodes after, record) moved;
    the sets of untouched nodes are shared, not copied."""
    out = dict(index)
    copied: set[str] = set()
    for before, after, r in moves:
        key = (r.namespace or "", r.name)
        for n, add in [*((n, False) for n in before or ()), *((n, True) for n in after or ())]:
            if n not in copied:
                out[n] = set(out.get(n, ()))
                copied.add(n)
            (out[n].add if add else out[n].discard)(key)
    return out


# ---- derived facts -------------------------------------------------------------------------

# The NVIDIA GPU DRA driver chart's GPU plugin container and binary (its ComputeDomain plugin
# is the ``compute-domains`` container of the same pod).
GPU_PLUGIN_CONTAINER = "gpus"
GPU_PLUGIN_BINARY = "gpu-kubelet-plugin"
KUBELET_PLUGIN = "kubelet-plugin"


def is_kubelet_plugin_labels(labels: Mapping[str, str]) -> bool:
    """Labels of a DRA kubelet plugin: a ``...-component`` / ``app.kubernetes.io/component``
    label whose value is or ends in ``kubelet-plugin`` (the NVIDIA chart, the GPU Operator,
    the example driver's chart)."""
    for k, v in labels.items():
        # The value's suffix first: one call rules out almost every label.
        if (v.endswith(KUBELET_PLUGIN) and k.endswith(_COMPONENT_SUFFIXES)
                and (v == KUBELET_PLUGIN or v.endswith(_PLUGIN_SUFFIX))):
            return True
    return False


_COMPONENT_SUFFIXES = ("-component", "/component")
_PLUGIN_SUFFIX = "-" + KUBELET_PLUGIN


def _component(pod: Pod) -> ComponentInfo | None:
    if pod.namespace != "kube-system":
        return None
    comp = pod.labels.get("component")
    if comp not in CONTROL_PLANE_COMPONENTS:
        comp = next((c for c in CONTROL_PLANE_COMPONENTS if pod.name.startswith(c + "-")), None)
    if comp is None:
        return None
    version = next((v for v in map(parse_version, pod.images) if v), None)
    return ComponentInfo(
        component=comp,
        pod_namespace=pod.namespace,
        pod_name=pod.name,
        version=version,
        feature_gates=feature_gates(pod.commands),
    )
