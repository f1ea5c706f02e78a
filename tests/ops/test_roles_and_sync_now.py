"""Roles: viewers read, operators may start a sync and attest, admins manage; "Sync now" is
a CSRF-protected POST that only operators may send."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, SyncRun, SyncStatus
from tests.conftest import VKS_SLICES

pytestmark = pytest.mark.django_db


def _perms(group: str) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=group).permissions.all()}


def test_ensure_roles_creates_the_three_groups_idempotently(roles):
    call_command("ensure_roles", stdout=io.StringIO())
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "operator", "admin"}
    viewer, operator, admin = _perms("viewer"), _perms("operator"), _perms("admin")
    assert "inventory.view_cluster" in viewer and all(p.split(".")[1].startswith("view_") for p in viewer)
    assert operator - viewer == {"inventory.add_syncrun", "migration.add_attestation"}
    assert viewer < operator < admin and "inventory.change_cluster" in admin


def test_a_viewer_gets_403_from_sync_now(client, user_with_role):
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(VKS_SLICES))
    client.force_login(user_with_role("viewer"))
    resp = client.post(reverse("cluster_sync", args=[cluster.name]))
    assert resp.status_code == 403
    assert not SyncRun.objects.exists()


def test_an_operator_starts_a_sync_that_records_a_sync_run(client, user_with_role):
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(VKS_SLICES))
    client.force_login(user_with_role("operator"))
    resp = client.post(reverse("cluster_sync", args=[cluster.name]))
    assert resp.status_code == 302 and resp["Location"] == cluster.get_absolute_url()
    run = SyncRun.objects.get(cluster=cluster)
    assert run.status == SyncStatus.OK and run.counts["ResourceSlice"]["created"] == 2


def test_an_htmx_sync_returns_the_button_with_the_result(client, user_with_role):
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(VKS_SLICES))
    client.force_login(user_with_role("operator"))
    resp = client.post(reverse("cluster_sync", args=[cluster.name]), headers={"HX-Request": "true"})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "Sync finished: ok in " in html and f'hx-post="{reverse("cluster_sync", args=["vks"])}"' in html
    assert resp["HX-Trigger"] == "cluster-synced"


def test_a_failed_htmx_sync_says_why_and_the_page_fetches_its_runs_again(client, user_with_role, tmp_path):
    """The snapshot moved away: the button says why the run failed, the run has a duration,
    and the cluster page's recent runs (fetched again on "cluster-synced") list it."""
    gone = tmp_path / "moved-away.json"
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(gone))
    client.force_login(user_with_role("operator"))
    resp = client.post(reverse("cluster_sync", args=[cluster.name]), headers={"HX-Request": "true"})
    html = resp.content.decode()
    assert "Sync finished: failed" in html and "does not exist" in html, html
    run = SyncRun.objects.get(cluster=cluster)
    assert run.status == SyncStatus.FAILED and run.duration_ms is not None
    page = client.get(reverse("inventory:cluster", args=["vks"]))
    assert 'hx-trigger="cluster-synced from:body"' in page.content.decode()
    part = client.get(reverse("inventory:cluster", args=["vks"]), {"part": "syncs"}, headers={"HX-Request": "true"})
    body = part.content.decode()
    assert body.lstrip().startswith('<div class="panel" id="recent-syncs"') and "does not exist" in body
    assert "— ms" not in body and f"{run.duration_ms} ms" in body


def test_sync_now_refuses_get_and_posts_without_a_csrf_token(user_with_role):
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(VKS_SLICES))
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role("operator"))
    url = reverse("cluster_sync", args=[cluster.name])
    resp = client.get(url)  # the address opened in a browser: no sync, and a pointer to the button
    assert resp.status_code == 405 and resp["Allow"] == "POST"
    assert f'href="{cluster.get_absolute_url()}"' in resp.content.decode()
    assert client.post(url).status_code == 403
    assert not SyncRun.objects.exists()


def test_the_sync_button_shows_only_for_operators(rf, user_with_role):
    from django.template.loader import render_to_string

    cluster = Cluster.objects.create(name="vks")
    for role, shown in (("viewer", False), ("operator", True)):
        request = rf.get("/")
        request.user = user_with_role(role)
        html = render_to_string("includes/sync_button.html", {"cluster": cluster}, request=request)
        assert ("Sync now" in html) is shown, role


def test_a_sync_of_an_unknown_cluster_is_404(client, user_with_role):
    client.force_login(user_with_role("operator"))
    assert client.post(reverse("cluster_sync", args=["nope"])).status_code == 404
