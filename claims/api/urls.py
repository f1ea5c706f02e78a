from __future__ import annotations

from rest_framework.routers import SimpleRouter

from . import views

app_name = "claims-api"
router = SimpleRouter()
router.register("claims", views.ClaimViewSet, basename="claim")
router.register("findings", views.FindingViewSet, basename="finding")
urlpatterns = router.urls
