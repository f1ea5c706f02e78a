"""ClusterState: a frozen, typed snapshot of everything the diagnosis reads.

Pure: no Django. Built once from raw Kubernetes objects of any kinds (as ``kubectl get -o
yaml`` prints them, or as the live source lists them) plus optional DCGM scrapes; every rule
reads this object and nothing else. Unknown kinds are ignored. DRA objects are passed through
``inventory.normalize.normalize`` first, so v1beta1/v1beta2 snapshots read like v1.

Sources: Node ``metadata.labels``, ``spec.unschedulable``, ``spec.taints``,
``status.nodeInfo.kubeletVersion``; Pod ``spec.resourceClaims``, ``spec.nodeName``,
``status.resourceClaimStatuses``, ``status.containerStatuses``; Event in both shapes
(core/v1 ``count/firstTimestamp/lastTimestamp``; events.k8s.io ``eventTime/series``);
control-plane static pods in ``kube-system`` (``component`` label or name prefix) with
``--feature-gates`` and the image tag as version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from inventory.normalize import normalize
from inventory.parse import (
    GPU_DRIVER,
    Device,
    ResourceClaim,
    ResourceSlice,
    parse_resource_claim,
    parse_resource_slice,
    request_summary,
)

CONTROL_PLANE_COMPONENTS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")


def parse_time(value: Any) -> datetime | None:
    """RFC 3339 text (``2026-11-18T10:17:06Z``, fractional seconds allowed) as aware UTC."""
    if not isinstance(value, str) or len(value) < 19:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """``v1.34.1-gke.100`` / ``registry.k8s.io/kube-scheduler:v1.32.0`` -> (1, 34, 1)."""
    if not text:
        return None
    s = text.rsplit(":", 1)[-1] if ":" in text else text
    s = s.lstrip("v")
    core = s.split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]):
        return None
    nums = [int(p) for p in parts[:3]] + [0] * (3 - len(parts[:3]))
    return (nums[0], nums[1], nums[2])


@dataclass(frozen=True)
class NodeInfo:
    name: str
    uid: str | None
    labels: Mapping[str, str]
    unschedulable: bool
    taints: tuple[Mapping[str, Any], ...]
    ready: bool | None
    kubelet_version: str | None

    @property
    def has_nvidia_gpu(self) -> bool:
        """GPU Feature Discovery labels say this node carries NVIDIA GPUs."""
        if self.labels.get("nvidia.com/gpu.present") == "true":
            return True
        count = self.labels.get("nvidia.com/gpu.count", "")
        return count.isdigit() and int(count) > 0


@dataclass(frozen=True)
class DeviceClassInfo:
    name: str
    selectors: tuple[str, ...]
    extended_resource_name: str | None


@dataclass(frozen=True)
class PodClaimRef:
    """One ``spec.resourceClaims[]`` entry and the claim name the pod status resolved it to."""

    name: str
    claim_name: str | None
    template_name: str | None
    status_claim_name: str | None


@dataclass(frozen=True)
class ContainerState:
    name: str
    ready: bool
    restart_count: int
    waiting_reason: str | None
    waiting_message: str | None
    last_terminated_message: str | None
    started_at: str | None
    image: str | None


@dataclass(frozen=True)
class PodInfo:
    namespace: str
    name: str
    uid: str | None
    node_name: str | None
    phase: str | None
    created: str | None
    deletion_timestamp: str | None
    labels: Mapping[str, str]
    resource_claims: tuple[PodClaimRef, ...]
    conditions: tuple[Mapping[str, Any], ...]
    containers: tuple[ContainerState, ...]
    images: tuple[str, ...]
    commands: tuple[str, ...]
    tolerations: tuple[Mapping[str, Any], ...]

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def ready(self) -> bool:
        return self.phase == "Running" and all(c.ready for c in self.containers)

    def condition(self, ctype: str) -> Mapping[str, Any] | None:
        return next((c for c in self.conditions if c.get("type") == ctype), None)

    @property
    def is_dra_kubelet_plugin(self) -> bool:
        """A DRA kubelet-plugin pod (NVIDIA driver chart labels or the usual pod name)."""
        if any("kubelet-plugin" in str(v) for v in self.labels.values()):
            return True
        return "kubelet-plugin" in self.name

    @property
    def is_container_toolkit(self) -> bool:
        return "container-toolkit" in self.name or any(
            "container-toolkit" in str(v) for v in self.labels.values()
        )


@dataclass(frozen=True)
class EventInfo:
    """One Event, either shape. ``first``/``last`` are RFC 3339 text; ``count`` >= 1."""

    namespace: str | None
    name: str
    involved_kind: str | None
    involved_namespace: str | None
    involved_name: str | None
    involved_uid: str | None
    reason: str
    message: str
    type: str
    first: str | None
    last: str | None
    count: int
    component: str | None
    host: str | None


@dataclass(frozen=True)
class DaemonSetInfo:
    namespace: str
    name: str
    images: tuple[str, ...]
    env: Mapping[str, str]
    service_account: str | None
    desired: int
    ready: int


@dataclass(frozen=True)
class TaintRuleInfo:
    """A DeviceTaintRule: ``spec.deviceSelector`` {driver, pool, device} and ``spec.taint``."""

    name: str
    driver: str | None
    pool: str | None
    device: str | None
    selectors: tuple[str, ...]
    taint: Mapping[str, Any]

    @property
    def selector_empty(self) -> bool:
        return not (self.driver or self.pool or self.device or self.selectors)


@dataclass(frozen=True)
class ComponentInfo:
    """A control-plane component seen as a static pod: version and ``--feature-gates``."""

    component: str
    pod_namespace: str
    pod_name: str
    version: tuple[int, int, int] | None
    feature_gates: Mapping[str, bool]


@dataclass(frozen=True)
class SliceExtra:
    """Fields of a slice that ``inventory.parse`` does not keep."""

    shared_counters: bool
    allow_multiple: frozenset[str]


@dataclass(frozen=True)
class ClaimExtra:
    """Fields of a claim that ``inventory.parse`` does not keep."""

    constraints: tuple[Mapping[str, Any], ...]
    result_tolerations: Mapping[str, tuple[Mapping[str, Any], ...]]
    node_selector_nodes: tuple[str, ...]
    has_owner: bool


@dataclass(frozen=True)
class ClusterState:
    """Everything a diagnosis reads; build it with ``ClusterState.from_objects``."""

    nodes: Mapping[str, NodeInfo]
    device_classes: Mapping[str, DeviceClassInfo]
    slices: tuple[ResourceSlice, ...]
    slice_extra: Mapping[str, SliceExtra]
    devices: Mapping[tuple[str, str, str], Device]
    claims: Mapping[tuple[str, str], ResourceClaim]
    claim_extra: Mapping[tuple[str, str], ClaimExtra]
    templates: Mapping[tuple[str, str], tuple[dict[str, Any], ...]]
    pods: Mapping[tuple[str, str], PodInfo]
    events: tuple[EventInfo, ...]
    daemonsets: tuple[DaemonSetInfo, ...]
    taint_rules: tuple[TaintRuleInfo, ...]
    components: Mapping[str, ComponentInfo]
    cluster_roles: Mapping[str, tuple[Mapping[str, Any], ...]]
    config_maps: Mapping[tuple[str, str], Mapping[str, str]]
    prom: Mapping[str, str]
    kinds_seen: frozenset[str]
    errors: tuple[str, ...] = field(default=())

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def from_objects(
        cls, objects: list[dict[str, Any]], prom: Mapping[str, str] | None = None
    ) -> ClusterState:
        """Build the snapshot. Raises ``inventory.normalize.UnknownAPIVersion`` for a DRA
        object of an unknown ``resource.k8s.io`` version; malformed single objects are
        skipped and listed in ``errors``."""
        nodes: dict[str, NodeInfo] = {}
        classes: dict[str, DeviceClassInfo] = {}
        slices: list[ResourceSlice] = []
        slice_extra: dict[str, SliceExtra] = {}
        claims: dict[tuple[str, str], ResourceClaim] = {}
        claim_extra: dict[tuple[str, str], ClaimExtra] = {}
        templates: dict[tuple[str, str], tuple[dict[str, Any], ...]] = {}
        pods: dict[tuple[str, str], PodInfo] = {}
        events: list[EventInfo] = []
        daemonsets: list[DaemonSetInfo] = []
        taint_rules: list[TaintRuleInfo] = []
        components: dict[str, ComponentInfo] = {}
        roles: dict[str, tuple[Mapping[str, Any], ...]] = {}
        cms: dict[tuple[str, str], Mapping[str, str]] = {}
        kinds: set[str] = set()
        errors: list[str] = []
        for raw in objects:
            if not isinstance(raw, dict):
                continue
            obj = normalize(raw)
            kind = obj.get("kind")
            meta = obj.get("metadata") or {}
            if not isinstance(kind, str) or not isinstance(meta, dict):
                continue
            kinds.add(kind)
            try:
                if kind == "Node":
                    n = _node(obj)
                    nodes[n.name] = n
                elif kind == "DeviceClass":
                    dc = _device_class(obj)
                    classes[dc.name] = dc
                elif kind == "ResourceSlice":
                    s = parse_resource_slice(obj)
                    slices.append(s)
                    slice_extra[s.name] = _slice_extra(obj)
                elif kind == "ResourceClaim":
                    c = parse_resource_claim(obj)
                    claims[(c.namespace, c.name)] = c
                    claim_extra[(c.namespace, c.name)] = _claim_extra(obj)
                elif kind == "ResourceClaimTemplate":
                    spec = ((obj.get("spec") or {}).get("spec") or {}).get("devices") or {}
                    reqs = tuple(r for r in spec.get("requests") or [] if isinstance(r, dict))
                    templates[(str(meta.get("namespace")), str(meta.get("name")))] = reqs
                elif kind == "Pod":
                    p = _pod(obj)
                    pods[(p.namespace, p.name)] = p
                    comp = _component(p, obj)
                    if comp is not None:
                        components[comp.component] = comp
                elif kind == "Event":
                    events.append(_event(obj))
                elif kind == "DaemonSet":
                    daemonsets.append(_daemonset(obj))
                elif kind == "DeviceTaintRule":
                    taint_rules.append(_taint_rule(obj))
                elif kind == "ClusterRole":
                    roles[str(meta.get("name"))] = tuple(
                        r for r in obj.get("rules") or [] if isinstance(r, dict)
                    )
                elif kind == "ConfigMap":
                    data = obj.get("data") or {}
                    cms[(str(meta.get("namespace")), str(meta.get("name")))] = {
                        str(k): str(v) for k, v in data.items()
                    }
            except (ValueError, TypeError, AttributeError) as exc:
                errors.append(f"{kind} {meta.get('namespace') or ''}/{meta.get('name')}: {exc}")
        devices = {d.key: d for s in slices for d in s.devices}
        return cls(
            nodes=nodes,
            device_classes=classes,
            slices=tuple(slices),
            slice_extra=slice_extra,
            devices=devices,
            claims=claims,
            claim_extra=claim_extra,
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

    # ---- lookups ------------------------------------------------------------------------

    def pods_by_uid(self) -> dict[str, PodInfo]:
        return {p.uid: p for p in self.pods.values() if p.uid}

    # Indexes built on first use (the dataclass is frozen; ``cached_property`` writes to the
    # instance dict directly). Rules ask per claim and per node; scanning every pod, event or
    # slice on each question made a 1,000-node fleet quadratic.

    @cached_property
    def _claims_by_owner(self) -> dict[tuple[str, str | None, str | None], str]:
        out: dict[tuple[str, str | None, str | None], str] = {}
        for (ns, cname), c in self.claims.items():
            out.setdefault((ns, c.owner_pod_uid, c.pod_claim_name), cname)
        return out

    @cached_property
    def _pods_by_claim(self) -> dict[tuple[str, str], list[PodInfo]]:
        out: dict[tuple[str, str], list[PodInfo]] = {}
        for pod in self.pods.values():
            for name in dict.fromkeys(n for _, n in self.pod_claim_names(pod) if n is not None):
                out.setdefault((pod.namespace, name), []).append(pod)
        return out

    @cached_property
    def _events_by_object(self) -> dict[tuple[str | None, str | None], list[EventInfo]]:
        out: dict[tuple[str | None, str | None], list[EventInfo]] = {}
        for e in self.events:
            out.setdefault((e.involved_kind, e.involved_name), []).append(e)
        return out

    @cached_property
    def _slices_by_node(self) -> dict[str | None, list[ResourceSlice]]:
        out: dict[str | None, list[ResourceSlice]] = {}
        for s in self.slices:
            out.setdefault(s.node_name, []).append(s)
        return out

    @cached_property
    def _plugin_pods_by_node(self) -> dict[str | None, list[PodInfo]]:
        out: dict[str | None, list[PodInfo]] = {}
        for p in self.pods.values():
            if p.is_dra_kubelet_plugin:
                out.setdefault(p.node_name, []).append(p)
        return out

    def pod_claim_names(self, pod: PodInfo) -> list[tuple[PodClaimRef, str | None]]:
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

    def pods_using_claim(self, claim: ResourceClaim) -> list[PodInfo]:
        """Pods in the claim's namespace that reference it (directly or via a template)."""
        return list(self._pods_by_claim.get((claim.namespace, claim.name), ()))

    def events_for(self, kind: str, namespace: str | None, name: str) -> list[EventInfo]:
        return [
            e
            for e in self._events_by_object.get((kind, name), ())
            if namespace is None or e.involved_namespace in (namespace, None)
        ]

    def slices_on_node(self, node: str) -> list[ResourceSlice]:
        return list(self._slices_by_node.get(node, ()))

    def plugin_pods_on_node(self, node: str) -> list[PodInfo]:
        return list(self._plugin_pods_by_node.get(node, ()))

    def gpu_driver_expected(self) -> bool:
        """Is the NVIDIA GPU DRA driver meant to run here (it publishes somewhere, or its
        DeviceClass or kubelet-plugin pods exist)?"""
        if any(s.driver == GPU_DRIVER for s in self.slices):
            return True
        if GPU_DRIVER in self.device_classes:
            return True
        return any(p.is_dra_kubelet_plugin and "gpu" in p.name for p in self.pods.values())

    def requests_of(self, claim: ResourceClaim) -> list[dict[str, Any]]:
        return [request_summary(r) for r in claim.requests]


# ---- object readers --------------------------------------------------------------------------


def _labels(meta: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}


def _node(obj: dict[str, Any]) -> NodeInfo:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    ready = None
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            ready = c.get("status") == "True"
    return NodeInfo(
        name=str(meta.get("name")),
        uid=meta.get("uid"),
        labels=_labels(meta),
        unschedulable=bool(spec.get("unschedulable")),
        taints=tuple(t for t in spec.get("taints") or [] if isinstance(t, dict)),
        ready=ready,
        kubelet_version=(status.get("nodeInfo") or {}).get("kubeletVersion"),
    )


def _cel_list(selectors: Any) -> tuple[str, ...]:
    return tuple(
        str(s["cel"]["expression"])
        for s in selectors or []
        if isinstance(s, dict) and isinstance(s.get("cel"), dict) and "expression" in s["cel"]
    )


def _device_class(obj: dict[str, Any]) -> DeviceClassInfo:
    spec = obj.get("spec") or {}
    return DeviceClassInfo(
        name=str(obj["metadata"].get("name")),
        selectors=_cel_list(spec.get("selectors")),
        extended_resource_name=spec.get("extendedResourceName"),
    )


def _slice_extra(obj: dict[str, Any]) -> SliceExtra:
    spec = obj.get("spec") or {}
    allow = frozenset(
        str(d.get("name"))
        for d in spec.get("devices") or []
        if isinstance(d, dict) and d.get("allowMultipleAllocations")
    )
    return SliceExtra(shared_counters=bool(spec.get("sharedCounters")), allow_multiple=allow)


def _claim_extra(obj: dict[str, Any]) -> ClaimExtra:
    meta = obj.get("metadata") or {}
    spec = (obj.get("spec") or {}).get("devices") or {}
    status = obj.get("status") or {}
    alloc = status.get("allocation") or {}
    tolerations: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for r in (alloc.get("devices") or {}).get("results") or []:
        if isinstance(r, dict):
            key = f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
            tolerations[key] = tuple(t for t in r.get("tolerations") or [] if isinstance(t, dict))
    nodes: list[str] = []
    for term in (alloc.get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
        for f in (term or {}).get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In":
                nodes.extend(str(v) for v in f.get("values") or [])
    return ClaimExtra(
        constraints=tuple(c for c in spec.get("constraints") or [] if isinstance(c, dict)),
        result_tolerations=tolerations,
        node_selector_nodes=tuple(nodes),
        has_owner=bool(meta.get("ownerReferences")),
    )


def _container_states(status: Mapping[str, Any]) -> tuple[ContainerState, ...]:
    out = []
    for cs in status.get("containerStatuses") or []:
        if not isinstance(cs, dict):
            continue
        state = cs.get("state") or {}
        waiting = state.get("waiting") or {}
        running = state.get("running") or {}
        last = (cs.get("lastState") or {}).get("terminated") or {}
        out.append(
            ContainerState(
                name=str(cs.get("name")),
                ready=bool(cs.get("ready")),
                restart_count=int(cs.get("restartCount") or 0),
                waiting_reason=waiting.get("reason"),
                waiting_message=waiting.get("message"),
                last_terminated_message=last.get("message"),
                started_at=running.get("startedAt"),
                image=cs.get("image"),
            )
        )
    return tuple(out)


def _pod(obj: dict[str, Any]) -> PodInfo:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    status_names = {
        s.get("name"): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or []
        if isinstance(s, dict)
    }
    refs = tuple(
        PodClaimRef(
            name=str(r.get("name")),
            claim_name=r.get("resourceClaimName"),
            template_name=r.get("resourceClaimTemplateName"),
            status_claim_name=status_names.get(r.get("name")),
        )
        for r in spec.get("resourceClaims") or []
        if isinstance(r, dict)
    )
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    commands = []
    for c in containers:
        commands.extend(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
    return PodInfo(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta.get("name")),
        uid=meta.get("uid"),
        node_name=spec.get("nodeName"),
        phase=status.get("phase"),
        created=meta.get("creationTimestamp"),
        deletion_timestamp=meta.get("deletionTimestamp"),
        labels=_labels(meta),
        resource_claims=refs,
        conditions=tuple(c for c in status.get("conditions") or [] if isinstance(c, dict)),
        containers=_container_states(status),
        images=tuple(str(c.get("image")) for c in containers if c.get("image")),
        commands=tuple(commands),
        tolerations=tuple(t for t in spec.get("tolerations") or [] if isinstance(t, dict)),
    )


def _feature_gates(args: tuple[str, ...]) -> dict[str, bool]:
    gates: dict[str, bool] = {}
    for i, a in enumerate(args):
        value = None
        if a.startswith("--feature-gates="):
            value = a.split("=", 1)[1]
        elif a == "--feature-gates" and i + 1 < len(args):
            value = args[i + 1]
        if value is None:
            continue
        for item in value.split(","):
            name, _, v = item.partition("=")
            if name.strip():
                gates[name.strip()] = v.strip().lower() == "true"
    return gates


def _component(pod: PodInfo, obj: dict[str, Any]) -> ComponentInfo | None:
    if pod.namespace != "kube-system":
        return None
    comp = pod.labels.get("component")
    if comp not in CONTROL_PLANE_COMPONENTS:
        comp = next((c for c in CONTROL_PLANE_COMPONENTS if pod.name.startswith(c + "-")), None)
    if comp is None:
        return None
    version = next((parse_version(i) for i in pod.images if parse_version(i)), None)
    return ComponentInfo(
        component=comp,
        pod_namespace=pod.namespace,
        pod_name=pod.name,
        version=version,
        feature_gates=_feature_gates(pod.commands),
    )


def _event(obj: dict[str, Any]) -> EventInfo:
    meta = obj.get("metadata") or {}
    # core/v1 names it involvedObject; events.k8s.io/v1 names it regarding.
    inv = obj.get("involvedObject") or obj.get("regarding") or {}
    series = obj.get("series") or {}
    source = obj.get("source") or {}
    first = obj.get("firstTimestamp") or obj.get("eventTime") or obj.get("deprecatedFirstTimestamp")
    last = (
        series.get("lastObservedTime")
        or obj.get("lastTimestamp")
        or obj.get("deprecatedLastTimestamp")
        or first
    )
    count = series.get("count") or obj.get("count") or obj.get("deprecatedCount") or 1
    return EventInfo(
        namespace=meta.get("namespace"),
        name=str(meta.get("name")),
        involved_kind=inv.get("kind"),
        involved_namespace=inv.get("namespace"),
        involved_name=inv.get("name"),
        involved_uid=inv.get("uid"),
        reason=str(obj.get("reason") or ""),
        message=str(obj.get("message") or obj.get("note") or ""),
        type=str(obj.get("type") or ""),
        first=first,
        last=last,
        count=int(count),
        component=source.get("component") or obj.get("reportingComponent")
        or obj.get("reportingController"),
        host=source.get("host") or (obj.get("deprecatedSource") or {}).get("host"),
    )


def _daemonset(obj: dict[str, Any]) -> DaemonSetInfo:
    meta = obj["metadata"]
    tmpl = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    status = obj.get("status") or {}
    env: dict[str, str] = {}
    images = []
    for c in (tmpl.get("containers") or []) + (tmpl.get("initContainers") or []):
        if not isinstance(c, dict):
            continue
        if c.get("image"):
            images.append(str(c["image"]))
        for e in c.get("env") or []:
            if isinstance(e, dict) and "name" in e:
                env[str(e["name"])] = str(e.get("value", ""))
    return DaemonSetInfo(
        namespace=str(meta.get("namespace")),
        name=str(meta.get("name")),
        images=tuple(images),
        env=env,
        service_account=tmpl.get("serviceAccountName"),
        desired=int(status.get("desiredNumberScheduled") or 0),
        ready=int(status.get("numberReady") or 0),
    )


def _taint_rule(obj: dict[str, Any]) -> TaintRuleInfo:
    spec = obj.get("spec") or {}
    sel = spec.get("deviceSelector") or {}
    return TaintRuleInfo(
        name=str(obj["metadata"].get("name")),
        driver=sel.get("driver"),
        pool=sel.get("pool"),
        device=sel.get("device"),
        selectors=_cel_list(sel.get("selectors")),
        taint=spec.get("taint") or {},
    )
