from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views
from .chargeback import ChargebackView

app_name = "claims-api"
router = SimpleRouter()
router.register("claims", views.ClaimViewSet, basename="claim")
router.register("findings", views.FindingViewSet, basename="finding")
urlpatterns = [*router.urls, path("chargeback/", ChargebackView.as_view(), name="chargeback")]
