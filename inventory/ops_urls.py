"""Operational endpoints, included at the site root by config.urls.

Health and metrics are reachable without login (probes and Prometheus have no session);
``/metrics`` may be gated by a bearer token or a network allowlist (``ops_views.metrics_gate``);
the OIDC views are wrapped with ``login_not_required`` because LoginRequiredMiddleware
would otherwise send the sign-on callback to the login page.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.urls import path

from . import health, metrics, ops_views

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", ops_views.metrics_gate(metrics.metrics_view), name="metrics"),
    path("clusters/<slug:cluster_name>/sync/", ops_views.sync_now, name="cluster_sync"),
]

if getattr(settings, "OIDC_ENABLED", False):
    from mozilla_django_oidc import urls as oidc_urls
    from mozilla_django_oidc import views as oidc_views

    urlpatterns += [
        path("oidc/callback/", login_not_required(oidc_urls.OIDCCallbackClass.as_view()),
             name="oidc_authentication_callback"),
        path("oidc/authenticate/", login_not_required(oidc_urls.OIDCAuthenticateClass.as_view()),
             name="oidc_authentication_init"),
        path("oidc/logout/", oidc_views.OIDCLogoutView.as_view(), name="oidc_logout"),
    ]
