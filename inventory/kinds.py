"""The Kubernetes resources Claimscope reads, as data.

One table drives the live source (which URLs to list), the snapshot source (which kinds to
keep) and the RBAC ClusterRole shipped in ``deploy/kubernetes`` (a test checks that the
ClusterRole grants ``get/list/watch`` on exactly these and nothing else).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindSpec:
    """One listable resource.

    ``versions``: served versions to try, preferred first (the first one the server serves
    wins). ``optional``: a 404 on every version means "not installed" (e.g. a CRD), which is
    an empty, complete list rather than an error. ``namespaces``: when set, list only in
    these namespaces (ConfigMaps: the GPU stack's own, not every app's).
    """

    kind: str
    group: str
    versions: tuple[str, ...]
    plural: str
    namespaced: bool
    optional: bool = False
    namespaces: tuple[str, ...] = ()

    def path(self, version: str, namespace: str | None = None) -> str:
        base = "/api/" + version if not self.group else f"/apis/{self.group}/{version}"
        if namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


DRA = "resource.k8s.io"
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")
GPU_STACK_NAMESPACES = ("gpu-operator", "kube-system", "kueue-system", "nvidia-dra-driver-gpu")

KINDS: tuple[KindSpec, ...] = (
    KindSpec("Node", "", ("v1",), "nodes", False),
    KindSpec("DeviceClass", DRA, DRA_VERSIONS, "deviceclasses", False),
    KindSpec("ResourceSlice", DRA, DRA_VERSIONS, "resourceslices", False),
    KindSpec("ResourceClaim", DRA, DRA_VERSIONS, "resourceclaims", True),
    KindSpec("ResourceClaimTemplate", DRA, DRA_VERSIONS, "resourceclaimtemplates", True),
    # DeviceTaintRule: v1 from Kubernetes 1.37 (a server serving only v1 would otherwise read as "none").
    KindSpec("DeviceTaintRule", DRA, ("v1", "v1beta2", "v1alpha3"), "devicetaintrules", False, optional=True),
    KindSpec("Pod", "", ("v1",), "pods", True),
    KindSpec("Event", "", ("v1",), "events", True),
    KindSpec("ConfigMap", "", ("v1",), "configmaps", True, namespaces=GPU_STACK_NAMESPACES),
    KindSpec("DaemonSet", "apps", ("v1",), "daemonsets", True),
    KindSpec("Deployment", "apps", ("v1",), "deployments", True),
    KindSpec("StatefulSet", "apps", ("v1",), "statefulsets", True),
    KindSpec("Job", "batch", ("v1",), "jobs", True),
    KindSpec("CronJob", "batch", ("v1",), "cronjobs", True),
    KindSpec("PriorityClass", "scheduling.k8s.io", ("v1",), "priorityclasses", False),
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
