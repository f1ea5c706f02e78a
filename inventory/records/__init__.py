"""The parse layer: every kind Claimscope reads, as one frozen typed record per object.

Pure: no Django. ``parse_object(obj)`` is the single entry point: a raw object of any served
version (normalised to ``resource.k8s.io/v1`` first, ``inventory.normalize``) becomes the
record of its kind, or None for a kind the product does not read. Rows, the diagnosis, the
readiness checklist and the migration planner read these records; no other module digs
meaning out of a cluster object's raw JSON (``tests/test_parse_layer_is_the_only_reader.py``).

Modules, one per API group family: ``base`` (identity, metadata, taints, tolerations,
conditions), ``core`` (Node, Pod, Event, ConfigMap, PriorityClass, ClusterRole), ``apps``
(DaemonSet, Deployment, StatefulSet, Job, CronJob), ``resource`` (DeviceClass,
ResourceSlice and its devices, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule),
``ecosystem`` (GPU Operator, NIM, KServe, Kueue, Volcano, Prometheus Operator resources),
``config`` (what ConfigMap payloads hold, read on demand), ``slim`` (raw objects cut to what
the readiness checklist reads). Records are frozen slots dataclasses; their small parts
(taints, tolerations, conditions, requests...) NamedTuples.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from inventory.normalize import UnknownAPIVersion, normalize

from .apps import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    PodController,
    StatefulSet,
    parse_cron_job,
    parse_daemon_set,
    parse_deployment,
    parse_job,
    parse_stateful_set,
)
from .base import (
    Condition,
    KubeRecord,
    NodeSelectorTerm,
    OwnerRef,
    SelectorRequirement,
    Taint,
    Toleration,
    as_map,
    meta_fields,
)
from .core import (
    ClusterRole,
    ConfigMap,
    Container,
    ContainerState,
    Event,
    ExtendedResourceClaimStatus,
    ExtendedResourceRequest,
    Namespace,
    Node,
    Pod,
    PodClaimRef,
    PodSpec,
    PolicyRule,
    PriorityClass,
    ResourceHealth,
    ResourceStatus,
    parse_cluster_role,
    parse_config_map,
    parse_event,
    parse_namespace,
    parse_node,
    parse_pod,
    parse_pod_spec,
    parse_priority_class,
)
from .ecosystem import (
    IDENTITY_ONLY,
    ClusterPolicy,
    ClusterQueue,
    ClusterServingRuntime,
    GPUCluster,
    InferenceService,
    Kueue,
    NIMCache,
    NIMService,
    NVIDIADriver,
    OperatorResource,
    PrometheusRule,
    Queue,
    ResourceFlavor,
    ServingRuntime,
    parse_cluster_policy,
    parse_gpu_cluster,
    parse_kueue,
    parse_nvidia_driver,
    parse_prometheus_rule,
)
from .resource import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    AllocationResult,
    CapacityPolicy,
    ConsumerRef,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceStatus,
    DeviceSubRequest,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    attribute_value,
    parse_device_class,
    parse_device_taint_rule,
    parse_quantity,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
    request_summary,
)

Record = KubeRecord


def _identity_parser(cls: type[KubeRecord]) -> Callable[[dict[str, Any]], KubeRecord]:
    def parse(obj: dict[str, Any]) -> KubeRecord:
        return cls(*meta_fields(obj, namespaced=cls.NAMESPACED))

    return parse


PARSERS: dict[str, Callable[[dict[str, Any]], KubeRecord]] = {
    "Node": parse_node,
    "Pod": parse_pod,
    "Event": parse_event,
    "ConfigMap": parse_config_map,
    "PriorityClass": parse_priority_class,
    "Namespace": parse_namespace,
    "ClusterRole": parse_cluster_role,
    "DaemonSet": parse_daemon_set,
    "Deployment": parse_deployment,
    "StatefulSet": parse_stateful_set,
    "Job": parse_job,
    "CronJob": parse_cron_job,
    "DeviceClass": parse_device_class,
    "ResourceSlice": parse_resource_slice,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "DeviceTaintRule": parse_device_taint_rule,
    "ClusterPolicy": parse_cluster_policy,
    "GPUCluster": parse_gpu_cluster,
    "NVIDIADriver": parse_nvidia_driver,
    "PrometheusRule": parse_prometheus_rule,
    "Kueue": parse_kueue,
    **{cls.__name__: _identity_parser(cls) for cls in IDENTITY_ONLY},
}
"""kind -> parser of a v1-shaped raw object of that kind."""


def parse_object(obj: Any) -> KubeRecord | None:
    """The record of one raw object (any served version), or None when it is not an object
    or its ``kind`` is not one the product reads.

    Raises ``UnknownAPIVersion`` for a ``resource.k8s.io`` version this code does not know,
    and ``ValueError`` for a ResourceSlice or ResourceClaim the API server could not have
    served (no driver or pool, a device without a valid name, a claim without a namespace, a
    field holding devices or an allocation of the wrong JSON type). Other kinds never raise:
    odd fields read as absent.
    """
    if not isinstance(obj, dict):
        return None
    parse = PARSERS.get(obj.get("kind"))  # type: ignore[arg-type]
    if parse is None:
        return None
    if not isinstance(obj.get("metadata"), dict):
        return None  # not a Kubernetes object (e.g. the empty raw of a node known from slices)
    obj = normalize(obj)
    try:
        return parse(obj)
    except (TypeError, AttributeError, RecursionError) as exc:  # a shape no API server serves
        raise ValueError(f"{obj.get('kind')} {as_map(obj['metadata']).get('name')!r}: {exc}") from exc


def as_records(
    objects: Iterable[Any], errors: list[str] | None = None, *, skip_unknown_versions: bool = False,
    keep_unknown: bool = False, kinds: Collection[str] | None = None,
) -> Iterator[KubeRecord]:
    """Records of ``objects`` (raw objects or records, mixed), in order. Raw objects of kinds
    the product does not read are left out, or with ``keep_unknown`` given as their identity
    (``parse_identity``: e.g. a ReplicaSet that owns a pod); one that cannot be parsed
    (``ValueError``) is left out and described in ``errors`` when given, else raises.
    ``UnknownAPIVersion`` raises unless ``skip_unknown_versions`` (then it is an error like
    the others). ``kinds``: only objects of these kinds (the others are not parsed)."""
    for obj in objects:
        if isinstance(obj, KubeRecord):
            if kinds is None or obj.kind in kinds:
                yield obj
            continue
        if kinds is not None and (not isinstance(obj, dict) or obj.get("kind") not in kinds):
            continue
        try:
            rec = parse_object(obj)
        except UnknownAPIVersion:
            if not skip_unknown_versions:
                raise
            rec = None
            if errors is not None:
                errors.append(f"{obj.get('kind')} {as_map(obj.get('metadata')).get('name')}: unknown API version {obj.get('apiVersion')!r}")
        except ValueError as exc:
            if errors is None:
                raise
            meta = as_map(obj.get("metadata")) if isinstance(obj, dict) else {}
            errors.append(f"{obj.get('kind')} {meta.get('namespace') or ''}/{meta.get('name')}: {exc}")
            continue
        if rec is not None:
            yield rec
        elif keep_unknown and isinstance(obj, dict) and obj.get("kind") and obj.get("kind") not in PARSERS and isinstance(obj.get("metadata"), dict):
            yield parse_identity(obj)


def parse_json(text: str | bytes) -> KubeRecord | None:
    """``parse_object`` of one object's JSON text (a stored ``raw``). Raises
    ``inventory.jsonlist.JSONError`` when the text is not JSON."""
    from inventory import jsonlist

    return parse_object(jsonlist.decode(text))


def raw_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """A raw object's ``metadata`` map as it is (empty when missing): for the sync's own
    bookkeeping of identities and resourceVersions before anything is parsed."""
    return as_map(obj.get("metadata")) if isinstance(obj, dict) else {}


def parse_identity(obj: dict[str, Any], namespaced: bool | None = None) -> KubeRecord:
    """Only the identity and metadata of a raw object of any kind (``KubeRecord``); never
    raises. For what needs no more (a generic stored object's row, an owner that is present).
    ``namespaced``: the kind's scope; None (unknown) keeps the namespace as written."""
    return KubeRecord(*meta_fields(obj if isinstance(obj, dict) else {}, namespaced))


__all__ = [
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "PARSERS",
    "AllocationResult",
    "CapacityPolicy",
    "ClusterPolicy",
    "ClusterQueue",
    "ClusterRole",
    "ClusterServingRuntime",
    "Condition",
    "ConfigMap",
    "ConsumerRef",
    "Container",
    "ContainerState",
    "CounterConsumption",
    "CounterSet",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Device",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceStatus",
    "DeviceSubRequest",
    "DeviceTaintRule",
    "Event",
    "ExtendedResourceClaimStatus",
    "ExtendedResourceRequest",
    "GPUCluster",
    "InferenceService",
    "Job",
    "KubeRecord",
    "Kueue",
    "NIMCache",
    "NIMService",
    "NVIDIADriver",
    "Namespace",
    "Node",
    "NodeSelectorTerm",
    "OperatorResource",
    "OwnerRef",
    "Pod",
    "PodClaimRef",
    "PodController",
    "PodSpec",
    "PolicyRule",
    "PriorityClass",
    "PrometheusRule",
    "Queue",
    "Record",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceFlavor",
    "ResourceHealth",
    "ResourceSlice",
    "ResourceStatus",
    "SelectorRequirement",
    "ServingRuntime",
    "StatefulSet",
    "Taint",
    "Toleration",
    "as_map",
    "as_records",
    "attribute_value",
    "parse_device_class",
    "parse_event",
    "parse_identity",
    "parse_json",
    "parse_node",
    "parse_object",
    "parse_pod",
    "parse_pod_spec",
    "parse_quantity",
    "parse_resource_claim",
    "parse_resource_slice",
    "raw_metadata",
    "request_summary",
]
