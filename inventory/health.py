"""Health endpoints for load balancers and Kubernetes probes (no login).

``/healthz`` (liveness) answers as long as the process serves requests; it touches nothing,
so a database outage does not get every web pod restarted. ``/readyz`` (readiness) checks
the database and the age of each enabled cluster's last sync (``Cluster.last_sync_at``); it
names the clusters only to a logged-in user (anonymous probes get counts).

The trap with sync age: a snapshot cluster whose last sync succeeded is never re-synced
(``dispatch_due_syncs`` skips it, a file does not change), so its age only grows; it counts
as fresh. ``READY_MAX_SYNC_AGE_SECONDS`` = 0 turns the age check off.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from .models import Cluster, SourceKind, SyncStatus

log = logging.getLogger(__name__)


@never_cache
@login_not_required
def healthz(request):
    """Liveness: 200 ``{"status": "ok"}`` whenever the process can answer."""
    return JsonResponse({"status": "ok"})


def cluster_sync_ages(now) -> list[dict[str, Any]]:
    """One row per enabled cluster: name, last sync status, age in seconds (None = never), stale.

    One query. Raises ``DatabaseError`` when the database cannot be reached.
    """
    max_age = settings.READY_MAX_SYNC_AGE_SECONDS
    rows = []
    for c in Cluster.objects.filter(enabled=True).order_by("name").values(
        "name", "source_kind", "last_sync_at", "last_sync_status"
    ):
        age = (now - c["last_sync_at"]).total_seconds() if c["last_sync_at"] else None
        static = c["source_kind"] == SourceKind.SNAPSHOT and c["last_sync_status"] == SyncStatus.OK
        stale = bool(max_age) and not static and (age is None or age > max_age)
        rows.append({
            "cluster": c["name"],
            "last_sync_status": c["last_sync_status"] or None,
            "last_sync_age_seconds": None if age is None else round(age, 1),
            "stale": stale,
        })
    return rows


@never_cache
@login_not_required
def readyz(request):
    """Readiness: 200 when the database answers and at least one enabled cluster is fresh.

    Body: ``status``, ``database``, ``max_sync_age_seconds`` and, for a logged-in user,
    ``clusters`` (``cluster_sync_ages``); anonymous callers get ``clusters_enabled`` and
    ``clusters_stale`` counts instead, so a probe reveals no cluster names.

    503 when the database is unreachable, or when every enabled cluster's last sync is older
    than ``READY_MAX_SYNC_AGE_SECONDS`` (no enabled cluster at all is ready: nothing to wait for).
    """
    try:
        connection.ensure_connection()
        clusters = cluster_sync_ages(timezone.now())
    except DatabaseError as exc:
        # The error text can carry host names and users: log it, answer with the class only.
        log.warning("readyz: database unavailable: %s", exc)
        connection.close_if_unusable_or_obsolete()
        return JsonResponse({"status": "unavailable", "database": type(exc).__name__}, status=503)
    all_stale = bool(clusters) and all(c["stale"] for c in clusters)
    body: dict[str, Any] = {
        "status": "stale" if all_stale else "ok",
        "database": "ok",
        "max_sync_age_seconds": settings.READY_MAX_SYNC_AGE_SECONDS,
    }
    if request.user.is_authenticated:
        body["clusters"] = clusters
    else:
        # Probes need only the answer: cluster names are for users who logged in.
        body["clusters_enabled"] = len(clusters)
        body["clusters_stale"] = sum(1 for c in clusters if c["stale"])
    return JsonResponse(body, status=503 if all_stale else 200)
