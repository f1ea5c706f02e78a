"""Whole-cluster analyses run after a sync that changed something, and on live clusters
also as time passes; an unchanged snapshot is not analysed again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import Cluster, SourceKind
from inventory.runs import analysis_due

pytestmark = pytest.mark.django_db


def test_a_changed_sync_is_always_analysed():
    now = timezone.now()
    c = Cluster(name="s", source_kind=SourceKind.SNAPSHOT, analyzed_at=now)
    assert analysis_due(c, True, now)


def test_an_unchanged_snapshot_is_not_analysed_again():
    now = timezone.now()
    c = Cluster(name="s", source_kind=SourceKind.SNAPSHOT, analyzed_at=now - timedelta(days=3))
    assert not analysis_due(c, False, now)


def test_an_unchanged_live_cluster_is_reanalysed_after_the_refresh_interval(settings):
    settings.ANALYSIS_REFRESH_SECONDS = 60
    now = timezone.now()
    c = Cluster(name="l", source_kind=SourceKind.KUBECONFIG, analyzed_at=now - timedelta(seconds=30))
    assert not analysis_due(c, False, now)
    c.analyzed_at = now - timedelta(seconds=61)
    assert analysis_due(c, False, now)


def test_a_cluster_never_analysed_is_analysed():
    assert analysis_due(Cluster(name="n", source_kind=SourceKind.KUBECONFIG), False, timezone.now())


def test_an_unchanged_resync_skips_the_diagnosis(sync_snapshot, monkeypatch):
    from tests.conftest import CASES

    case = CASES / "capacity-exhausted-all-gpus-allocated/snapshot"
    sync_snapshot(case, name="c")
    calls = []
    import claims.store

    monkeypatch.setattr(claims.store, "sync_diagnosis", lambda *a, **k: calls.append(a))
    sync_snapshot(case, name="c")
    assert calls == []
