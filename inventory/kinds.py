"""The Kubernetes resources Claimscope reads, as data.

One table drives the live source (which URLs to list), the snapshot source (which kinds to
keep) and the RBAC ClusterRole shipped in ``deploy/kubernetes`` (a test checks that the
ClusterRole grants ``get/list/watch`` on exactly these and nothing else).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import jsonlist


@dataclass(frozen=True)
class KindSpec:
    """One listable resource.

    ``versions``: served versions to try, preferred first (the first one the server serves
    wins). ``optional``: a 404 on every version means "not installed" (e.g. a CRD), which is
    an empty, complete list rather than an error. ``namespaces``: when set, list only in
    these namespaces (ConfigMaps: the GPU stack's own, not every app's).
    ``field_selectors``: when set, read the kind as one list per selector (the API server
    accepts no OR in a field selector), e.g. Events about Pods, claims and Nodes only.
    ``keep``: for what no server-side selector can express, a test of an item's raw JSON
    bytes, applied before it is decoded (``wanted_pod``); items failing it are skipped.
    Both apply to the delta reads of ``inventory.watch``; ``keep`` to snapshots too.
    """

    kind: str
    group: str
    versions: tuple[str, ...]
    plural: str
    namespaced: bool
    optional: bool = False
    namespaces: tuple[str, ...] = ()
    field_selectors: tuple[str, ...] = ()
    keep: Callable[[bytes], bool] | None = None

    def targets(self) -> list[tuple[str, str | None, tuple[tuple[str, str], ...]]]:
        """The lists a live read of this kind makes: (cursor key, namespace or None, extra
        query parameters). The key names the list in ``WatchCursor.target``."""
        out = []
        for ns in self.namespaces or (None,):
            for sel in self.field_selectors or (None,):
                key = self.kind + (f"@{ns}" if ns else "") + (f"?fieldSelector={sel}" if sel else "")
                out.append((key, ns, (("fieldSelector", sel),) if sel else ()))
        return out

    def path(self, version: str, namespace: str | None = None) -> str:
        base = "/api/" + version if not self.group else f"/apis/{self.group}/{version}"
        if namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


DRA = "resource.k8s.io"
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")
GPU_STACK_NAMESPACES = ("gpu-operator", "kube-system", "kueue-system", "nvidia-dra-driver-gpu")

# A pod that uses DRA, or a DRA driver's own pod (runbooks, records.Pod), or the DCGM exporter
# (readiness): byte markers found in such a pod's JSON.
# ``extendedResourceClaimStatus``: the claim the scheduler made for an extended resource a
# DeviceClass names (``spec.extendedResourceName``, any name), once the pod is scheduled.
POD_MARKERS = (b'"resourceClaims"', b'"extendedResourceClaimStatus"', b"kubelet-plugin", b"kubeletplugin", b"dcgm-exporter",
               # The control plane's static pods (label component=..., name <component>-<node>):
               # their --feature-gates and images are the diagnosis's evidence of gates and versions.
               b'"kube-apiserver', b'"kube-scheduler', b'"kube-controller-manager')
# A request or limit of a GPU resource: the device plugin's nvidia.com/gpu, MIG strategy
# "mixed" nvidia.com/mig-<profile>, or the extended resource of a DeviceClass, as a JSON key
# (the name followed by a colon: a toleration or an affinity naming nvidia.com/gpu does not
# count, every pod on a tainted GPU node has one). A fixed pattern, never built from input.
GPU_RESOURCE_KEY = re.compile(
    rb'"(?:nvidia\.com/(?:gpu|mig-[^"\\]{1,63})|deviceclass\.resource\.kubernetes\.io/[^"\\]{1,253})"\s*:'
)
# Pods of these namespaces are kept whatever they request: the DRA driver's and the GPU
# Operator's own (controller, device plugin, validator, toolkit...).
GPU_POD_NAMESPACES = frozenset({"gpu-operator", "nvidia-gpu-operator", "nvidia-dra-driver-gpu"})


# The resource maps of a container's ``resources`` (compact from the API server, indented in
# ``kubectl get -o json`` files): the key, then the map's opening brace.
_RESOURCE_MAPS = (b'"limits"', b'"requests"')
_MAP_OPENS = re.compile(rb"\s*:\s*\{")


def asks_extended_resource(raw: bytes) -> bool:
    """Does a container ask for an extended resource (a domain-qualified name such as
    ``example.com/gpu``)? A DeviceClass may serve any such name (``spec.extendedResourceName``,
    KEP-5004), and a pod the scheduler has not placed yet has no claim to say it uses DRA: the
    names are known only once the classes are, so every extended resource keeps its pod (a
    false match only keeps a pod). cpu, memory, hugepages and ephemeral storage carry no
    ``/``, nor do quantities."""
    for key in _RESOURCE_MAPS:
        i = raw.find(key)
        while i != -1:
            opens = _MAP_OPENS.match(raw, i + len(key))
            if opens is not None:
                end = raw.find(b"}", opens.end())
                if end == -1:
                    break
                if raw.find(b"/", opens.end(), end) != -1:
                    return True
            i = raw.find(key, i + len(key))
    return False


def wanted_pod(raw: bytes, namespace: str | None = None) -> bool:
    """Does the dashboard keep this Pod (its raw JSON text, undecoded)?

    No field or label selector says "requests a GPU" or "references a ResourceClaim", so a
    live read lists every Pod and skips the others before decoding: byte searches for the
    markers above (C speed; a false match only keeps a pod, it never loses one), else the
    namespace read by ``jsonlist.head``. The API server writes these names unescaped."""
    if any(m in raw for m in POD_MARKERS):
        return True
    if (b"nvidia.com/" in raw or b"deviceclass.resource.kubernetes.io/" in raw) and GPU_RESOURCE_KEY.search(raw):
        return True
    if asks_extended_resource(raw):
        return True
    if namespace is not None:  # the reader knows it already (a snapshot item's identity)
        return namespace in GPU_POD_NAMESPACES
    h = jsonlist.head(raw)
    return h is not None and h.namespace in GPU_POD_NAMESPACES


# Events about these kinds only (``involvedObject.kind`` is a field selector of core/v1 Events).
EVENT_KINDS = ("Pod", "ResourceClaim", "Node")

KINDS: tuple[KindSpec, ...] = (
    KindSpec("Node", "", ("v1",), "nodes", False),
    KindSpec("DeviceClass", DRA, DRA_VERSIONS, "deviceclasses", False),
    KindSpec("ResourceSlice", DRA, DRA_VERSIONS, "resourceslices", False),
    KindSpec("ResourceClaim", DRA, DRA_VERSIONS, "resourceclaims", True),
    KindSpec("ResourceClaimTemplate", DRA, DRA_VERSIONS, "resourceclaimtemplates", True),
    # DeviceTaintRule: v1 from Kubernetes 1.37 (a server serving only v1 would otherwise read as "none").
    KindSpec("DeviceTaintRule", DRA, ("v1", "v1beta2", "v1alpha3"), "devicetaintrules", False, optional=True),
    KindSpec("Pod", "", ("v1",), "pods", True, keep=wanted_pod),
    KindSpec("Event", "", ("v1",), "events", True, field_selectors=tuple(f"involvedObject.kind={k}" for k in EVENT_KINDS)),
    KindSpec("ConfigMap", "", ("v1",), "configmaps", True, namespaces=GPU_STACK_NAMESPACES),
    KindSpec("DaemonSet", "apps", ("v1",), "daemonsets", True),
    KindSpec("Deployment", "apps", ("v1",), "deployments", True),
    KindSpec("StatefulSet", "apps", ("v1",), "statefulsets", True),
    KindSpec("Job", "batch", ("v1",), "jobs", True),
    KindSpec("CronJob", "batch", ("v1",), "cronjobs", True),
    KindSpec("PriorityClass", "scheduling.k8s.io", ("v1",), "priorityclasses", False),
    KindSpec("Namespace", "", ("v1",), "namespaces", False),  # labels: the chargeback's teams
    KindSpec("ClusterPolicy", "nvidia.com", ("v1",), "clusterpolicies", False, optional=True),
    KindSpec("GPUCluster", "nvidia.com", ("v1alpha1",), "gpuclusters", False, optional=True),
    KindSpec("NVIDIADriver", "nvidia.com", ("v1alpha1",), "nvidiadrivers", False, optional=True),
    KindSpec("PrometheusRule", "monitoring.coreos.com", ("v1",), "prometheusrules", True, optional=True),
    KindSpec("ClusterQueue", "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "clusterqueues", False, optional=True),
    KindSpec("ResourceFlavor", "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "resourceflavors", False, optional=True),
    KindSpec("InferenceService", "serving.kserve.io", ("v1beta1",), "inferenceservices", True, optional=True),
    KindSpec("ServingRuntime", "serving.kserve.io", ("v1alpha1",), "servingruntimes", True, optional=True),
    KindSpec("NIMService", "apps.nvidia.com", ("v1alpha1",), "nimservices", True, optional=True),
)

KIND_NAMES = frozenset(k.kind for k in KINDS)
BY_KIND = {k.kind: k for k in KINDS}
