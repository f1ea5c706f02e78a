"""The shared Kubernetes vocabulary: object refs, versions, times, identities, driver names.

Pure: no Django, no cluster JSON. Every app imports these from here (there is one
``ObjectRef``, one ``parse_version``, one ``GPU_DRIVER``); the parse layer
(``inventory.records``) is the only code that reads a cluster object's raw fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

# --- names the NVIDIA GPU stack and DRA use -----------------------------------------------------

DRA_GROUP = "resource.k8s.io"
GPU_DRIVER = "gpu.nvidia.com"
"""The NVIDIA GPU DRA driver's name (``ResourceSlice.spec.driver``, attribute domain)."""
GPU_CLASS = "gpu.nvidia.com"
"""DeviceClass of whole GPUs the NVIDIA DRA driver chart installs (same text as the driver)."""
MIG_CLASS = "mig.nvidia.com"
"""DeviceClass of MIG instances the NVIDIA DRA driver chart installs."""
GPU_RESOURCE = "nvidia.com/gpu"
"""Device-plugin extended resource of a whole GPU (or a MIG slice under ``mig.strategy: single``)."""
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""Device-plugin extended resources of MIG profiles (``mixed`` strategy): ``nvidia.com/mig-1g.18gb``."""
DEVICECLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"
"""Extended resources backed by a DeviceClass (DRAExtendedResource)."""
PRODUCT_LABEL = "nvidia.com/gpu.product"
"""GPU Feature Discovery node label: product name with dashes for spaces (``NVIDIA-H200-NVL``)."""
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
"""GPU Feature Discovery node label: memory per GPU in MiB."""
CONTROL_PLANE_COMPONENTS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")


def is_gpu_resource(name: str) -> bool:
    """``nvidia.com/gpu`` or ``nvidia.com/mig-*``: the device plugin's GPU resources."""
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


def has_gpu_labels(labels: Mapping[str, str]) -> bool:
    """GPU Feature Discovery labels say the node carries NVIDIA GPUs (``nvidia.com/gpu.present``
    or a positive ``nvidia.com/gpu.count``), whichever stack, DRA or device plugin, serves them."""
    if labels.get("nvidia.com/gpu.present") == "true":
        return True
    count = labels.get("nvidia.com/gpu.count", "")
    return isinstance(count, str) and count.isdigit() and int(count) > 0


def image_tag(image: str) -> str | None:
    """The tag of an image reference, ``@<digest>`` for a digest, None when untagged (which
    means ``latest``): ``nvcr.io/nvidia/driver:580.95.05`` -> ``580.95.05``."""
    if "@" in image:
        return "@" + image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


# --- identity -----------------------------------------------------------------------------------


class Named(Protocol):
    kind: str
    namespace: str | None
    name: str


@dataclass(frozen=True, order=True, slots=True)
class ObjectRef:
    """Which object a fact is about: kind, namespace (None for cluster-scoped kinds), name.

    ``str()``: ``Kind namespace/name``, or ``Kind name`` without a namespace.
    """

    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}

    @classmethod
    def of(cls, record: Named) -> ObjectRef:
        """The ref of a parsed record (anything with ``kind``, ``namespace``, ``name``)."""
        return cls(record.kind, record.namespace or None, record.name)


def identity(kind: str, namespace: str, name: str, uid: str) -> str:
    """``uid``, or the stand-in ``kind/namespace/name`` when it is empty (objects some real
    dumps carry without ``metadata.uid``, e.g. edited evidence files, still reconcile)."""
    return uid or f"{kind}/{namespace}/{name}"


def object_uid(obj: dict[str, Any]) -> str:
    """``metadata.uid`` of a raw object, or the ``identity`` stand-in when it has none."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    uid = meta.get("uid")
    return identity(str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")),
                    uid if isinstance(uid, str) else "")


# --- versions and times -------------------------------------------------------------------------

Version = tuple[int, int, int]


def parse_version(text: str | None) -> Version | None:
    """A Kubernetes or image version as ``(major, minor, patch)``; None when unreadable.

    ``v1.34.1-gke.100`` -> (1, 34, 1); ``1.35`` -> (1, 35, 0); an image reference
    ``registry.k8s.io/kube-scheduler:v1.32.0`` -> (1, 32, 0) (its tag). Compare minor
    versions with ``v[:2]``.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    s = text.strip()
    s = s.rsplit(":", 1)[-1] if ":" in s else s
    s = s.lstrip("v")
    core = s.split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]):
        return None
    nums = [int(p) for p in parts[:3]] + [0] * (3 - len(parts[:3]))
    return (nums[0], nums[1], nums[2])


def is_unix_time(seconds: float) -> bool:
    """Whether Unix ``seconds`` is a time a datetime can hold (years 1 to 9999; never NaN):
    a metric sample stamped outside it is malformed, not a reason to fail the telemetry."""
    return -62135596800.0 <= seconds <= 253402300799.0


def parse_time(value: Any) -> datetime | None:
    """RFC 3339 text (``2026-11-18T10:17:06Z``, fractional seconds allowed) as an aware UTC
    datetime; None for anything else, including impossible dates (``2026-02-30T00:00:00Z``)."""
    if not isinstance(value, str) or len(value) < 19:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def feature_gates(args: Iterable[str]) -> dict[str, bool]:
    """``--feature-gates=A=true,B=false`` (or ``--feature-gates A=true``) in a component's
    command line -> ``{"A": True, "B": False}``; later flags win."""
    gates: dict[str, bool] = {}
    items = [a for a in args if isinstance(a, str)]
    for i, a in enumerate(items):
        value = None
        if a.startswith("--feature-gates="):
            value = a.split("=", 1)[1]
        elif a == "--feature-gates" and i + 1 < len(items):
            value = items[i + 1]
        if value is None:
            continue
        for item in value.split(","):
            name, _, v = item.partition("=")
            if name.strip():
                gates[name.strip()] = v.strip().lower() == "true"
    return gates
