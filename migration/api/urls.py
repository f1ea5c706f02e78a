from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

app_name = "migration-api"
router = SimpleRouter()
router.register("readiness", views.ReadinessViewSet, basename="readiness")
urlpatterns = [*router.urls, path("plan/", views.PlanView.as_view(), name="plan")]
