"""Operator actions and auth wiring: "Sync now" per cluster, the ``oidc_enabled`` context.

Who may do what is Django permissions, given to the groups ``ensure_roles`` creates:
``inventory.add_syncrun`` lets an operator start a sync (a sync writes a SyncRun).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import permission_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .models import Cluster
from .tasks import sync_cluster_task


@require_POST
@permission_required("inventory.add_syncrun", raise_exception=True)
def sync_now(request, cluster_name: str):
    """Enqueue ``inventory.sync_cluster`` for one cluster (runs inline in the embedded, eager mode).

    403 without ``inventory.add_syncrun``; CSRF-protected like every POST. htmx requests get
    the button back with a message; plain form posts are redirected to the cluster page.
    """
    cluster = get_object_or_404(Cluster, name=cluster_name)
    result = sync_cluster_task.delay(cluster.pk)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        message = f"Sync finished: {result.result}"
    else:
        message = "Sync queued"
    if request.htmx:
        return render(request, "includes/sync_button.html", {"cluster": cluster, "sync_message": message})
    return redirect(cluster.get_absolute_url(), permanent=False)


def auth_options(request) -> dict[str, bool]:
    """Context processor: ``oidc_enabled`` lets the login page offer single sign-on."""
    return {"oidc_enabled": getattr(settings, "OIDC_ENABLED", False)}
