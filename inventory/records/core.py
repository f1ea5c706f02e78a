"""Records of the core kinds: Node, Pod (and the pod spec workloads share), Event, ConfigMap,
PriorityClass, ClusterRole.

Pure: no Django; never raises on odd cluster text (a field of the wrong type reads as absent).

Sources: Node ``metadata.labels``, ``spec.unschedulable``, ``spec.taints``,
``status.conditions[type=Ready]``, ``status.nodeInfo.kubeletVersion``, ``status.allocatable``;
Pod ``spec.{nodeName,containers,initContainers,resourceClaims,tolerations,priorityClassName,
nodeSelector,affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
serviceAccountName}``, ``status.{phase,conditions,containerStatuses (with allocatedResourcesStatus),resourceClaimStatuses,
extendedResourceClaimStatus}``;
Event in both shapes (core/v1 ``involvedObject``, ``count/firstTimestamp/lastTimestamp``,
``source``; events.k8s.io/v1 ``regarding``, ``eventTime``, ``series``, ``note``,
``reportingController``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from inventory.kube import has_gpu_labels

from .base import (
    _EMPTY_MAP as _NO_FIELDS,
)
from .base import (
    Condition,
    KubeRecord,
    NodeSelectorTerm,
    Taint,
    Toleration,
    as_map,
    conditions,
    dicts,
    make,
    meta_fields,
    node_selector_terms,
    str_map,
    strings,
    taints,
    text,
    to_int,
    tolerations,
)

# --- Node ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Node(KubeRecord):
    """A Node. ``ready``: its ``Ready`` condition (None when it reports none).
    ``allocatable``: ``status.allocatable`` (resource name -> quantity text)."""

    NAMESPACED: ClassVar[bool] = False

    unschedulable: bool
    taints: tuple[Taint, ...]
    ready: bool | None
    kubelet_version: str | None
    allocatable: Mapping[str, str]

    @property
    def has_nvidia_gpu(self) -> bool:
        """GPU Feature Discovery labels say this node carries NVIDIA GPUs."""
        return has_gpu_labels(self.labels)


def parse_node(obj: dict[str, Any]) -> Node:
    spec = as_map(obj.get("spec"))
    status = as_map(obj.get("status"))
    ready = next((c.get("status") == "True" for c in dicts(status.get("conditions")) if c.get("type") == "Ready"), None)
    return Node(
        *meta_fields(obj, namespaced=False),
        unschedulable=bool(spec.get("unschedulable")),
        taints=taints(spec.get("taints")),
        ready=ready,
        kubelet_version=text(as_map(status.get("nodeInfo")).get("kubeletVersion")),
        allocatable=str_map(status.get("allocatable")),
    )


# --- the pod spec (Pods and workload templates) ---------------------------------------------


class Container(NamedTuple):
    """One ``containers[]`` / ``initContainers[]`` entry.

    ``limits``/``requests``: ``resources.limits``/``resources.requests`` as written (resource
    name -> scalar: ``2`` or ``"2"``; quantities stay text). ``claims``: names in
    ``resources.claims[]``. ``env``: literal ``env[].value``s (``valueFrom`` reads as "").
    """

    name: str
    init: bool
    image: str | None
    command: tuple[str, ...]
    args: tuple[str, ...]
    env: Mapping[str, str]
    limits: Mapping[str, Any]
    requests: Mapping[str, Any]
    claims: tuple[str, ...]

    @property
    def resource_names(self) -> list[str]:
        """Names in ``limits`` then those only in ``requests``."""
        return [*self.limits, *(k for k in self.requests if k not in self.limits)]


def _scalars(v: Any) -> dict[str, Any]:
    if not v or type(v) is not dict:
        return {}
    return {str(k): x for k, x in v.items() if not isinstance(x, dict | list)}


def _container(c: dict[str, Any], init: bool) -> Container:
    g = c.get
    res = g("resources")
    rg = res.get if type(res) is dict else _NO_FIELDS.get
    env = g("env")
    claims = rg("claims")
    image = g("image")
    return make(Container, (
        str(g("name") or ""),
        init,
        (image if type(image) is str else text(image)) or None,
        strings(command) if (command := g("command")) else (),
        strings(args) if (args := g("args")) else (),
        {str(e["name"]): str(e.get("value", "")) for e in dicts(env) if "name" in e} if env else {},
        _scalars(rg("limits")),
        _scalars(rg("requests")),
        tuple(str(x.get("name")) for x in dicts(claims) if x.get("name")) if claims else (),
    ))


class PodClaimRef(NamedTuple):
    """One ``spec.resourceClaims[]`` entry and the claim name the pod status resolved it to
    (``status.resourceClaimStatuses[]``; None in a workload's pod template)."""

    name: str
    claim_name: str | None
    template_name: str | None
    status_claim_name: str | None = None


class PodSpec(NamedTuple):
    """A pod spec (a Pod's ``spec`` or a workload's pod template ``spec``).

    ``required_node_terms``: ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``.
    """

    node_name: str | None
    init_containers: tuple[Container, ...]
    containers: tuple[Container, ...]
    resource_claims: tuple[PodClaimRef, ...]
    tolerations: tuple[Toleration, ...]
    priority_class_name: str | None
    node_selector: Mapping[str, str]
    required_node_terms: tuple[NodeSelectorTerm, ...]
    service_account: str | None

    def all_containers(self) -> Iterator[Container]:
        """Init containers, then app containers."""
        yield from self.init_containers
        yield from self.containers


def parse_pod_spec(spec: Any) -> PodSpec:
    g = spec.get if type(spec) is dict else _NO_FIELDS.get
    init, app, refs, affinity = g("initContainers"), g("containers"), g("resourceClaims"), g("affinity")
    node, priority, account = g("nodeName"), g("priorityClassName"), g("serviceAccountName")
    return make(PodSpec, (
        text(node) or None,
        tuple(_container(c, True) for c in dicts(init)) if init else (),
        tuple(_container(c, False) for c in dicts(app)) if app else (),
        tuple(
            make(PodClaimRef, (str(r.get("name")), text(r.get("resourceClaimName")), text(r.get("resourceClaimTemplateName")), None))
            for r in dicts(refs)
        ) if refs else (),
        tolerations(g("tolerations")),
        text(priority) or None,
        str_map(g("nodeSelector")),
        node_selector_terms(as_map(as_map(affinity).get("nodeAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution"))
        if affinity else (),
        text(account) or None,
    ))


# --- Pod ----------------------------------------------------------------------------------------


class ResourceHealth(NamedTuple):
    """One ``allocatedResourcesStatus[].resources[]`` entry: ``resource_id`` and ``health``
    (``Healthy``, ``Unhealthy``, ``Unknown``). The kubelet (``pkg/kubelet/cm/dra``) writes the
    device's first CDI device id as ``resource_id`` when the driver gave one
    (``vendor/class=name``), else ``<driver>/<pool>/<device>``."""

    resource_id: str
    health: str | None

    @property
    def device_key(self) -> tuple[str, str, str] | None:
        """(driver, pool, device) of a DRA resource id: the driver is the first segment, the
        device the last (DNS names); the pool, which may hold slashes, what is between."""
        parts = self.resource_id.split("/")
        if "=" in self.resource_id or len(parts) < 3 or not all(parts):  # a CDI id names no pool
            return None
        return (parts[0], "/".join(parts[1:-1]), parts[-1])


class ResourceStatus(NamedTuple):
    """One ``status.containerStatuses[].allocatedResourcesStatus[]`` entry: ``name`` (for DRA
    ``claim:<entry>`` or ``claim:<entry>/<request>``, ``entry`` being the pod's
    ``spec.resourceClaims[].name``, not the ResourceClaim's name) and the health of each
    device it was given."""

    name: str
    resources: tuple[ResourceHealth, ...]

    @property
    def claim_request(self) -> tuple[str, str | None] | None:
        """(pod claim entry name, request or None) of a DRA entry, else None."""
        if not self.name.startswith("claim:"):
            return None
        claim, _, request = self.name[len("claim:"):].partition("/")
        return (claim, request or None)


def _resource_statuses(v: Any) -> tuple[ResourceStatus, ...]:
    return tuple(
        make(ResourceStatus, (
            str(s.get("name") or ""),
            tuple(make(ResourceHealth, (str(h.get("resourceID") or ""), text(h.get("health")))) for h in dicts(s.get("resources"))),
        ))
        for s in dicts(v)
    )


class ContainerState(NamedTuple):
    """One ``status.containerStatuses[]`` entry. ``allocated_resources_status``:
    ``allocatedResourcesStatus[]`` (the kubelet's health of the devices the container got)."""

    name: str
    ready: bool
    restart_count: int
    waiting_reason: str | None
    waiting_message: str | None
    last_terminated_message: str | None
    started_at: str | None
    image: str | None
    allocated_resources_status: tuple[ResourceStatus, ...] = ()


def _container_states(statuses: Any) -> tuple[ContainerState, ...]:
    if not statuses:
        return ()
    out = []
    for cs in dicts(statuses):
        g = cs.get
        state = as_map(g("state"))
        waiting = as_map(state.get("waiting"))
        last = as_map(as_map(g("lastState")).get("terminated"))
        out.append(
            make(ContainerState, (
                str(g("name")),
                bool(g("ready")),
                to_int(g("restartCount")),
                text(waiting.get("reason")),
                text(waiting.get("message")),
                text(last.get("message")),
                text(as_map(state.get("running")).get("startedAt")),
                text(g("image")),
                _resource_statuses(ars) if (ars := g("allocatedResourcesStatus")) else (),
            ))
        )
    return tuple(out)


class ExtendedResourceRequest(NamedTuple):
    """One ``status.extendedResourceClaimStatus.requestMappings[]`` entry: the container, the
    extended resource it asked for (``nvidia.com/gpu``) and the claim request serving it."""

    container_name: str
    resource_name: str
    request_name: str


class ExtendedResourceClaimStatus(NamedTuple):
    """``status.extendedResourceClaimStatus``: the ResourceClaim the scheduler made for the
    pod's extended-resource requests that a DeviceClass (``extendedResourceName``) serves."""

    resource_claim_name: str
    request_mappings: tuple[ExtendedResourceRequest, ...]


def _extended_status(v: Any) -> ExtendedResourceClaimStatus | None:
    if not isinstance(v, dict) or not v:
        return None
    return make(ExtendedResourceClaimStatus, (
        str(v.get("resourceClaimName") or ""),
        tuple(
            make(ExtendedResourceRequest, (str(m.get("containerName") or ""), str(m.get("resourceName") or ""), str(m.get("requestName") or "")))
            for m in dicts(v.get("requestMappings"))
        ),
    ))


@dataclass(frozen=True, slots=True)
class Pod(KubeRecord):
    """A Pod: its spec, phase, conditions, container states and resolved claim references.

    ``resource_claims``: the spec's entries with ``status_claim_name`` filled in from
    ``status.resourceClaimStatuses``. ``claim_statuses``: those statuses as (entry name,
    claim name) pairs, including any without a spec entry.
    """

    pod_spec: PodSpec
    phase: str | None
    conditions: tuple[Condition, ...]
    container_states: tuple[ContainerState, ...]
    resource_claims: tuple[PodClaimRef, ...]
    claim_statuses: tuple[tuple[str, str | None], ...]
    extended_resource_claim: ExtendedResourceClaimStatus | None = None

    def claim_for_entry(self, entry: str) -> str | None:
        """The ResourceClaim name behind the pod's ``spec.resourceClaims[]`` entry ``entry``
        (``resourceClaimName``, else ``status.resourceClaimStatuses``)."""
        for r in self.resource_claims:  # the spec's entries with the status's names filled in
            if r.name == entry:
                return r.claim_name or r.status_claim_name
        return next((n for e, n in self.claim_statuses if e == entry), None)

    @property
    def resource_health(self) -> tuple[tuple[str, str | None, ResourceHealth], ...]:
        """Every DRA device health the kubelet reports, as (claim name, request or None,
        entry) triples (``allocatedResourcesStatus`` with the pod's claim entry resolved to
        its ResourceClaim; entries whose claim the pod does not name are left out)."""
        out = []
        for cs in self.container_states:
            for rs in cs.allocated_resources_status:
                ref = rs.claim_request
                claim = self.claim_for_entry(ref[0]) if ref else None
                if claim is None:
                    continue
                out.extend((claim, ref[1], h) for h in rs.resources)  # type: ignore[index]
        return tuple(out)

    @property
    def node_name(self) -> str | None:
        return self.pod_spec.node_name

    @property
    def tolerations(self) -> tuple[Toleration, ...]:
        return self.pod_spec.tolerations

    @property
    def containers(self) -> tuple[ContainerState, ...]:
        """The container states (``status.containerStatuses``)."""
        return self.container_states

    @property
    def images(self) -> tuple[str, ...]:
        """Images of the app containers (``spec.containers[].image``)."""
        return tuple(c.image for c in self.pod_spec.containers if c.image)

    @property
    def commands(self) -> tuple[str, ...]:
        """Every app container's ``command`` then ``args``, in order."""
        return tuple(x for c in self.pod_spec.containers for x in (*c.command, *c.args))

    @property
    def claim_names(self) -> list[str]:
        """Names of the ResourceClaims the pod uses (in its namespace): ``resourceClaimName``
        entries, then claims generated from templates (``resourceClaimStatuses``)."""
        names = [r.claim_name for r in self.pod_spec.resource_claims if r.claim_name]
        names += [n for _, n in self.claim_statuses if n]
        if self.extended_resource_claim and self.extended_resource_claim.resource_claim_name:
            names.append(self.extended_resource_claim.resource_claim_name)
        return list(dict.fromkeys(names))

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def ready(self) -> bool:
        return self.phase == "Running" and all(c.ready for c in self.container_states)

    def condition(self, ctype: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == ctype), None)

    @property
    def is_dra_kubelet_plugin(self) -> bool:
        """A DRA kubelet-plugin pod (NVIDIA driver chart labels or the usual pod name)."""
        if any("kubelet-plugin" in v for v in self.labels.values()):
            return True
        return "kubelet-plugin" in self.name

    @property
    def is_gpu_kubelet_plugin(self) -> bool:
        """The NVIDIA GPU DRA driver's kubelet plugin (``gpu`` in a kubelet-plugin pod's name)."""
        return self.is_dra_kubelet_plugin and "gpu" in self.name

    @property
    def is_container_toolkit(self) -> bool:
        return "container-toolkit" in self.name or any("container-toolkit" in v for v in self.labels.values())


def parse_pod(obj: dict[str, Any]) -> Pod:
    spec = parse_pod_spec(obj.get("spec"))
    status = as_map(obj.get("status"))
    statuses = tuple(
        (str(s.get("name")), text(s.get("resourceClaimName"))) for s in dicts(status.get("resourceClaimStatuses"))
    )
    refs = spec.resource_claims
    if statuses:
        by_name = dict(statuses)
        refs = tuple(r._replace(status_claim_name=by_name.get(r.name)) for r in refs)
    return Pod(
        *meta_fields(obj, namespaced=True),
        spec,
        text(status.get("phase")),
        conditions(status.get("conditions")),
        _container_states(status.get("containerStatuses")),
        refs,
        statuses,
        _extended_status(status.get("extendedResourceClaimStatus")),
    )  # positional, in field order (pod_spec, phase, conditions, container_states, resource_claims, claim_statuses, extended)


# --- Event --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event(KubeRecord):
    """One Event, either shape. ``first``/``last``: RFC 3339 text; ``count`` >= 1."""

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


def parse_event(obj: dict[str, Any]) -> Event:
    # core/v1 names it involvedObject; events.k8s.io/v1 names it regarding.
    inv = as_map(obj.get("involvedObject")) or as_map(obj.get("regarding"))
    series = as_map(obj.get("series"))
    source = as_map(obj.get("source"))
    first = text(obj.get("firstTimestamp") or obj.get("eventTime") or obj.get("deprecatedFirstTimestamp"))
    last = text(series.get("lastObservedTime") or obj.get("lastTimestamp") or obj.get("deprecatedLastTimestamp")) or first
    count = to_int(series.get("count") or obj.get("count") or obj.get("deprecatedCount") or 1, 1)
    return Event(
        *meta_fields(obj, namespaced=True),
        involved_kind=text(inv.get("kind")),
        involved_namespace=text(inv.get("namespace")),
        involved_name=text(inv.get("name")),
        involved_uid=text(inv.get("uid")),
        reason=str(obj.get("reason") or ""),
        message=str(obj.get("message") or obj.get("note") or ""),
        type=str(obj.get("type") or ""),
        first=first,
        last=last,
        count=count,
        component=text(source.get("component") or obj.get("reportingComponent") or obj.get("reportingController")),
        host=text(source.get("host") or as_map(obj.get("deprecatedSource")).get("host")),
    )


# --- ConfigMap, PriorityClass, ClusterRole ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigMap(KubeRecord):
    """A ConfigMap's ``data`` (key -> text). What the GPU stack keeps there (mig-parted
    layouts, device plugin sharing, Kueue's configuration) is read by ``records.config``."""

    data: Mapping[str, str]


def parse_config_map(obj: dict[str, Any]) -> ConfigMap:
    return ConfigMap(*meta_fields(obj, namespaced=True), data=str_map(obj.get("data")))


@dataclass(frozen=True, slots=True)
class Namespace(KubeRecord):
    """A Namespace: its labels (``KubeRecord.labels``) and ``metadata.annotations`` (string
    values only), where platform teams record who owns it (the chargeback's team label)."""

    NAMESPACED: ClassVar[bool] = False

    annotations: Mapping[str, str]


def parse_namespace(obj: dict[str, Any]) -> Namespace:
    return Namespace(*meta_fields(obj, namespaced=False), annotations=str_map(as_map(obj.get("metadata")).get("annotations")))


@dataclass(frozen=True, slots=True)
class PriorityClass(KubeRecord):
    """A PriorityClass: ``value`` and ``preemptionPolicy`` (None when unset: the API's default
    is ``PreemptLowerPriority``)."""

    NAMESPACED: ClassVar[bool] = False

    value: int | None
    preemption_policy: str | None


def parse_priority_class(obj: dict[str, Any]) -> PriorityClass:
    value = obj.get("value")
    return PriorityClass(*meta_fields(obj, namespaced=False),
                         value=value if isinstance(value, int) and not isinstance(value, bool) else None,
                         preemption_policy=text(obj.get("preemptionPolicy")) or None)


class PolicyRule(NamedTuple):
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClusterRole(KubeRecord):
    """A ClusterRole's ``rules[]``."""

    NAMESPACED: ClassVar[bool] = False

    rules: tuple[PolicyRule, ...]

    def allows(self, group: str, resource: str) -> bool:
        """Some rule names ``group`` (or ``*``) and ``resource`` (or ``*``)."""
        return any(
            (group in r.api_groups or "*" in r.api_groups) and (resource in r.resources or "*" in r.resources)
            for r in self.rules
        )


def parse_cluster_role(obj: dict[str, Any]) -> ClusterRole:
    rules = tuple(
        PolicyRule(strings(r.get("apiGroups")), strings(r.get("resources")), strings(r.get("verbs")))
        for r in dicts(obj.get("rules"))
    )
    return ClusterRole(*meta_fields(obj, namespaced=False), rules=rules)
