"""Inventory API rows: clusters, nodes, devices (with the claims holding them).

Every field is a stored column or comes from the page hook of the view (``holders``,
``totals``): a serializer never queries per row. Times are ISO 8601 in UTC; ``memory_bytes``
in bytes; ``metrics`` keyed by DCGM field name in that field's own unit.
"""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ..models import Cluster, Device, DeviceClass, Node, ResourceSlice
from ..tables import node_status


def page_url(obj: Any) -> str | None:
    """The object's dashboard page, None when its stored name cannot be part of a URL."""
    try:
        return obj.get_absolute_url()
    except NoReverseMatch:
        return None


class ClusterTotalsSerializer(serializers.Serializer):
    nodes = serializers.IntegerField()
    gpus = serializers.IntegerField(help_text="physical GPUs: whole or MIG-partitioned")
    migs = serializers.IntegerField(help_text="MIG instances")
    allocated = serializers.IntegerField(help_text="allocated devices of gpu.nvidia.com")
    free = serializers.IntegerField(help_text="devices of gpu.nvidia.com a new claim could be allocated now (none on NotReady or cordoned nodes)")
    not_ready = serializers.IntegerField(help_text="nodes NotReady or cordoned")
    plugin_gpus = serializers.IntegerField(help_text="nvidia.com/gpu the NVIDIA device plugin advertises (status.allocatable)")
    plugin_migs = serializers.IntegerField(help_text="nvidia.com/mig-* the NVIDIA device plugin advertises (status.allocatable)")


class ClusterSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="inventory-api:cluster-detail", lookup_field="name")
    page = serializers.SerializerMethodField()
    totals = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["id", "url", "page", "name", "source_kind", "enabled", "server_version", "last_sync_at",
                  "last_sync_status", "metrics_at", "analyzed_at", "data_changed_at", "totals"]

    def get_page(self, obj: Cluster) -> str | None:
        return page_url(obj)

    @extend_schema_field(ClusterTotalsSerializer)
    def get_totals(self, obj: Cluster) -> dict[str, int]:
        row = (self.context.get("totals") or {}).get(obj.pk) or {}
        return {k: row.get(k, 0) for k in ClusterTotalsSerializer().fields}


class NodeSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="inventory-api:node-detail")
    page = serializers.SerializerMethodField()
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    status = serializers.SerializerMethodField(help_text="Ready, NotReady, Cordoned, or unknown (known from slices only)")
    device_plugin_gpus = serializers.IntegerField(
        read_only=True, allow_null=True,
        help_text="nvidia.com/gpu in status.allocatable (the NVIDIA device plugin's GPUs); null on a node the device plugin "
                  "does not serve. gpu_count counts GPUs in ResourceSlices")
    device_plugin_mig_instances = serializers.IntegerField(
        source="plugin_mig_count", read_only=True, help_text="nvidia.com/mig-* in status.allocatable (mixed MIG strategy)")
    free_count = serializers.IntegerField(
        source="free", read_only=True,
        help_text="devices of gpu.nvidia.com a new claim could be allocated now: idle_count, 0 on a NotReady or cordoned node")
    idle_count = serializers.IntegerField(
        source="free_count", read_only=True, help_text="unallocated devices of gpu.nvidia.com, whatever the node's status")

    class Meta:
        model = Node
        fields = ["id", "url", "page", "cluster", "name", "uid", "status", "ready", "unschedulable", "from_slices",
                  "kubelet_version", "gpu_product", "gpu_count", "device_plugin_gpus", "device_plugin_mig_instances",
                  "mig_count", "allocated_count", "free_count", "idle_count", "device_count", "labels"]

    def get_page(self, obj: Node) -> str | None:
        return page_url(obj)

    def get_status(self, obj: Node) -> str:
        return node_status(obj)


class HolderPodSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="status.reservedFor[].name")
    uid = serializers.CharField(help_text="status.reservedFor[].uid")
    stored = serializers.BooleanField(help_text="a Pod with this uid is stored")


class HolderSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    state = serializers.CharField()
    request = serializers.CharField(help_text="the claim's request the device was allocated for")
    page = serializers.CharField(allow_null=True)
    pods = HolderPodSerializer(many=True)


class DeviceSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="inventory-api:device-detail")
    page = serializers.SerializerMethodField()
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    holders = serializers.SerializerMethodField(help_text="claims whose allocation names this device")

    class Meta:
        model = Device
        fields = ["id", "url", "page", "cluster", "node_name", "driver", "pool", "name", "type", "type_raw", "uuid",
                  "parent_uuid", "product_name", "profile", "architecture", "driver_version", "pci_bus_id",
                  "memory_bytes", "device_classes", "metrics", "metrics_at", "metrics_pod", "holders"]

    def get_page(self, obj: Device) -> str | None:
        return page_url(obj)

    @extend_schema_field(HolderSerializer(many=True))
    def get_holders(self, obj: Device) -> list[dict[str, Any]]:
        return [holder_json(h) for h in getattr(obj, "holders", [])]


def holder_json(h: dict[str, Any]) -> dict[str, Any]:
    """One ``queries.attach_holders`` holder as the API and the exports write it."""
    claim = h["claim"]
    return {
        "namespace": claim.namespace, "name": claim.name, "state": claim.state, "request": h["request"],
        "page": _claim_page(claim),
        "pods": [{"name": p["name"], "uid": p["uid"], "stored": p["pod"] is not None} for p in h["pods"]],
    }  # fmt: skip


def _claim_page(claim) -> str | None:
    try:
        return reverse("claims:claim", args=[claim.cluster.name, claim.namespace, claim.name])
    except NoReverseMatch:
        return None


class DeviceClassSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="inventory-api:deviceclass-detail")
    page = serializers.SerializerMethodField()
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    selectors = serializers.ListField(child=serializers.CharField(), help_text="spec.selectors[].cel.expression")

    class Meta:
        model = DeviceClass
        fields = ["id", "url", "page", "cluster", "name", "uid", "selectors", "extended_resource_name"]

    def get_page(self, obj: DeviceClass) -> str | None:
        try:
            return reverse("inventory:deviceclass", args=[obj.cluster.name, obj.name])
        except NoReverseMatch:
            return None


class ResourceSliceSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="inventory-api:resourceslice-detail")
    page = serializers.SerializerMethodField()
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = ResourceSlice
        fields = ["id", "url", "page", "cluster", "name", "uid", "driver", "pool", "pool_generation",
                  "resource_slice_count", "node_name", "all_nodes", "device_count"]

    def get_page(self, obj: ResourceSlice) -> str | None:
        try:
            return reverse("inventory:resourceslice", args=[obj.cluster.name, obj.name])
        except NoReverseMatch:
            return None
