"""URLs of the telemetry pages (charts, heatmap, allocated-but-idle); included by inventory.urls."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
