"""Inventory API: clusters, nodes and devices, filtered by the list pages' own FilterSets."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import queries
from ..filters import DeviceClassFilter, DeviceFilter, NodeFilter, ResourceSliceFilter
from ..models import Cluster, Device, DeviceClass, Node, ResourceSlice
from .base import ReadOnlyViewSet
from .serializers import (
    ClusterSerializer,
    DeviceClassSerializer,
    DeviceSerializer,
    NodeSerializer,
    ResourceSliceSerializer,
)


class ClusterViewSet(ReadOnlyViewSet):
    """Clusters with their node and GPU totals (by name: ``/api/inventory/clusters/<name>/``)."""

    queryset = Cluster.objects.order_by("name")
    serializer_class = ClusterSerializer
    lookup_field = "name"

    def get_serializer_context(self):
        ctx = super().get_serializer_context()
        if self.request is not None:  # schema generation has no request
            ctx["totals"] = {r["cluster"].pk: r for r in queries.cluster_rows()}
        return ctx


class NodeViewSet(ReadOnlyViewSet):
    """Nodes with GPU counts; ``?cluster=&q=&product=&driver=&min_free=&problems=`` as the node list."""

    queryset = Node.objects.select_related("cluster").defer("raw").order_by("cluster__name", "name", "pk")
    serializer_class = NodeSerializer
    filterset_class = NodeFilter


class DeviceViewSet(ReadOnlyViewSet):
    """Devices with the claims (and their pods) holding them; filters as the device list."""

    queryset = Device.objects.select_related("cluster").defer("capacity").order_by(
        "cluster__name", "node_name", "driver", "name", "pk"
    )
    serializer_class = DeviceSerializer
    filterset_class = DeviceFilter

    def page_hook(self, rows):
        queries.attach_holders(None, rows)


class DeviceClassViewSet(ReadOnlyViewSet):
    """DeviceClasses with their CEL selectors."""

    queryset = DeviceClass.objects.select_related("cluster").defer("raw").order_by("cluster__name", "name", "pk")
    serializer_class = DeviceClassSerializer
    filterset_class = DeviceClassFilter


class ResourceSliceViewSet(ReadOnlyViewSet):
    """ResourceSlices (pool, generation, node); their devices: ``/api/inventory/devices/?slice=<name>``."""

    queryset = ResourceSlice.objects.select_related("cluster").defer("raw").order_by(
        "cluster__name", "node_name", "driver", "name", "pk")
    serializer_class = ResourceSliceSerializer
    filterset_class = ResourceSliceFilter


# Each app's endpoints by URL name; the root lists those that resolve (no app imports another).
ROOT = {
    "clusters": "inventory-api:cluster-list",
    "nodes": "inventory-api:node-list",
    "devices": "inventory-api:device-list",
    "device-classes": "inventory-api:deviceclass-list",
    "resource-slices": "inventory-api:resourceslice-list",
    "claims": "claims-api:claim-list",
    "findings": "claims-api:finding-list",
    "chargeback": "claims-api:chargeback",
    "readiness": "migration-api:readiness-list",
    "plan": "migration-api:plan",
    "schema": "api-schema",
}


class APIRootView(APIView):
    """The API's endpoints; the OpenAPI 3 schema is at ``/api/schema/``."""

    @extend_schema(exclude=True)
    def get(self, request, format=None):
        out = {}
        for key, name in ROOT.items():
            try:
                out[key] = request.build_absolute_uri(reverse(name))
            except NoReverseMatch:
                continue
        return Response(out)


class NotFoundView(APIView):
    """Any other path under ``/api/``: a JSON 404 (after authentication, as every endpoint),
    not the dashboard's HTML page. Catches e.g. ``/api/claims/claims/0.5/``, which no route's
    id pattern matches."""

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        raise NotFound("no such API endpoint or object")

    post = put = patch = delete = get
