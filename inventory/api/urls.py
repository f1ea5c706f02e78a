"""``/api/``: the root, the OpenAPI schema, and the inventory endpoints under ``inventory/``."""

from __future__ import annotations

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("clusters", views.ClusterViewSet, basename="cluster")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("devices", views.DeviceViewSet, basename="device")
router.register("device-classes", views.DeviceClassViewSet, basename="deviceclass")
router.register("resource-slices", views.ResourceSliceViewSet, basename="resourceslice")

inventory_patterns = ([*router.urls], "inventory-api")

urlpatterns = [
    path("", views.APIRootView.as_view(), name="api-root"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("inventory/", include(inventory_patterns)),
    # Last of all /api/ (config.urls includes the claims and migration APIs before this).
    re_path(r"^(?P<rest>.+)$", views.NotFoundView.as_view(), name="api-not-found"),
]
