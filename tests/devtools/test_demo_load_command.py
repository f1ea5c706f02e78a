"""manage.py load_demo: three clusters through the real sync, refreshed on rerun, a demo login."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from inventory.models import Cluster, Device, Node, ResourceClaim, SyncRun, SyncStatus

pytestmark = pytest.mark.django_db


def _load(tmp_path, *extra):
    out = StringIO()
    call_command("load_demo", "--out-dir", str(tmp_path), *extra, stdout=out)
    return out.getvalue()


def test_load_demo_creates_three_synced_clusters_and_the_login(tmp_path):
    text = _load(tmp_path)
    assert set(Cluster.objects.values_list("name", flat=True)) >= {"demo", "aicr-h100", "vks-a100"}
    assert set(SyncRun.objects.values_list("status", flat=True)) == {SyncStatus.OK}
    demo = Cluster.objects.get(name="demo")
    assert Node.objects.filter(cluster=demo).count() >= 8
    assert Device.objects.filter(cluster=demo, type="mig").exists()
    states = set(ResourceClaim.objects.filter(cluster=demo).values_list("state", flat=True))
    assert states == {"pending", "allocated", "in_use", "deleting"}
    assert Device.objects.filter(cluster=demo).exclude(metrics={}).exists(), "DCGM scrape joined after the sync"
    assert Device.objects.filter(cluster__name="aicr-h100", driver="gpu.nvidia.com").count() == 16
    assert ResourceClaim.objects.filter(cluster__name="vks-a100", state="in_use").count() == 1
    assert authenticate(username="demo", password="demo").is_superuser
    assert "password 'demo'" in text


def test_rerunning_refreshes_the_same_objects_instead_of_adding_new_ones(tmp_path):
    _load(tmp_path, "--no-user")
    counts = {m: m.objects.count() for m in (Cluster, Node, Device, ResourceClaim)}
    _load(tmp_path, "--no-user")
    assert {m: m.objects.count() for m in counts} == counts
    last = SyncRun.objects.filter(cluster__name="demo").latest("started")
    assert last.counts["ResourceClaim"]["created"] == 0
    assert last.counts["ResourceClaim"]["updated"] == last.counts["ResourceClaim"]["seen"]
    assert last.counts["ResourceClaim"]["deleted"] == 0
