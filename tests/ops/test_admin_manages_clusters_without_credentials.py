"""Clusters are managed in the admin by how to reach them; sync runs are read-only history."""

from __future__ import annotations

import pytest
from django.contrib import admin

from inventory.models import Cluster, SyncRun

pytestmark = pytest.mark.django_db


def test_cluster_admin_edits_reachability_not_credentials(admin_client):
    resp = admin_client.get("/admin/inventory/cluster/add/")
    assert resp.status_code == 200
    fields = set(resp.context["adminform"].form.fields)
    assert {"name", "source_kind", "kubeconfig_path", "kube_context", "sync_interval_seconds", "enabled"} <= fields
    # No field of the model can hold a token, password or certificate.
    names = {f.name for f in Cluster._meta.get_fields()}
    assert not any(w in n for n in names for w in ("token", "password", "secret", "cert", "key_data"))


def test_admin_creates_a_cluster(admin_client):
    resp = admin_client.post("/admin/inventory/cluster/add/", {
        "name": "prod-a", "enabled": "on", "sync_interval_seconds": "60", "source_kind": "kubeconfig",
        "kubeconfig_path": "/kube/config", "kube_context": "prod-a", "snapshot_path": "", "prometheus_url": "",
    })
    assert resp.status_code == 302, resp.context["adminform"].form.errors if resp.context else resp
    assert Cluster.objects.get(name="prod-a").kube_context == "prod-a"


def test_sync_runs_are_read_only_in_the_admin(admin_client, sync_snapshot, rf, admin_user):
    from tests.conftest import VKS_SLICES

    run = sync_snapshot(VKS_SLICES, name="vks", hooks=False)
    model_admin = admin.site._registry[SyncRun]
    request = rf.get("/")
    request.user = admin_user
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, run)
    assert admin_client.get(f"/admin/inventory/syncrun/{run.pk}/change/").status_code == 200
    assert admin_client.get("/admin/inventory/syncrun/").status_code == 200
