"""The readiness page: checklist from synced data, attestations, history, permissions, bounded SQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from migration.models import Attestation, ReadinessEvaluation, Trigger, items_fingerprint

pytestmark = pytest.mark.django_db
URL = reverse("migration:readiness")


def _attest_url(cluster):
    return reverse("migration:attest", args=[cluster.name])


def test_readiness_page_needs_login(client, legacy):
    resp = client.get(URL)
    assert resp.status_code == 302 and resp["Location"].startswith(reverse("login"))
    resp = client.post(_attest_url(legacy), {"item_id": "evidence", "evidence_url": "https://x.example.com/"})
    assert resp.status_code == 302 and Attestation.objects.count() == 0


def test_checklist_shows_each_item_with_status_evidence_and_next_step(client_in, legacy, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        resp = client_in.get(URL, {"cluster": legacy.name})
    assert resp.status_code == 200
    latest = ReadinessEvaluation.objects.get(cluster=legacy)
    body = resp.content.decode()
    assert f"{latest.score}%" in body
    items = resp.context["items"]
    assert [i["id"] for i in items] == [i["id"] for i in latest.items]
    for item in items:
        assert f'id="item-{item["id"]}"' in body
        assert item["next_step"] in body
    dcgm = next(i for i in items if i["id"] == "dcgm_alerts")
    assert dcgm["badge"]["colour"] == {"pass": "green", "fail": "red"}[dcgm["status"]]
    assert all(line in body for line in dcgm["evidence"][:2])


def test_htmx_cluster_switch_returns_only_the_partial(client_in, legacy, dra_only):
    resp = client_in.get(URL, {"cluster": dra_only.name}, HTTP_HX_REQUEST="true")
    body = resp.content.decode()
    assert body.lstrip().startswith('<div id="readiness">') and "<html" not in body
    assert reverse("migration:evaluate", args=[dra_only.name]) not in body  # viewer: no buttons
    score = ReadinessEvaluation.objects.get(cluster=dra_only).score
    assert f"{score}%" in body and "dcgm-exporter" in body


def test_unknown_cluster_is_404(client_in, legacy):
    assert client_in.get(URL, {"cluster": "nope"}).status_code == 404


def test_viewer_sees_no_attest_form_and_gets_403_on_post(client_in, legacy):
    resp = client_in.get(URL, {"cluster": legacy.name})
    assert _attest_url(legacy) not in resp.content.decode()
    resp = client_in.post(_attest_url(legacy), {"item_id": "evidence", "evidence_url": "https://x.example.com/"})
    assert resp.status_code == 403
    assert Attestation.objects.count() == 0
    assert client_in.post(reverse("migration:evaluate", args=[legacy.name])).status_code == 403


def test_operator_attests_an_item_and_the_checklist_counts_it(client_operator, legacy, operator):
    resp = client_operator.get(URL, {"cluster": legacy.name})
    assert _attest_url(legacy) in resp.content.decode() and "csrfmiddlewaretoken" in resp.content.decode()
    before = ReadinessEvaluation.objects.get(cluster=legacy)
    assert before.statuses()["evidence"] == "unknown"
    resp = client_operator.post(_attest_url(legacy), {
        "item_id": "evidence", "evidence_url": "https://git.example.com/infra/-/commit/abc123", "note": "runbook v3"})
    assert resp.status_code == 302
    att = Attestation.objects.get()
    assert (att.attested_by, att.item_id, att.cluster) == (operator, "evidence", legacy)
    latest = ReadinessEvaluation.objects.filter(cluster=legacy).first()
    assert latest.trigger == Trigger.ATTESTATION and latest.statuses()["evidence"] == "attested"
    assert latest.passed == before.passed + 1
    page = client_operator.get(URL, {"cluster": legacy.name}).content.decode()
    assert "https://git.example.com/infra/-/commit/abc123" in page and operator.username in page


def test_user_with_the_permission_may_attest(client, legacy, django_user_model):
    user = django_user_model.objects.create_user("perm-holder", password="pw-perm-1")
    user.user_permissions.add(Permission.objects.get(codename="add_attestation", content_type__app_label="migration"))
    client.force_login(user)
    resp = client.post(_attest_url(legacy), {"item_id": "operator_pinned", "evidence_url": "https://git.example.com/v"})
    assert resp.status_code == 302 and Attestation.objects.filter(item_id="operator_pinned").exists()


def test_invalid_attestation_is_refused_with_the_form_errors(client_operator, legacy):
    resp = client_operator.post(_attest_url(legacy), {"item_id": "no_such_item", "evidence_url": "not a url"})
    assert resp.status_code == 400 and Attestation.objects.count() == 0
    assert resp.context["form"].errors.keys() >= {"item_id", "evidence_url"}
    # A note is a line, not a document: 100,000 characters are refused, not rendered whole.
    resp = client_operator.post(_attest_url(legacy), {"item_id": "evidence", "evidence_url": "https://x.example.com/",
                                                      "note": "n" * 100_000})
    assert resp.status_code == 400 and Attestation.objects.count() == 0
    assert "note" in resp.context["form"].errors and len(resp.content) < 100_000


def test_attestation_expiry_is_shown(client_in, legacy, settings):
    settings.READINESS_ATTESTATION_DAYS = 90
    now = timezone.now()
    soon = Attestation.objects.create(cluster=legacy, item_id="evidence", attested_by_name="sre-a",
                                      attested_at=now - timedelta(days=85), evidence_url="https://runbooks.example.com/a")
    gone = Attestation.objects.create(cluster=legacy, item_id="operator_pinned", attested_by_name="sre-b",
                                      attested_at=now - timedelta(days=120), evidence_url="https://runbooks.example.com/b")
    resp = client_in.get(URL, {"cluster": legacy.name})
    body = resp.content.decode()
    assert soon.expires_at.strftime("%Y-%m-%d") in body and gone.expires_at.strftime("%Y-%m-%d") in body
    rows = {a.pk: a for a in resp.context["attestations"]}
    assert rows[soon.pk].valid_now and rows[soon.pk].expires_soon
    assert not rows[gone.pk].valid_now
    assert "expires soon" in body and "expired" in body


def _backdate(cluster, days: int, changes: dict[str, str]) -> ReadinessEvaluation:
    latest = ReadinessEvaluation.objects.filter(cluster=cluster).first()
    items = [dict(i, status=changes.get(i["id"], i["status"])) for i in latest.items]
    passed = sum(1 for i in items if i["status"] in ("pass", "attested"))
    return ReadinessEvaluation.objects.create(
        cluster=cluster, evaluated_at=latest.evaluated_at - timedelta(days=days), trigger=Trigger.SYNC,
        score=round(100 * passed / len(items)), passed=passed, total=len(items), stage="", items=items,
        fingerprint=items_fingerprint(items))


def test_since_last_week_diffs_against_the_newest_evaluation_at_least_seven_days_older(client_in, legacy):
    latest = ReadinessEvaluation.objects.get(cluster=legacy)
    assert latest.statuses()["gpu_nodes_tainted"] == "pass"
    _backdate(legacy, 20, {"gpu_nodes_tainted": "fail", "queueing": "fail"})
    week = _backdate(legacy, 8, {"gpu_nodes_tainted": "fail"})
    _backdate(legacy, 2, {"gpu_node_pool": "fail"})  # too recent to be "last week"
    resp = client_in.get(URL, {"cluster": legacy.name})
    assert resp.context["week"] == week
    diff = resp.context["week_diff"]
    assert [(d["id"], d["old"], d["new"]) for d in diff] == [("gpu_nodes_tainted", "fail", "pass")]
    history = resp.context["history"]
    assert len(history) == 4 and history[-1]["first"]
    assert [c["new"]["value"] for c in history[0]["changes"]] == ["pass"]  # gpu_node_pool came back


def test_without_an_evaluation_a_week_old_the_page_says_so(client_in, legacy):
    _backdate(legacy, 3, {"queueing": "fail"})
    resp = client_in.get(URL, {"cluster": legacy.name})
    assert resp.context["week"] is None
    assert "No evaluation a week ago" in resp.content.decode()


def test_cluster_never_evaluated_offers_evaluation_to_operators(client_operator, sync_snapshot):
    from inventory.models import Cluster
    from tests.conftest import VKS_SLICES

    sync_snapshot(VKS_SLICES, name="vks", hooks=False)
    cluster = Cluster.objects.get(name="vks")
    resp = client_operator.get(URL, {"cluster": "vks"})
    assert "No evaluation of vks yet" in resp.content.decode()
    resp = client_operator.post(reverse("migration:evaluate", args=["vks"]))
    assert resp.status_code == 302
    assert ReadinessEvaluation.objects.filter(cluster=cluster, trigger=Trigger.MANUAL).count() == 1
    client_operator.post(reverse("migration:evaluate", args=["vks"]))
    assert ReadinessEvaluation.objects.filter(cluster=cluster).count() == 1


def test_attestation_text_from_users_is_escaped(client_operator, legacy):
    client_operator.post(_attest_url(legacy), {"item_id": "evidence", "evidence_url": "https://x.example.com/a",
                                               "note": "<script>alert(1)</script>"})
    body = client_operator.get(URL, {"cluster": legacy.name}).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_an_item_with_a_line_per_node_shows_the_first_lines_and_counts_the_rest(client_in, sync_snapshot, tmp_path):
    """On a fleet the per-node items hold a line per node (5,000 nodes: 20,000 lines on one
    page); the page shows the first ten of each and links the whole evaluation in the API."""
    from devtools.benchfleet import generate_benchmark_fleet
    from inventory.models import Cluster
    from migration.views import EVIDENCE_SHOWN
    from tests.conftest import write_list

    assert sync_snapshot(write_list(tmp_path / "fleet.json", generate_benchmark_fleet(25)), "fleet").status == "ok"
    cluster = Cluster.objects.get(name="fleet")
    latest = ReadinessEvaluation.objects.get(cluster=cluster)
    long = [i for i in latest.items if len(i["evidence"]) > EVIDENCE_SHOWN]
    assert long, "the fleet gives per-node evidence"
    body = client_in.get(URL, {"cluster": cluster.name}).content.decode()
    api = reverse("migration-api:readiness-detail", args=[latest.pk])
    for item in long:
        lines = item["evidence"]
        assert all(line in body for line in lines[:EVIDENCE_SHOWN])
        assert lines[-1] not in body
        assert f"and {len(lines) - EVIDENCE_SHOWN:,} more" in body
    assert f'href="{api}"' in body
    assert client_in.get(api).status_code == 200


def test_the_stage_card_says_which_items_production_still_needs(client_in, legacy):
    """A high score beside "proof of concept" reads as a contradiction unless the card says
    the stage's rule: production needs items 3 onwards, and which of them are not met."""
    resp = client_in.get(URL, {"cluster": legacy.name})
    latest = ReadinessEvaluation.objects.get(cluster=legacy)
    missing = [n for n, item in enumerate(latest.items, 1) if n >= 3 and item["status"] not in ("pass", "attested")]
    body = resp.content.decode()
    assert latest.stage == "proof of concept" and missing  # the fixture's cluster lacks an item
    assert f"production needs items 3-{len(latest.items)} met; not met: {', '.join(map(str, missing))}" in body
