from django.urls import include, path

from . import views

app_name = "inventory"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("clusters/<slug:cluster_name>/", views.overview, name="cluster"),
    path("nodes/", views.node_list, name="nodes"),
    path("clusters/<slug:cluster_name>/nodes/<str:name>/", views.node_detail, name="node"),
    path("devices/", views.device_list, name="devices"),
    path("devices/<int:pk>/", views.device_detail, name="device"),
    path("search/", views.search_page, name="search"),
    path("telemetry/", include("inventory.telemetry_urls")),
]
