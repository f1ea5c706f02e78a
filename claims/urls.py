from django.urls import path

from . import chargeback_views, views

app_name = "claims"
urlpatterns = [
    path("", views.claim_list, name="list"),
    path("stuck/", views.stuck, name="stuck"),
    path("chargeback/", chargeback_views.chargeback, name="chargeback"),
    path("runbooks/<slug:category>/", views.runbook, name="runbook"),
    path("<slug:cluster_name>/<str:namespace>/<str:name>/", views.claim_detail, name="claim"),
    path("pods/<slug:cluster_name>/<str:namespace>/<str:name>/", views.pod_detail, name="pod"),
]
