"""``seed_readiness_demo`` gives the demo a changing history, attestations and a device-plugin cluster."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from devtools.readiness_demo import DEMO_NOTE, LEGACY_CLUSTER, seed_readiness_history
from migration.evaluation import week_before
from migration.models import Attestation, ReadinessEvaluation, Trigger

pytestmark = pytest.mark.django_db


def test_seeded_history_changes_over_time_and_mixes_statuses(legacy):
    now = timezone.now()
    seed_readiness_history(legacy, now)
    rows = list(ReadinessEvaluation.objects.filter(cluster=legacy))
    demo = [r for r in rows if r.trigger == Trigger.DEMO]
    assert len(demo) >= 3 and all(r.evaluated_at < now - timedelta(days=1) for r in demo)
    scores = [r.score for r in sorted(demo, key=lambda r: r.evaluated_at)]
    assert scores == sorted(scores) and scores[0] < scores[-1]
    latest = rows[0]
    statuses = set(latest.statuses().values())
    assert {"pass", "attested"} <= statuses
    assert week_before(latest) is not None
    atts = list(Attestation.objects.filter(cluster=legacy))
    assert any(not a.is_valid(now) for a in atts) and any(a.is_valid(now) for a in atts)


def test_seeding_twice_replaces_the_demo_rows(legacy):
    now = timezone.now()
    seed_readiness_history(legacy, now)
    counts = (ReadinessEvaluation.objects.filter(trigger=Trigger.DEMO).count(),
              Attestation.objects.filter(note__startswith=DEMO_NOTE).count())
    seed_readiness_history(legacy, now)
    assert (ReadinessEvaluation.objects.filter(trigger=Trigger.DEMO).count(),
            Attestation.objects.filter(note__startswith=DEMO_NOTE).count()) == counts


def test_command_loads_the_device_plugin_cluster(db, capsys):
    call_command("seed_readiness_demo", "--cluster", LEGACY_CLUSTER)
    out = capsys.readouterr().out
    assert f"cluster {LEGACY_CLUSTER}: ok" in out
    assert ReadinessEvaluation.objects.filter(cluster__name=LEGACY_CLUSTER, trigger=Trigger.DEMO).exists()
    latest = ReadinessEvaluation.objects.filter(cluster__name=LEGACY_CLUSTER).first()
    assert {"pass", "fail", "attested"} <= set(latest.statuses().values())  # the demo shows every kind
