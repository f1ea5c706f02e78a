from django.urls import include, path

from . import object_views, views

app_name = "inventory"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("clusters/", object_views.cluster_list, name="clusters"),
    path("clusters/<slug:cluster_name>/", views.overview, name="cluster"),
    path("clusters/<slug:cluster_name>/deviceclasses/", object_views.deviceclass_list, name="deviceclasses"),
    path("clusters/<slug:cluster_name>/deviceclasses/<str:name>/", object_views.deviceclass_detail, name="deviceclass"),
    path("clusters/<slug:cluster_name>/resourceslices/", object_views.resourceslice_list, name="resourceslices"),
    path("clusters/<slug:cluster_name>/resourceslices/<str:name>/", object_views.resourceslice_detail, name="resourceslice"),
    path("clusters/<slug:cluster_name>/resourceclaimtemplates/", object_views.claimtemplate_list, name="claimtemplates"),
    path("clusters/<slug:cluster_name>/resourceclaimtemplates/<str:namespace>/<str:name>/", object_views.claimtemplate_detail,
         name="claimtemplate"),
    path("yaml/<slug:model>/<int:pk>/", object_views.object_yaml, name="yaml"),
    path("nodes/", views.node_list, name="nodes"),
    path("clusters/<slug:cluster_name>/nodes/<str:name>/", views.node_detail, name="node"),
    path("devices/", views.device_list, name="devices"),
    path("devices/<int:pk>/", views.device_detail, name="device"),
    path("search/", views.search_page, name="search"),
    path("account/api-token/", views.api_token, name="api_token"),
    path("telemetry/", include("inventory.telemetry_urls")),
]
