"""URLs of the telemetry pages (charts, heatmap, allocated-but-idle); included by inventory.urls."""

from django.urls import path

from . import telemetry_views as v

urlpatterns = [
    path("", v.index, name="telemetry"),
    path("idle/", v.idle, name="telemetry-idle"),
    path("devices/<int:pk>/", v.device_panel, name="telemetry-device"),
    path("devices/<int:pk>/chart/", v.device_chart, name="telemetry-device-chart"),
    path("devices/<int:pk>/chart.json", v.device_chart_json, name="telemetry-device-chart-json"),
    path("clusters/<slug:cluster_name>/nodes/<str:name>/", v.node_panel, name="telemetry-node"),
    path("clusters/<slug:cluster_name>/nodes/<str:name>/chart/", v.node_chart, name="telemetry-node-chart"),
    path("clusters/<slug:cluster_name>/nodes/<str:name>/chart.json", v.node_chart_json, name="telemetry-node-chart-json"),
    path("clusters/<slug:cluster_name>/heatmap/", v.heatmap, name="telemetry-heatmap"),
    path("clusters/<slug:cluster_name>/unmatched/", v.unmatched, name="telemetry-unmatched"),
    path("<slug:cluster_name>/heatmap/", v.heatmap),
    path("<slug:cluster_name>/unmatched/", v.unmatched),
]
