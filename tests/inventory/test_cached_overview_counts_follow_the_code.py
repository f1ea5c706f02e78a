"""The overview's cached counts name the code that made them: after a deploy that changes how
they are counted, a page never serves the old release's numbers for up to an hour."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from inventory import overview_store, queries
from inventory.models import Cluster
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db


def test_counts_cached_by_other_code_are_made_again(sync_snapshot, monkeypatch):
    cache.clear()
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    cluster = Cluster.objects.get(name="aicr")
    first = queries.device_aggregates(cluster)
    key = queries._dra_key(cluster)
    marker = {"products": [], "profiles": [], "other_drivers": [{"driver": "made by this release"}]}
    monkeypatch.setattr(queries, "_overview_counts", lambda *a, **k: marker)
    assert queries.device_aggregates(cluster) == first  # cached: not made again
    monkeypatch.setattr(overview_store, "fingerprint", lambda: "another release")
    assert queries.device_aggregates(cluster) == marker
    assert queries._dra_key(cluster) != key  # the DRA summary's cache key too
