"""The overview and cluster pages show the same numbers whether they read the summaries a
worker kept through its syncs (one claim changed since the first) or ones a fresh process
recomputes from the stored cluster (nothing kept, nothing cached)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from inventory import queries
from inventory import sync as inventory_sync
from inventory.models import Cluster
from tests.dra import shapes
from tests.inventory.test_overview_summaries_kept_through_changes_equal_a_full_recomputation import (
    MIG_A,
    Fleet,
    claim,
    sync,
)

pytestmark = pytest.mark.django_db


def _numbers(client, url: str) -> dict:
    ctx = client.get(url).context
    return {
        "products": ctx["products"], "profiles": ctx["profiles"], "other_drivers": ctx["other_drivers"],
        "totals": ctx["totals"],
        "clusters": [(r["cluster"].name, r["migs"], r["free"], r["gpus"], r["allocated"]) for r in ctx["clusters"]],
    }  # fmt: skip


def test_pages_show_the_same_numbers_from_kept_and_recomputed_summaries(tmp_path, client_in):
    queries.forget_overview()
    fleet = Fleet()
    cluster = Cluster.objects.create(name="kept")
    sync(cluster, fleet, tmp_path / "snapshot.json")
    fleet.put(claim("mig-a2", [shapes.result("gpu", "gpu-1-mig-1g18gb-19-2", MIG_A)], MIG_A))
    sync(cluster, fleet, tmp_path / "snapshot.json")
    kept = queries.kept_dra_summaries(cluster)
    assert kept is not None and kept.recomputed == {MIG_A}  # the worker followed the change
    urls = [reverse("inventory:overview"), reverse("inventory:cluster", args=["kept"])]
    cache.clear()  # the pages compute from what the worker keeps, not from the warmed cache
    from_kept = [_numbers(client_in, u) for u in urls]
    [mig] = [p for p in from_kept[1]["profiles"] if p["profile"] == "1g.18gb"]
    assert mig["total"] == 1 and mig["placements"] > 0  # the new claim's placement is an instance
    queries.forget_overview()
    inventory_sync.forget_models()
    cache.clear()
    assert queries.kept_dra_summaries(cluster) is None
    assert [_numbers(client_in, u) for u in urls] == from_kept


def test_a_fresh_process_reads_another_clusters_device_counts_from_what_its_sync_kept(tmp_path, client_in, monkeypatch):
    """The all-clusters overview in a process that synced only one cluster (a command, a web
    process): the other cluster's per-pool device counts come from what its own sync kept in
    the database, not from reading every one of its devices, and they are the same numbers."""
    queries.forget_overview()
    other, fleet = Cluster.objects.create(name="other"), Fleet()
    sync(other, fleet, tmp_path / "other.json")
    url = reverse("inventory:overview")
    cache.clear()
    expected = _numbers(client_in, url)
    queries.forget_overview()
    inventory_sync.forget_models()
    cache.clear()
    read: list[object] = []
    real = queries._pool_device_rows
    monkeypatch.setattr(queries, "_pool_device_rows", lambda c, pools: read.append((c.name, pools)) or real(c, pools))
    assert _numbers(client_in, url) == expected
    assert ("other", None) not in read  # no whole read of its devices
