"""Records of the GPU stack's and its neighbours' custom resources: GPU Operator
(ClusterPolicy, GPUCluster, NVIDIADriver), NIM Operator (NIMService, NIMCache), KServe
(InferenceService, ServingRuntime, ClusterServingRuntime), Kueue (ClusterQueue,
ResourceFlavor, Kueue), Volcano (Queue) and Prometheus Operator (PrometheusRule).

Pure: no Django; never raises on odd cluster text. Most carry only identity (and
``api_version``, which tells e.g. a Kueue ClusterQueue from another product's); the fields
below are what the readiness checklist and the migration planner read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from inventory.kube import image_tag

from .base import KubeRecord, as_map, dicts, meta_fields, text
from .config import kueue_device_class_names

Pin = tuple[str, str | None]


def component_pins(spec: Any, path: str = "spec") -> Iterator[Pin]:
    """(where, tag) for every block of an operator CR's spec that names a ``version`` or an
    ``image`` (as GPU Operator CRs spell their components): the version, else the image's tag
    (None: untagged, which means latest)."""
    if isinstance(spec, dict):
        if "image" in spec or "version" in spec:
            version = spec.get("version")
            image = spec.get("image")
            if isinstance(version, str | int | float) and str(version):
                yield path, str(version)
            elif isinstance(image, str) and image:
                yield path, image_tag(image)
        for k, v in spec.items():
            if isinstance(v, dict | list):
                yield from component_pins(v, f"{path}.{k}")
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            yield from component_pins(v, f"{path}[{i}]")


@dataclass(frozen=True, slots=True)
class OperatorResource(KubeRecord):
    """A GPU Operator CR. ``pins``: (where in the spec, version or tag) of each component."""

    NAMESPACED: ClassVar[bool] = False

    pins: tuple[Pin, ...]


@dataclass(frozen=True, slots=True)
class ClusterPolicy(OperatorResource):
    """``device_plugin_config``: ``spec.devicePlugin.config.name`` (the ConfigMap with the
    device plugin's sharing config). ``mig_strategy``: ``spec.mig.strategy``."""

    device_plugin_config: str | None
    mig_strategy: str | None


@dataclass(frozen=True, slots=True)
class GPUCluster(OperatorResource):
    """``compute_domains_enabled``: ``spec.draDriver.computeDomains.enabled`` is true."""

    compute_domains_enabled: bool


@dataclass(frozen=True, slots=True)
class NVIDIADriver(OperatorResource):
    pass


def parse_cluster_policy(obj: dict[str, Any]) -> ClusterPolicy:
    spec = as_map(obj.get("spec"))
    return ClusterPolicy(
        *meta_fields(obj, namespaced=False),
        pins=tuple(component_pins(obj.get("spec"))),
        device_plugin_config=text(as_map(as_map(spec.get("devicePlugin")).get("config")).get("name")) or None,
        mig_strategy=text(as_map(spec.get("mig")).get("strategy")),
    )


def parse_gpu_cluster(obj: dict[str, Any]) -> GPUCluster:
    spec = as_map(obj.get("spec"))
    domains = as_map(as_map(spec.get("draDriver")).get("computeDomains"))
    return GPUCluster(*meta_fields(obj, namespaced=False), pins=tuple(component_pins(obj.get("spec"))),
                      compute_domains_enabled=domains.get("enabled") is True)


def parse_nvidia_driver(obj: dict[str, Any]) -> NVIDIADriver:
    return NVIDIADriver(*meta_fields(obj, namespaced=False), pins=tuple(component_pins(obj.get("spec"))))


@dataclass(frozen=True, slots=True)
class PrometheusRule(KubeRecord):
    """``exprs``: every ``spec.groups[].rules[].expr`` ("" for a rule without one)."""

    exprs: tuple[str, ...]


def parse_prometheus_rule(obj: dict[str, Any]) -> PrometheusRule:
    groups = dicts(as_map(obj.get("spec")).get("groups"))
    return PrometheusRule(*meta_fields(obj, namespaced=True),
                          exprs=tuple(str(r.get("expr", "")) for g in groups for r in dicts(g.get("rules"))))


@dataclass(frozen=True, slots=True)
class Kueue(KubeRecord):
    """The Kueue operator's ``Kueue`` object. ``has_config``: ``spec.config`` is set;
    ``device_classes``: DeviceClass names its ``deviceClassMappings`` map to quota."""

    NAMESPACED: ClassVar[bool] = False

    has_config: bool
    device_classes: frozenset[str]


def parse_kueue(obj: dict[str, Any]) -> Kueue:
    config = as_map(as_map(obj.get("spec")).get("config"))
    return Kueue(*meta_fields(obj, namespaced=False), has_config=bool(config),
                 device_classes=frozenset(kueue_device_class_names(config)))


# Kinds read for their identity and apiVersion only.


@dataclass(frozen=True, slots=True)
class ClusterQueue(KubeRecord):
    NAMESPACED: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class ResourceFlavor(KubeRecord):
    NAMESPACED: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class Queue(KubeRecord):
    """A Volcano ``Queue`` (``scheduling.volcano.sh``), or another product's kind of that name."""

    NAMESPACED: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class InferenceService(KubeRecord):
    pass


@dataclass(frozen=True, slots=True)
class ServingRuntime(KubeRecord):
    pass


@dataclass(frozen=True, slots=True)
class ClusterServingRuntime(KubeRecord):
    NAMESPACED: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class NIMService(KubeRecord):
    pass


@dataclass(frozen=True, slots=True)
class NIMCache(KubeRecord):
    pass


IDENTITY_ONLY: tuple[type[KubeRecord], ...] = (
    ClusterQueue, ResourceFlavor, Queue, InferenceService, ServingRuntime, ClusterServingRuntime, NIMService, NIMCache,
)
