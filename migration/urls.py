from django.urls import path

from . import views

app_name = "migration"
urlpatterns = [
    path("readiness/", views.readiness, name="readiness"),
    path("readiness/<slug:cluster_name>/attest/", views.attest, name="attest"),
    path("readiness/<slug:cluster_name>/evaluate/", views.evaluate, name="evaluate"),
    path("plan/", views.plan, name="plan"),
    path("plan/<slug:cluster_name>/bundle/<str:namespace>.yaml", views.bundle, name="bundle"),
    path("plan/<slug:cluster_name>/bundles.zip", views.bundle_zip, name="bundle_zip"),
    path("plan/<slug:cluster_name>/all.yaml", views.bundle_all, name="bundle_all"),
]
