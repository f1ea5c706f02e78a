"""Generate a GPU fleet as raw Kubernetes objects, in the shapes a real cluster returns.

Pure: no Django, no clock, no network. Deterministic for a given ``seed`` and ``now``: the
same arguments always give the same objects (uids are ``uuid5`` of seed and name, random
choices come from ``random.Random(seed)``).

Used by the re-sync benchmark (``generate_fleet`` + ``mutate_claims``), the ``generate_fleet``
management command and the demo cluster (``devtools.demo`` drives ``ClusterBuilder``).

Shapes and where they come from (facts read from public sources and our own readings, listed
with repository, commit and licence in ``demo/SOURCES.md``; no file copied):

- Node labels of GPU Feature Discovery (``nvidia.com/gpu.product``, ``gpu.memory`` in MiB,
  ``gpu.count``, ``mig.config``, ``mig.config.state``, ``cuda.driver-version.full``) as in the
  diagnosis cases' nodes (``tests/fixtures/cases``); MIG configuration names from the GPU Operator's default mig-parted ConfigMap
  (``all-disabled``, ``all-1g.18gb``, ``all-balanced``...).
- ResourceSlice of driver ``gpu.nvidia.com``: one per node, pool = node name,
  ``resourceSliceCount: 1``, owner reference to the Node; whole-GPU attributes exactly as in the
  real aicr H100 slices (``addressingMode``, ``architecture``, ``brand``,
  ``cudaComputeCapability``, ``cudaDriverVersion``, ``driverVersion`` as a version,
  ``productName``, ``resource.kubernetes.io/pciBusID``, ``resource.kubernetes.io/pcieRoot``,
  ``type``, ``uuid``) and capacity ``memory``.
- Static MIG devices: name ``gpu-<minor>-mig-<profile without dots>-<GI profile id>-<placement
  start>``, the parent's attributes plus ``parentUUID``, ``profile`` and a ``MIG-`` ``uuid``;
  capacities ``memory``, ``multiprocessors``, engine counts and one ``memorySlice<N>`` per
  memory slice occupied. Profile ids, placements, sizes and memory come from
  ``inventory.mig`` (``inventory/data/mig_profiles.yaml``); a GPU in MIG mode publishes only
  its MIG devices, as the NVIDIA driver does for static MIG.
- Memory the driver reports (capacity ``memory``): H100 80GB HBM3 ``81559Mi`` (real aicr
  slice), H200 NVL ``143771Mi`` = 140.4 GiB (real H200 reading), RTX PRO 6000 Blackwell Server
  Edition ``97887Mi`` = 95.6 GiB.
- ResourceClaims generated from ResourceClaimTemplates: owner reference to the Pod, annotation
  ``resource.kubernetes.io/pod-claim-name``, finalizer ``resource.kubernetes.io/delete-protection``
  once allocated; allocation results name devices of the fleet (never one device twice);
  ``reservedFor`` names pods that exist with their uids.
- Events in the two shapes of ``kubectl get events -o yaml``: kube-scheduler's events.k8s.io
  events (``eventTime``, ``series``; ``count``/``firstTimestamp``/``lastTimestamp`` empty) and
  kubelet core events (``count``, ``firstTimestamp``, ``lastTimestamp``, ``source.host``).

Figures not read from a real device are marked where they are defined (MIG SM and engine
counts of the RTX PRO 6000, PCI addresses of the H200 NVL and RTX PRO servers).
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from inventory import mig
from inventory.kube import GPU_DRIVER

POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
NODE_POOL_LABEL = "karpenter.sh/nodepool"
FLEET_EPOCH = datetime(2026, 11, 12, 16, 0, 0, tzinfo=UTC)
_UID_NAMESPACE = uuid.UUID("2f0d6c1e-8a43-5b7e-9d21-6c4b3a1f0e57")
# Characters Kubernetes uses for generateName suffixes (no vowels, no confusable digits).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class MigEngines:
    """Per-profile SM and engine counts (``nvidia-smi mig -lgip`` columns SM, CE, DEC, ENC, JPEG, OFA)."""

    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int


# GH100 (H100 80GB, H200, H200 NVL): `nvidia-smi mig -lgip` of a real H200 (our reading,
# 2026-11-30; demo/SOURCES.md); H100 80GB profiles have the same SM/engine split.
_GH100_ENGINES = {
    "1g": MigEngines(16, 1, 1, 0, 1, 0),
    "1g+me": MigEngines(16, 1, 1, 0, 1, 1),
    "1g.2": MigEngines(26, 1, 1, 0, 1, 0),  # 1g with two memory slices (1g.35gb / 1g.20gb)
    "2g": MigEngines(32, 2, 2, 0, 2, 0),
    "3g": MigEngines(60, 3, 3, 0, 3, 0),
    "4g": MigEngines(64, 4, 4, 0, 4, 0),
    "7g": MigEngines(132, 8, 7, 0, 7, 1),
}
# GB202 (RTX PRO 6000 Blackwell Server Edition, 188 SMs): a quarter of the SMs per slice; engine
# counts estimated from the card's totals. Not read from a real device.
_GB202_ENGINES = {
    "1g": MigEngines(46, 1, 1, 1, 1, 0),
    "2g": MigEngines(94, 2, 2, 2, 2, 0),
    "4g": MigEngines(188, 4, 4, 4, 4, 1),
}


@dataclass(frozen=True)
class GpuModel:
    """One GPU product as the driver and GPU Feature Discovery describe it.

    ``memory_mi``: capacity ``memory`` in MiB (also the ``nvidia.com/gpu.memory`` label).
    ``pci``: (``pciBusID``, ``pcieRoot``) per GPU minor, as the driver publishes them.
    """

    key: str
    product: str
    label: str
    memory_mi: int
    architecture: str
    family: str
    compute: tuple[int, int]
    engines: Mapping[str, MigEngines]
    pci: tuple[tuple[str, str], ...]
    cpu: int
    memory_ki: int

    def engines_for(self, profile: mig.Profile) -> MigEngines:
        g = profile.name.split(".", 1)[0]
        if profile.name.endswith("+me") and g + "+me" in self.engines:
            return self.engines[g + "+me"]
        if g == "1g" and profile.size == 2 and "1g.2" in self.engines:
            return self.engines["1g.2"]
        return self.engines[g]


_P5_PCI = tuple(
    (f"0000:{b}:00.0", f"pci0000:{r}")
    for b, r in zip(("53", "64", "75", "86", "97", "a8", "b9", "ca"), ("44", "55", "66", "77", "88", "99", "aa", "bb"), strict=True)
)  # real aicr p5.48xlarge slice
_NVL_PCI = tuple(
    (f"0000:{b}:00.0", f"pci0000:{r}")
    for b, r in zip(("1b", "29", "3a", "4c", "9b", "a9", "ba", "cc"), ("15", "22", "33", "44", "95", "a2", "b3", "c4"), strict=True)
)  # made up, PCIe server layout
_RTX_PCI = tuple(
    (f"0000:{b}:00.0", f"pci0000:{r}")
    for b, r in zip(("01", "41", "81", "c1", "21", "61", "a1", "e1"), ("00", "40", "80", "c0", "20", "60", "a0", "e0"), strict=True)
)  # made up, PCIe server layout

GPU_MODELS: Mapping[str, GpuModel] = {
    "h200-nvl": GpuModel(
        "h200-nvl", "NVIDIA H200 NVL", "NVIDIA-H200-NVL", 143771, "Hopper", "hopper", (9, 0),
        _GH100_ENGINES, _NVL_PCI, 192, 2113371988,
    ),
    "h100": GpuModel(
        "h100", "NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3", 81559, "Hopper", "hopper", (9, 0),
        _GH100_ENGINES, _P5_PCI, 192, 2113371988,
    ),
    "rtx-pro-6000": GpuModel(
        "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", 97887, "Blackwell", "blackwell", (12, 0),
        _GB202_ENGINES, _RTX_PCI, 64, 527946672,
    ),
}


@dataclass(frozen=True)
class NodeSpec:
    """One GPU node to generate.

    ``mig``: GPU minor -> ((profile name, placement start), ...) for GPUs in MIG mode.
    ``slice``: ``"full"`` (publish devices), ``"empty"`` (a slice with ``devices: []``) or
    ``"none"`` (no slice at all). ``age``: how long before ``now`` the node joined.
    """

    name: str
    model: str
    gpus: int
    pool: str
    mig: Mapping[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    mig_config: str = "all-disabled"
    tainted: bool = True
    driver: str = "580.105.08"
    kubelet: str = "v1.36.2"
    slice: str = "full"
    unschedulable: bool = False
    age: timedelta = timedelta(days=37)
    address: str = ""


@dataclass(frozen=True)
class DeviceInfo:
    """A device the builder published: enough to allocate it and to write DCGM series."""

    node: str
    pool: str
    name: str
    type: str
    uuid: str
    parent_uuid: str
    minor: int
    product: str
    profile: str
    placement: int
    memory_mi: int
    pci_bus_id: str
    driver_version: str


def _ts(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def driver_version_attr(full: str) -> str:
    """``580.105.08`` -> ``580.105.8``: the driver publishes ``driverVersion`` as a semantic version."""
    return ".".join(str(int(p)) for p in full.split("."))


def mig_device_name(minor: int, profile: mig.Profile, placement: int) -> str:
    """``gpu-<minor>-mig-<profile without dots>-<GI profile id>-<placement start>``."""
    return f"gpu-{minor}-mig-{profile.name.replace('.', '')}-{profile.id}-{placement}"


def place_profiles(product: str, profiles: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Place MIG profiles on one GPU: largest first, each at the highest allowed free start.

    Returns ((profile, placement start), ...) sorted by placement. Raises ``ValueError`` when the
    product has no MIG table, a profile is unknown, or the profiles do not fit together.
    """
    model = mig.model_for(product)
    if model is None:
        raise ValueError(f"no MIG profile table for {product!r}")
    used: set[int] = set()
    out: list[tuple[str, int]] = []
    wanted = []
    for name in profiles:
        p = model.profile(name)
        if p is None:
            raise ValueError(f"{product} has no MIG profile {name!r}")
        wanted.append(p)
    for p in sorted(wanted, key=lambda p: -p.size):
        for start in sorted(p.placements, reverse=True):
            span = set(range(start, start + p.size))
            if max(span) < model.slices and not span & used:
                used |= span
                out.append((p.name, start))
                break
        else:
            raise ValueError(f"MIG profile {p.name} does not fit beside {sorted(out)} on {product}")
    return tuple(sorted(out, key=lambda x: x[1]))


# mig-parted ``all-balanced`` per product (GPU Operator default ConfigMap).
BALANCED = {
    "h200-nvl": ("1g.18gb", "1g.18gb", "2g.35gb", "3g.71gb"),
    "h100": ("1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"),
    "rtx-pro-6000": ("1g.24gb", "1g.24gb", "2g.48gb"),
}
SMALLEST = {"h200-nvl": "1g.18gb", "h100": "1g.10gb", "rtx-pro-6000": "1g.24gb"}


def all_smallest(model_key: str) -> tuple[tuple[str, int], ...]:
    """The ``all-1g.*`` layout: as many of the smallest profile as the placements allow."""
    model = GPU_MODELS[model_key]
    table = mig.model_for(model.product)
    assert table is not None
    p = table.profile(SMALLEST[model_key])
    assert p is not None
    return place_profiles(model.product, [p.name] * len(p.placements))


def balanced(model_key: str) -> tuple[tuple[str, int], ...]:
    return place_profiles(GPU_MODELS[model_key].product, BALANCED[model_key])


class ClusterBuilder:
    """Accumulates objects of one cluster; every method returns the object(s) it added.

    ``rng`` drives name suffixes; uids are ``uuid5(seed, kind/namespace/name)``; resourceVersions
    count up from ``rv_base`` in creation order, as strings.
    """

    def __init__(self, seed: int = 0, now: datetime = FLEET_EPOCH, rv_base: int | None = None) -> None:
        self.seed = seed
        self.now = now
        self.rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
        # Derived from ``now`` (milliseconds) so a later snapshot of the same objects carries
        # newer resourceVersions, as a real cluster's would.
        self._rv = rv_base if rv_base is not None else max(int(now.timestamp() * 1000) - 1_700_000_000_000, 0) * 100
        self.objects: list[dict[str, Any]] = []
        self.devices: dict[tuple[str, str], DeviceInfo] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.node_specs: dict[str, NodeSpec] = {}
        self.taken: set[tuple[str, str]] = set()
        self.names: set[tuple[str, str]] = set()  # (namespace, name) of the pods made so far
        self._ip = 10

    # -- identity and time -------------------------------------------------------------------
    def uid(self, kind: str, namespace: str, name: str) -> str:
        return str(uuid.uuid5(_UID_NAMESPACE, f"{self.seed}/{kind}/{namespace}/{name}"))

    def rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def ago(self, **delta: float) -> datetime:
        return self.now - timedelta(**delta)

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(_SUFFIX_ALPHABET) for _ in range(n))

    def pod_name(self, namespace: str, prefix: str) -> str:
        """``prefix-xxxxx`` not yet used in ``namespace``: as the API server, which draws again
        when a generated name is taken (a 5,000-node DaemonSet meets a repeat otherwise)."""
        while (namespace, name := f"{prefix}-{self.suffix()}") in self.names:
            pass
        self.names.add((namespace, name))
        return name

    def container_id(self, namespace: str, pod: str, container: str) -> str:
        """``containerd://`` + 64 hex digits, stable per pod and container."""
        return "containerd://" + (self.uid("ctr", namespace, pod + "/" + container) + self.uid("ctr2", namespace, pod + "/" + container)).replace("-", "")[:64]

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.objects.append(obj)
        return obj

    # -- cluster-scoped objects ----------------------------------------------------------------
    def device_classes(self, *, vfio: bool = True, created: datetime | None = None) -> list[dict[str, Any]]:
        """DeviceClasses ``gpu.nvidia.com``, ``mig.nvidia.com`` (and ``vfio.gpu.nvidia.com``) as the
        GPU Operator renders them (gpu-operator golden files)."""
        created = created or self.ago(days=40)
        out = []
        for name, typ in (("gpu.nvidia.com", "gpu"), ("mig.nvidia.com", "mig"), ("vfio.gpu.nvidia.com", "vfio")):
            if typ == "vfio" and not vfio:
                continue
            out.append(
                self.add(
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "DeviceClass",
                        "metadata": {
                            "creationTimestamp": _ts(created),
                            "generation": 1,
                            "name": name,
                            "resourceVersion": self.rv(),
                            "uid": self.uid("DeviceClass", "", name),
                        },
                        "spec": {
                            "selectors": [
                                {
                                    "cel": {
                                        "expression": f"device.driver == 'gpu.nvidia.com' && "
                                        f"device.attributes['gpu.nvidia.com'].type == '{typ}'"
                                    }
                                }
                            ]
                        },
                    }
                )
            )
        return out

    def node(self, spec: NodeSpec) -> dict[str, Any]:
        """A Node with GPU Feature Discovery labels, Ready condition, GPU taint and its slice."""
        model = GPU_MODELS[spec.model]
        created = self.now - spec.age
        self._ip += 1
        address = spec.address or f"10.40.{self._ip // 250}.{self._ip % 250 + 2}"
        major = spec.driver.split(".", 1)[0]
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": spec.name,
            "kubernetes.io/os": "linux",
            NODE_POOL_LABEL: spec.pool,
            "nvidia.com/cuda.driver-version.full": spec.driver,
            "nvidia.com/cuda.driver-version.major": major,
            "nvidia.com/cuda.runtime-version.full": "13.0",
            "nvidia.com/gpu.compute.major": str(model.compute[0]),
            "nvidia.com/gpu.compute.minor": str(model.compute[1]),
            "nvidia.com/gpu.count": str(spec.gpus),
            "nvidia.com/gpu.deploy.dra-driver": "true",
            "nvidia.com/gpu.family": model.family,
            "nvidia.com/gpu.memory": str(model.memory_mi),
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": model.label,
            "nvidia.com/mig.capable": "true",
            "nvidia.com/mig.config": spec.mig_config,
            "nvidia.com/mig.config.state": "success",
        }
        if spec.mig:
            labels["nvidia.com/mig.strategy"] = "mixed"
            counts: dict[str, int] = {}
            for layout in spec.mig.values():
                for prof, _ in layout:
                    counts[prof] = counts.get(prof, 0) + 1
            for prof, n in sorted(counts.items()):
                labels[f"nvidia.com/mig-{prof}.count"] = str(n)
        heartbeat = _ts(self.ago(seconds=self.rng.randint(5, 40)))
        since = _ts(created)
        conditions = [
            {
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": since,
                "message": msg,
                "reason": reason,
                "status": "False",
                "type": typ,
            }
            for typ, reason, msg in (
                ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            )
        ]
        conditions.append(
            {
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": since,
                "message": "kubelet is posting ready status",
                "reason": "KubeletReady",
                "status": "True",
                "type": "Ready",
            }
        )
        taints = []
        if spec.tainted:
            taints.append({"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"})
        if spec.unschedulable:
            taints.append({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": _ts(self.ago(minutes=30))})
        node_spec: dict[str, Any] = {"podCIDR": f"10.244.{self._ip}.0/24", "podCIDRs": [f"10.244.{self._ip}.0/24"]}
        if taints:
            node_spec["taints"] = taints
        if spec.unschedulable:
            node_spec["unschedulable"] = True
        mem = f"{model.memory_ki}Ki"
        obj = self.add(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "annotations": {
                        "node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                    },
                    "creationTimestamp": since,
                    "labels": labels,
                    "name": spec.name,
                    "resourceVersion": self.rv(),
                    "uid": self.uid("Node", "", spec.name),
                },
                "spec": node_spec,
                "status": {
                    "addresses": [
                        {"address": address, "type": "InternalIP"},
                        {"address": spec.name, "type": "Hostname"},
                    ],
                    "allocatable": {"cpu": str(model.cpu - 2), "memory": mem, "pods": "110"},
                    "capacity": {"cpu": str(model.cpu), "memory": mem, "pods": "110"},
                    "conditions": conditions,
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                    "nodeInfo": {
                        "architecture": "amd64",
                        "bootID": self.uid("boot", "", spec.name),
                        "containerRuntimeVersion": "containerd://2.1.4",
                        "kernelVersion": "6.8.0-87-generic",
                        "kubeletVersion": spec.kubelet,
                        "machineID": self.uid("machine", "", spec.name).replace("-", ""),
                        "operatingSystem": "linux",
                        "osImage": "Ubuntu 24.04.3 LTS",
                        "systemUUID": self.uid("system", "", spec.name),
                    },
                },
            }
        )
        self.nodes[spec.name] = obj
        self.node_specs[spec.name] = spec
        if spec.slice != "none":
            self.resource_slice(spec, obj)
        return obj

    def _gpu_attributes(self, spec: NodeSpec, model: GpuModel, minor: int, gpu_uuid: str) -> dict[str, Any]:
        bus, root = model.pci[minor]
        return {
            "addressingMode": {"string": "HMM"},
            "architecture": {"string": model.architecture},
            "brand": {"string": "Nvidia"},
            "cudaComputeCapability": {"version": f"{model.compute[0]}.{model.compute[1]}.0"},
            "cudaDriverVersion": {"version": "13.0.0"},
            "driverVersion": {"version": driver_version_attr(spec.driver)},
            "productName": {"string": model.product},
            "resource.kubernetes.io/pciBusID": {"string": bus},
            "resource.kubernetes.io/pcieRoot": {"string": root},
            "type": {"string": "gpu"},
            "uuid": {"string": gpu_uuid},
        }

    def gpu_uuid(self, node: str, minor: int) -> str:
        return "GPU-" + self.uid("gpu", node, str(minor))

    def resource_slice(self, spec: NodeSpec, node: dict[str, Any]) -> dict[str, Any]:
        """The node's ``gpu.nvidia.com`` ResourceSlice (whole GPUs and static MIG devices)."""
        model = GPU_MODELS[spec.model]
        table = mig.model_for(model.product)
        devices: list[dict[str, Any]] = []
        for minor in range(spec.gpus) if spec.slice == "full" else ():
            gpu_uuid = self.gpu_uuid(spec.name, minor)
            attrs = self._gpu_attributes(spec, model, minor, gpu_uuid)
            bus = attrs["resource.kubernetes.io/pciBusID"]["string"]
            layout = spec.mig.get(minor)
            if not layout:
                name = f"gpu-{minor}"
                devices.append({"attributes": attrs, "capacity": {"memory": {"value": f"{model.memory_mi}Mi"}}, "name": name})
                self.devices[(spec.name, name)] = DeviceInfo(
                    spec.name, spec.name, name, "gpu", gpu_uuid, "", minor, model.product, "", -1,
                    model.memory_mi, bus, spec.driver,
                )
                continue
            if table is None:
                raise ValueError(f"{model.product} cannot be MIG-partitioned")
            for prof_name, start in layout:
                prof = table.profile(prof_name)
                if prof is None or start not in prof.placements:
                    raise ValueError(f"invalid MIG placement {prof_name}@{start} on {model.product}")
                eng = model.engines_for(prof)
                name = mig_device_name(minor, prof, start)
                mig_uuid = "MIG-" + self.uid("mig", spec.name, name)
                mem_mi = round(prof.memory_gib * 1024)
                mattrs = dict(attrs)
                mattrs["type"] = {"string": "mig"}
                mattrs["uuid"] = {"string": mig_uuid}
                mattrs["parentUUID"] = {"string": gpu_uuid}
                mattrs["profile"] = {"string": prof.name}
                cap = {
                    "copyEngines": {"value": str(eng.copy_engines)},
                    "decoders": {"value": str(eng.decoders)},
                    "encoders": {"value": str(eng.encoders)},
                    "jpegEngines": {"value": str(eng.jpeg_engines)},
                    "memory": {"value": f"{mem_mi}Mi"},
                    "multiprocessors": {"value": str(eng.multiprocessors)},
                    "ofaEngines": {"value": str(eng.ofa_engines)},
                }
                for s in range(start, start + prof.size):
                    cap[f"memorySlice{s}"] = {"value": "1"}
                devices.append({"attributes": mattrs, "capacity": cap, "name": name})
                self.devices[(spec.name, name)] = DeviceInfo(
                    spec.name, spec.name, name, "mig", mig_uuid, gpu_uuid, minor, model.product, prof.name,
                    start, mem_mi, bus, spec.driver,
                )
        suffix = self.suffix()
        name = f"{spec.name}-gpu.nvidia.com-{suffix}"
        return self.add(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {
                    "creationTimestamp": _ts(self.now - spec.age + timedelta(minutes=18)),
                    "generateName": f"{spec.name}-gpu.nvidia.com-",
                    "generation": 1,
                    "name": name,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "controller": True,
                            "kind": "Node",
                            "name": spec.name,
                            "uid": node["metadata"]["uid"],
                        }
                    ],
                    "resourceVersion": self.rv(),
                    "uid": self.uid("ResourceSlice", "", name),
                },
                "spec": {
                    "devices": devices,
                    "driver": GPU_DRIVER,
                    "nodeName": spec.name,
                    "pool": {"generation": 1, "name": spec.name, "resourceSliceCount": 1},
                },
            }
        )

    # -- namespaced objects --------------------------------------------------------------------
    def template(
        self,
        namespace: str,
        name: str,
        *,
        request: str = "gpu",
        device_class: str = "gpu.nvidia.com",
        selectors: Sequence[str] = (),
        count: int = 1,
        created: datetime | None = None,
    ) -> dict[str, Any]:
        """A ResourceClaimTemplate with one ``exactly`` request."""
        return self.add(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {
                    "creationTimestamp": _ts(created or self.ago(days=12)),
                    "name": name,
                    "namespace": namespace,
                    "resourceVersion": self.rv(),
                    "uid": self.uid("ResourceClaimTemplate", namespace, name),
                },
                "spec": {"spec": {"devices": {"requests": [_request(request, device_class, selectors, count)]}}},
            }
        )

    def _node_devices(self, node: str) -> list[tuple[tuple[str, str], DeviceInfo]]:
        # Index devices by node, rebuilt when devices were added: fleets ask per node.
        if getattr(self, "_node_index_size", -1) != len(self.devices):
            index: dict[str, list[tuple[tuple[str, str], DeviceInfo]]] = {}
            for k, d in self.devices.items():
                index.setdefault(d.node, []).append((k, d))
            self._node_index, self._node_index_size = index, len(self.devices)
        return self._node_index.get(node, [])

    def free_devices(self, node: str | None = None, type_: str | None = None, profile: str | None = None) -> list[DeviceInfo]:
        """Published devices not yet allocated, in slice order (optionally filtered)."""
        items = self.devices.items() if node is None else self._node_devices(node)
        return [
            d
            for k, d in items
            if k not in self.taken
            and (node is None or d.node == node)
            and (type_ is None or d.type == type_)
            and (profile is None or d.profile == profile)
        ]

    def workload(
        self,
        namespace: str,
        app: str,
        *,
        state: str,
        template: dict[str, Any] | None = None,
        devices: Sequence[DeviceInfo] = (),
        age: timedelta = timedelta(hours=5),
        allocated_age: timedelta | None = None,
        deleting_age: timedelta = timedelta(seconds=20),
        image: str = "vllm/vllm-openai:v0.11.0",
        pod_present: bool = True,
        claim_name: str = "gpu",
        owner_kind: str = "ReplicaSet",
        message: str | None = None,
        events: bool = True,
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """A pod of ``app`` with one claim generated from ``template``, in ``state``.

        States: ``in_use`` (allocated, reserved, pod Running), ``allocated`` (allocated, not
        reserved, pod Pending), ``pending`` (not allocated, pod Pending with a FailedScheduling
        series), ``deleting`` (claim and pod carry a deletionTimestamp; the claim keeps
        its delete-protection finalizer while still allocated and reserved).
        ``devices`` are marked taken; they must be free. ``pod_present=False`` leaves the pod out
        (its uid still appears where the claim names it). ``events=False`` leaves out the
        scheduler's and kubelet's Events about the pod. Returns (pod, claim).
        """
        for d in devices:
            key = (d.node, d.name)
            if key in self.taken:
                raise ValueError(f"device {d.node}/{d.name} is already allocated")
            self.taken.add(key)
        tmpl = template or {}
        tmpl_name = (tmpl.get("metadata") or {}).get("name", "")
        requests = copy.deepcopy(((tmpl.get("spec") or {}).get("spec") or {}).get("devices", {}).get("requests") or [])
        created = self.now - age
        if owner_kind == "ReplicaSet":
            rs_hash = "".join(_SUFFIX_ALPHABET[int(c, 16)] for c in self.uid("rs", namespace, app).replace("-", "")[:9])
            rs = f"{app}-{rs_hash}"
            pod_name = self.pod_name(namespace, rs)
            owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": self.uid("ReplicaSet", namespace, rs)}
            labels = {"app": app, "pod-template-hash": rs_hash}
        elif owner_kind == "StatefulSet":
            pod_name = f"{app}-0"
            owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": self.uid("StatefulSet", namespace, app)}
            labels = {"app": app, "apps.kubernetes.io/pod-index": "0", "statefulset.kubernetes.io/pod-name": pod_name}
        else:  # Job
            pod_name = self.pod_name(namespace, app)
            owner = {"apiVersion": "batch/v1", "kind": "Job", "name": app, "uid": self.uid("Job", namespace, app)}
            labels = {"batch.kubernetes.io/job-name": app, "job-name": app}
        pod_uid = self.uid("Pod", namespace, pod_name)
        claim_obj_name = f"{pod_name}-{claim_name}-{self.suffix()}"
        node = devices[0].node if devices else ""
        alloc_at = self.now - (allocated_age if allocated_age is not None else age - timedelta(seconds=1))

        claim: dict[str, Any] = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "annotations": {POD_CLAIM_NAME: claim_name},
                "creationTimestamp": _ts(created),
                "generateName": f"{pod_name}-{claim_name}-",
                "name": claim_obj_name,
                "namespace": namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "Pod",
                        "name": pod_name,
                        "uid": pod_uid,
                    }
                ],
                "resourceVersion": "",
                "uid": self.uid("ResourceClaim", namespace, claim_obj_name),
            },
            "spec": {"devices": {"requests": requests}},
            "status": {},
        }
        if state in ("in_use", "allocated", "deleting"):
            if not devices:
                raise ValueError(f"state {state} needs devices")
            req_name = requests[0]["name"] if requests else claim_name
            claim["metadata"]["finalizers"] = [DELETE_PROTECTION]
            claim["status"]["allocation"] = {
                "allocationTimestamp": _ts(alloc_at),
                "devices": {
                    "results": [
                        {"device": d.name, "driver": GPU_DRIVER, "pool": d.pool, "request": req_name} for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            }
            if state in ("in_use", "deleting"):
                claim["status"]["reservedFor"] = [{"name": pod_name, "resource": "pods", "uid": pod_uid}]
        if state == "deleting":
            claim["metadata"]["deletionTimestamp"] = _ts(self.now - deleting_age)
            claim["metadata"]["deletionGracePeriodSeconds"] = 0

        pod = None
        if pod_present:
            pod = self.pod(
                namespace,
                pod_name,
                pod_uid,
                owner,
                labels,
                created=created,
                node=node if state in ("in_use", "deleting") else "",
                claims=[{"name": claim_name, "resourceClaimTemplateName": tmpl_name}],
                claim_statuses=[{"name": claim_name, "resourceClaimName": claim_obj_name}],
                image=image,
                deleting=self.now - deleting_age if state == "deleting" else None,
                pending_message=message,
            )
        claim["metadata"]["resourceVersion"] = self.rv()
        self.add(claim)
        if pod is None or not events:
            return pod, claim
        if state in ("pending", "allocated"):
            self.scheduler_event(pod, message or _no_fit_message(len(self.nodes)), first=created + timedelta(seconds=1))
        if state == "in_use" and age < timedelta(minutes=55):
            self.kubelet_event(pod, node, "Started", "Started container main", at=created + timedelta(seconds=25))
        if state == "deleting" and deleting_age < timedelta(minutes=55):
            self.kubelet_event(pod, node, "Killing", "Stopping container main", at=self.now - deleting_age)
        return pod, claim

    def pod(
        self,
        namespace: str,
        name: str,
        uid: str,
        owner: dict[str, Any] | None,
        labels: Mapping[str, str],
        *,
        created: datetime,
        node: str = "",
        claims: Sequence[Mapping[str, str]] = (),
        claim_statuses: Sequence[Mapping[str, str]] = (),
        image: str = "vllm/vllm-openai:v0.11.0",
        deleting: datetime | None = None,
        pending_message: str | None = None,
        tolerate_gpu: bool = True,
    ) -> dict[str, Any]:
        """A Pod consuming DRA claims; Running on ``node`` or Pending when ``node`` is empty."""
        meta: dict[str, Any] = {
            "creationTimestamp": _ts(created),
            "generation": 1,
            "labels": dict(labels),
            "name": name,
            "namespace": namespace,
            "resourceVersion": "",
            "uid": uid,
        }
        if owner:
            if owner["kind"] != "StatefulSet":
                meta["generateName"] = name[: name.rfind("-") + 1]
            meta["ownerReferences"] = [{**owner, "blockOwnerDeletion": True, "controller": True}]
        if deleting is not None:
            # The API server sets it to request time + grace period; a snapshot holds no time after ``now``.
            meta["deletionTimestamp"] = _ts(min(deleting + timedelta(seconds=30), self.now))
            meta["deletionGracePeriodSeconds"] = 30
        vol = f"kube-api-access-{self.suffix()}"
        tolerations = [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ]
        if tolerate_gpu:
            tolerations.insert(0, {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"})
        spec: dict[str, Any] = {
            "containers": [
                {
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "name": "main",
                    "resources": {
                        "claims": [{"name": c["name"]} for c in claims],
                        "limits": {"memory": "64Gi"},
                        "requests": {"cpu": "8", "memory": "64Gi"},
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "volumeMounts": [service_account_mount(vol)],
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "resourceClaims": [dict(c) for c in claims],
            "restartPolicy": "Always" if owner is None or owner["kind"] != "Job" else "Never",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations,
            "volumes": [service_account_volume(vol)],
        }
        status: dict[str, Any] = {"qosClass": "Burstable"}
        if claim_statuses:
            status["resourceClaimStatuses"] = [dict(c) for c in claim_statuses]
        if node:
            spec["nodeName"] = node
            started = created + timedelta(seconds=25)
            host_ip = self.nodes[node]["status"]["addresses"][0]["address"] if node in self.nodes else "10.40.0.2"
            status.update(
                {
                    "conditions": [
                        _cond("PodReadyToStartContainers", started),
                        _cond("Initialized", created),
                        _cond("Ready", started),
                        _cond("ContainersReady", started),
                        _cond("PodScheduled", created),
                    ],
                    "containerStatuses": [
                        {
                            "containerID": self.container_id(namespace, name, "main"),
                            "image": image,
                            "imageID": image.split(":", 1)[0] + "@sha256:" + (self.uid("img", "", image) * 2).replace("-", "")[:64],
                            "lastState": {},
                            "name": "main",
                            "ready": True,
                            "restartCount": 0,
                            "started": True,
                            "state": {"running": {"startedAt": _ts(started)}},
                            "volumeMounts": [service_account_mount(vol, status=True)],
                        }
                    ],
                    "hostIP": host_ip,
                    "hostIPs": [{"ip": host_ip}],
                    "observedGeneration": 1,
                    "phase": "Running",
                    "podIP": f"10.244.{self.rng.randint(1, 250)}.{self.rng.randint(2, 250)}",
                    "startTime": _ts(created + timedelta(seconds=1)),
                }
            )
            status["podIPs"] = [{"ip": status["podIP"]}]
        else:
            msg = pending_message or _no_fit_message(len(self.nodes))
            status.update(
                {
                    "conditions": [
                        {
                            "lastProbeTime": None,
                            "lastTransitionTime": _ts(created + timedelta(seconds=1)),
                            "message": msg,
                            "reason": "Unschedulable",
                            "status": "False",
                            "type": "PodScheduled",
                        }
                    ],
                    "phase": "Pending",
                }
            )
        meta["resourceVersion"] = self.rv()
        return self.add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})

    def scheduler_event(
        self, pod: dict[str, Any], message: str, *, first: datetime, count: int | None = None, last: datetime | None = None
    ) -> dict[str, Any]:
        """kube-scheduler's FailedScheduling event, events.k8s.io shape (``eventTime`` + ``series``).

        Events older than an hour are gone in a real cluster, so ``first`` is clamped to the last hour.
        """
        first = max(first, self.ago(minutes=59))
        last = last or self.ago(seconds=self.rng.randint(20, 90))
        # The scheduler retries unschedulable pods with backoff, at most every 5 minutes.
        count = count or max(2, int((last - first).total_seconds() // 240) + 1)
        meta = pod["metadata"]
        name = f"{meta['name']}.{self._event_hex()}"
        return self.add(
            {
                "action": "Scheduling",
                "apiVersion": "v1",
                "eventTime": _micro(first),
                "firstTimestamp": None,
                "involvedObject": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "resourceVersion": meta["resourceVersion"],
                    "uid": meta["uid"],
                },
                "kind": "Event",
                "lastTimestamp": None,
                "message": message,
                "metadata": {
                    "creationTimestamp": _ts(first),
                    "name": name,
                    "namespace": meta["namespace"],
                    "resourceVersion": self.rv(),
                    "uid": self.uid("Event", meta["namespace"], name),
                },
                "reason": "FailedScheduling",
                "reportingComponent": "default-scheduler",
                "reportingInstance": "default-scheduler-cp-01",
                "series": {"count": count, "lastObservedTime": _micro(last)},
                "source": {},
                "type": "Warning",
            }
        )

    def core_event(
        self,
        involved: dict[str, Any],
        reason: str,
        message: str,
        *,
        component: str,
        host: str = "",
        first: datetime,
        last: datetime | None = None,
        count: int = 1,
        type_: str = "Normal",
        field_path: str = "",
    ) -> dict[str, Any]:
        """A core/v1 Event as the kubelet and controllers write it (``count``, first/last timestamps)."""
        meta = involved["metadata"]
        last = last or first
        ns = meta.get("namespace") or "default"
        name = f"{meta['name']}.{self._event_hex()}"
        obj_ref: dict[str, Any] = {
            "apiVersion": involved.get("apiVersion", "v1"),
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": ns,
            "uid": meta.get("uid", ""),
        }
        if field_path:
            obj_ref["fieldPath"] = field_path
        if meta.get("resourceVersion"):
            obj_ref["resourceVersion"] = meta["resourceVersion"]
        source: dict[str, Any] = {"component": component}
        if host:
            source["host"] = host
        return self.add(
            {
                "apiVersion": "v1",
                "count": count,
                "eventTime": None,
                "firstTimestamp": _ts(first),
                "involvedObject": obj_ref,
                "kind": "Event",
                "lastTimestamp": _ts(last),
                "message": message,
                "metadata": {
                    "creationTimestamp": _ts(first),
                    "name": name,
                    "namespace": ns,
                    "resourceVersion": self.rv(),
                    "uid": self.uid("Event", ns, name),
                },
                "reason": reason,
                "reportingComponent": component,
                "reportingInstance": host,
                "source": source,
                "type": type_,
            }
        )

    def kubelet_event(self, pod: dict[str, Any], node: str, reason: str, message: str, *, at: datetime, **kw: Any) -> dict[str, Any]:
        return self.core_event(pod, reason, message, component="kubelet", host=node, first=at,
                               field_path="spec.containers{main}", **kw)

    def _event_hex(self) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(16))


def _request(name: str, device_class: str, selectors: Iterable[str], count: int) -> dict[str, Any]:
    exactly: dict[str, Any] = {"allocationMode": "ExactCount", "count": count, "deviceClassName": device_class}
    sels = [{"cel": {"expression": s}} for s in selectors]
    if sels:
        exactly["selectors"] = sels
    return {"exactly": exactly, "name": name}


def service_account_volume(name: str) -> dict[str, Any]:
    """The ``kube-api-access-*`` projected volume the API server adds to every pod (token, the
    cluster CA, the namespace), as in the real pod of the ``healthy-vks-real`` case."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ],
        },
    }


def service_account_mount(name: str, *, status: bool = False) -> dict[str, Any]:
    """Its mount in a container (``status=True``: as ``containerStatuses[].volumeMounts`` reports it)."""
    mount: dict[str, Any] = {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": name, "readOnly": True}
    if status:
        mount["recursiveReadOnly"] = "Disabled"
    return mount


def _cond(typ: str, at: datetime) -> dict[str, Any]:
    return {"lastProbeTime": None, "lastTransitionTime": _ts(at), "observedGeneration": 1, "status": "True", "type": typ}


def _no_fit_message(nodes: int) -> str:
    n = max(nodes, 1)
    return (
        f"0/{n} nodes are available: {n} cannot allocate all claims. still not schedulable, "
        f"preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
    )


# -- the benchmark fleet ------------------------------------------------------------------------

# (model, gpus, weight): the node mix customers run plus the H100 servers of cloud clusters.
_MIX = (("h200-nvl", 8, 30), ("h100", 8, 30), ("rtx-pro-6000", 2, 20), ("rtx-pro-6000", 4, 20))
_STATES = ("in_use",) * 6 + ("allocated", "pending", "deleting")


def _fleet_spec(i: int, rng: random.Random) -> NodeSpec:
    model, gpus, _ = rng.choices(_MIX, weights=[w for *_, w in _MIX])[0]
    pool = f"{model}-{gpus}x"
    name = f"{pool}-{i:05d}"
    # A third of the nodes whole, a third all-MIG, a third half-MIG: about half the GPUs in MIG mode.
    mode = i % 3
    layouts: dict[int, tuple[tuple[str, int], ...]] = {}
    config = "all-disabled"
    if mode == 1:
        if rng.random() < 0.5:
            config, layout = f"all-{SMALLEST[model]}", all_smallest(model)
        else:
            config, layout = "all-balanced", balanced(model)
        layouts = dict.fromkeys(range(gpus), layout)
    elif mode == 2:
        half = gpus // 2
        config = f"custom-{half}-of-{gpus}-balanced"
        layouts = dict.fromkeys(range(half), balanced(model))
    driver = "580.159.04" if model == "h200-nvl" else "580.105.08"
    return NodeSpec(
        name=name, model=model, gpus=gpus, pool=pool, mig=layouts, mig_config=config,
        tainted=rng.random() < 0.9, driver=driver, age=timedelta(days=rng.randint(3, 200), minutes=rng.randint(0, 1439)),
    )


def generate_fleet(nodes: int, seed: int = 0, now: datetime | None = None) -> list[dict[str, Any]]:
    """A fleet of ``nodes`` GPU nodes with slices, DeviceClasses, templates, claims, pods, events.

    Node mix: 8x H200 NVL, 8x H100 80GB HBM3, 2x and 4x RTX PRO 6000 Blackwell Server Edition;
    about half the GPUs in static MIG mode. About two claims per node, in every state
    (``in_use``, ``allocated``, ``pending``, ``deleting``; each present once ``nodes >= 2``).
    ``now`` (default ``FLEET_EPOCH``) is the snapshot moment: no timestamp is later.
    Returns raw v1 objects (dicts) in creation order. Raises ``ValueError`` for ``nodes < 1``.
    """
    if nodes < 1:
        raise ValueError("a fleet needs at least one node")
    now = now or FLEET_EPOCH
    b = ClusterBuilder(seed, now)
    b.device_classes()
    rng = random.Random(seed * 7919 + 1)  # noqa: S311
    specs = [_fleet_spec(i, rng) for i in range(nodes)]
    for spec in specs:
        b.node(spec)
    namespaces = ("team-a", "team-b", "ml-platform", "research")
    templates: dict[tuple[str, str], dict[str, Any]] = {}

    def tmpl(ns: str, key: str) -> dict[str, Any]:
        if (ns, key) not in templates:
            if key == "gpu":
                templates[(ns, key)] = b.template(ns, "single-gpu")
            elif key == "gpu-x8":
                templates[(ns, key)] = b.template(ns, "eight-gpus", request="gpus", count=8)
            else:
                templates[(ns, key)] = b.template(
                    ns, f"mig-{key.replace('.', '')}", request="mig", device_class="mig.nvidia.com",
                    selectors=[f"device.attributes['gpu.nvidia.com'].profile == '{key}'"],
                )
        return templates[(ns, key)]

    n = 0
    for spec in specs:
        for _ in range(2):
            # The first four claims cover every state; the rest follow the weighted mix.
            state = ("in_use", "allocated", "pending", "deleting")[n] if n < 4 and nodes >= 2 else rng.choice(_STATES)
            n += 1
            ns = namespaces[rng.randrange(len(namespaces))]
            age = timedelta(minutes=rng.randint(3, 60 * 24 * 6))
            if state == "pending":
                app = f"trainer-{rng.randrange(1000):03d}"
                b.workload(ns, app, state=state, template=tmpl(ns, "gpu-x8"), age=min(age, timedelta(minutes=rng.randint(3, 50))),
                           owner_kind="Job", image="nvcr.io/nvidia/pytorch:25.10-py3")
                continue
            free = b.free_devices(node=spec.name)
            if not free:
                continue
            dev = free[rng.randrange(len(free))]
            key = dev.profile if dev.type == "mig" else "gpu"
            app = f"{'notebook' if dev.type == 'mig' else 'llm-serve'}-{rng.randrange(1000):03d}"
            kw: dict[str, Any] = {}
            if state == "allocated":
                age = timedelta(seconds=rng.randint(5, 90))
            if state == "deleting":
                kw["deleting_age"] = timedelta(seconds=rng.randint(2, 40))
            b.workload(ns, app, state=state, template=tmpl(ns, key), devices=[dev], age=age, **kw)
    return b.objects


def mutate_claims(objects: Sequence[dict[str, Any]], fraction: float, seed: int = 0) -> list[dict[str, Any]]:
    """A deep copy of ``objects`` in which ``round(fraction * claims)`` ResourceClaims changed.

    Each chosen claim gets a new, higher ``resourceVersion`` and a change the API server would
    record: an allocated-not-reserved claim becomes reserved for its owner pod (the pod that
    exists with that uid); an in-use claim gets ``status.devices`` conditions from the driver;
    any other claim gets a ``resource.kubernetes.io/...``-free annotation bump
    (``claimscope.io/touched``). Raises ``ValueError`` unless ``0 <= fraction <= 1``.
    """
    if not 0 <= fraction <= 1:
        raise ValueError("fraction must be between 0 and 1")
    out = copy.deepcopy(list(objects))
    claims = [o for o in out if o.get("kind") == "ResourceClaim"]
    k = round(fraction * len(claims))
    rng = random.Random(seed)  # noqa: S311
    chosen = rng.sample(range(len(claims)), k)
    top = max((int(rv) for o in out if (rv := (o.get("metadata") or {}).get("resourceVersion", "")).isdigit()), default=0)
    for i, idx in enumerate(sorted(chosen)):
        c = claims[idx]
        meta = c["metadata"]
        status = c.setdefault("status", {})
        meta["resourceVersion"] = str(top + i + 1)
        owner = next((o for o in meta.get("ownerReferences") or [] if o.get("kind") == "Pod"), None)
        alloc = status.get("allocation")
        if alloc and not status.get("reservedFor") and owner and not meta.get("deletionTimestamp"):
            status["reservedFor"] = [{"name": owner["name"], "resource": "pods", "uid": owner["uid"]}]
        elif alloc and status.get("reservedFor"):
            status["devices"] = [
                {
                    "conditions": [
                        {
                            "lastTransitionTime": meta.get("creationTimestamp"),
                            "message": "device prepared",
                            "reason": "Prepared",
                            "status": "True",
                            "type": "Ready",
                        }
                    ],
                    "device": r["device"],
                    "driver": r["driver"],
                    "pool": r["pool"],
                }
                for r in (alloc.get("devices") or {}).get("results") or []
            ]
        else:
            ann = meta.setdefault("annotations", {})
            ann["claimscope.io/touched"] = str(int(ann.get("claimscope.io/touched", "0")) + 1)
    return out
