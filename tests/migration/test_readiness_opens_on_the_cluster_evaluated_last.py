"""Readiness opens on the reader's last choice, else the cluster whose checklist was
evaluated last (not the first by name); its cluster picker reloads only on its own select;
Re-evaluate says what changed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from migration.models import ReadinessEvaluation

pytestmark = pytest.mark.django_db
URL = reverse("migration:readiness")


def test_without_a_choice_it_opens_on_the_cluster_evaluated_last(client_in, legacy, dra_only):
    # "aicr" sorts first; give "legacy" the newest evaluation.
    newest = ReadinessEvaluation.objects.filter(cluster=legacy).first()
    ReadinessEvaluation.objects.filter(pk=newest.pk).update(evaluated_at=timezone.now() + timedelta(hours=1))
    assert client_in.get(URL).context["cluster"] == legacy


def test_the_readers_last_choice_wins_on_the_next_visit(client_in, legacy, dra_only):
    newest = ReadinessEvaluation.objects.filter(cluster=legacy).first()
    ReadinessEvaluation.objects.filter(pk=newest.pk).update(evaluated_at=timezone.now() + timedelta(hours=1))
    client_in.get(URL, {"cluster": dra_only.name})
    assert client_in.get(URL).context["cluster"] == dra_only


def test_the_cluster_picker_listens_to_its_own_form_only(client_in, legacy):
    body = client_in.get(URL, {"cluster": legacy.name}).content.decode()
    assert "from:select" not in body  # it fired for the attestation form's item select too
    assert 'hx-trigger="change, submit"' in body


def test_re_evaluate_says_nothing_changed_when_nothing_did(client_operator, legacy):
    resp = client_operator.post(reverse("migration:evaluate", args=[legacy.name]), HTTP_HX_REQUEST="true")
    assert "Re-evaluated: nothing changed since the evaluation of" in resp.content.decode()


def test_re_evaluate_names_the_items_that_changed(client_operator, legacy):
    row = ReadinessEvaluation.objects.filter(cluster=legacy).first()
    items = [dict(i) for i in row.items]
    flipped = items[0]
    flipped["status"] = "unknown" if flipped["status"] != "unknown" else "pass"
    ReadinessEvaluation.objects.filter(pk=row.pk).update(items=items, fingerprint="x")
    resp = client_operator.post(reverse("migration:evaluate", args=[legacy.name]), HTTP_HX_REQUEST="true")
    body = resp.content.decode()
    assert "Re-evaluated: 1 item changed" in body and flipped["title"] in body
