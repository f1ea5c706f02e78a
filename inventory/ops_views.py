"""Operator actions and auth wiring: "Sync now" per cluster, the ``oidc_enabled`` context, who
the client is (``client_ip``, for login throttling and the metrics allowlist) and the optional
gate in front of ``/metrics`` (``metrics_gate``).

Who may do what is Django permissions, given to the groups ``ensure_roles`` creates:
``inventory.add_syncrun`` lets an operator start a sync (a sync writes a SyncRun).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Callable
from functools import wraps
from pathlib import Path

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import format_html

from .models import Cluster, SyncRun
from .tasks import sync_cluster_task


@permission_required("inventory.add_syncrun", raise_exception=True)
def sync_now(request, cluster_name: str):
    """Enqueue ``inventory.sync_cluster`` for one cluster (runs inline in the embedded, eager mode).

    403 without ``inventory.add_syncrun``; CSRF-protected like every POST. htmx requests get
    the button back with a message; plain form posts are redirected to the cluster page. Any
    other method (the address opened in a browser) is a 405 that says where the button is.
    """
    cluster = get_object_or_404(Cluster, name=cluster_name)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"], content=format_html(
            '<p>Sync now runs from its button on <a href="{}">the page of cluster {}</a>.</p>',
            cluster.get_absolute_url(), cluster.name), content_type="text/html; charset=utf-8")
    result = sync_cluster_task.delay(cluster.pk)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        run = SyncRun.objects.filter(cluster=cluster).order_by("-started", "-pk").first()
        message = f"Sync finished: {result.result}"
        if run is not None and run.status == result.result:
            why = run.error or "; ".join(str(e) for e in (run.errors or [])[:2])
            message += (f" in {run.duration_ms} ms" if run.duration_ms is not None else "") + (f": {why[:300]}" if why else "")
    else:
        message = "Sync queued"
    if request.htmx:
        response = render(request, "includes/sync_button.html", {"cluster": cluster, "sync_message": message})
        response["HX-Trigger"] = "cluster-synced"  # the page's live parts fetch themselves again
        return response
    return redirect(cluster.get_absolute_url(), permanent=False)


def auth_options(request) -> dict[str, bool]:
    """Context processor: ``oidc_enabled`` lets the login page offer single sign-on."""
    return {"oidc_enabled": getattr(settings, "OIDC_ENABLED", False)}


log = logging.getLogger(__name__)


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' backend, first in ``AUTHENTICATION_BACKENDS``: refuses a locked-out client,
    else lets the next backend authenticate. A call without a request (a management command,
    a shell, a test) has no client address to throttle and passes through, where axes' own
    backend would raise."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or with ``TRUSTED_PROXY_COUNT`` = n > 0 (n
    proxies of yours in front, e.g. an ingress controller) the n-th address from the right of
    ``X-Forwarded-For``. Left-most entries are whatever the client wrote, so they are never
    trusted; with no trusted proxy the header is ignored. Used by django-axes
    (``AXES_CLIENT_IP_CALLABLE``) and by the ``/metrics`` allowlist."""
    count = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    if count > 0:
        hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        if len(hops) >= count:
            return hops[-count]
    return request.META.get("REMOTE_ADDR")


def metrics_token() -> str:
    """The bearer token ``/metrics`` asks for: ``METRICS_TOKEN_FILE`` (read on each scrape, so
    a rotated Secret takes effect without a restart) or ``METRICS_TOKEN``; "" for none."""
    path = getattr(settings, "METRICS_TOKEN_FILE", "")
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except OSError:
            log.error("METRICS_TOKEN_FILE %s cannot be read: /metrics refuses every scrape", path)
            return "\0unreadable"  # never equal to a header value: fail closed
    return getattr(settings, "METRICS_TOKEN", "") or ""


def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in getattr(settings, "METRICS_ALLOWED_NETWORKS", [])]


def _allowed(address: str | None, networks) -> bool:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return any(ip in n for n in networks)


def metrics_gate(view: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    """``/metrics`` behind what is configured, each check on its own: a network allowlist
    (``METRICS_ALLOWED_NETWORKS``, CIDRs; else 403) and a bearer token (``METRICS_TOKEN`` or
    ``METRICS_TOKEN_FILE``; else 401 with ``WWW-Authenticate: Bearer``). Both set: both must
    pass. Neither set: open, as before (docs/deploy.md says what it then shows)."""

    @wraps(view)
    def gated(request: HttpRequest) -> HttpResponse:
        networks = _networks()
        if networks and not _allowed(client_ip(request), networks):
            return HttpResponse("forbidden\n", status=403, content_type="text/plain")
        token = metrics_token()
        if token:
            scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
                resp = HttpResponse("unauthorized\n", status=401, content_type="text/plain")
                resp["WWW-Authenticate"] = 'Bearer realm="metrics"'
                return resp
        return view(request)

    return gated
