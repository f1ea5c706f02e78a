"""Every list page downloads as CSV and JSON (``?format=``) with its current filters: all
matching rows (not one page), the page's order, holders and findings, in queries fixed per
chunk of rows, with formula-looking cluster text defused in CSV."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from claims.models import Finding
from inventory import listexport
from inventory.models import AllocationResult, Device, Node, ResourceClaim
from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES, write_list

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"
CAPACITY_CASE = CASES / "capacity-exhausted-all-gpus-allocated/snapshot"


@pytest.fixture
def loaded(sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig")
    sync_snapshot(CAPACITY_CASE, name="capacity")
    sync_snapshot(H100_SLICES, name="aicr")
    sync_snapshot(VKS_SLICES, name="vks")
    sync_snapshot(VKS_CLAIM, name="vks")


def _body(resp) -> str:
    return b"".join(resp.streaming_content).decode()


def _csv(resp) -> list[dict]:
    assert resp["Content-Type"] == "text/csv; charset=utf-8"
    assert resp["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.DictReader(io.StringIO(_body(resp))))


def test_device_csv_has_every_filtered_row_not_one_page(client_in, loaded):
    assert Device.objects.count() > 50
    rows = _csv(client_in.get(reverse("inventory:devices"), {"format": "csv"}))
    assert len(rows) == Device.objects.count()
    mig = Device.objects.filter(cluster__name="mig", type="mig").exclude(profile="").first()
    rows = _csv(client_in.get(reverse("inventory:devices"), {"format": "csv", "cluster": "mig", "profile": mig.profile}))
    assert len(rows) == Device.objects.filter(cluster__name="mig", profile=mig.profile).count() > 1
    assert {r["profile"] for r in rows} == {mig.profile} and {r["cluster"] for r in rows} == {"mig"}


def test_device_rows_name_the_claims_holding_them(client_in, loaded):
    rows = _csv(client_in.get(reverse("inventory:devices"), {"format": "csv", "allocated": "true"}))
    by_key = {(r["cluster"], r["pool"], r["name"]): r for r in rows}
    results = AllocationResult.objects.filter(device__isnull=False).select_related("claim", "device__cluster")
    assert results.count() == len(rows) > 3
    for r in results:
        row = by_key[(r.device.cluster.name, r.device.pool, r.device.name)]
        assert f"{r.claim.namespace}/{r.claim.name}" in row["claims"].split("; ")


def test_claims_json_is_the_filtered_claims_with_devices_and_findings(client_in, loaded):
    claim = ResourceClaim.objects.filter(results__isnull=False, cluster__name="capacity").first()
    resp = client_in.get(reverse("claims:list"), {"format": "json", "cluster": "capacity", "namespace": claim.namespace})
    assert resp["Content-Type"] == "application/json"
    rows = json.loads(_body(resp))
    assert len(rows) == ResourceClaim.objects.filter(cluster__name="capacity", namespace=claim.namespace).count()
    row = next(r for r in rows if r["name"] == claim.name)
    assert sorted(row["devices"]) == sorted(f"{r.driver}/{r.pool}/{r.device_name}" for r in claim.results.all())
    assert row["open_findings"] == list(
        Finding.objects.open().filter(claim=claim).order_by("severity_rank", "pk").values_list("category", flat=True))


def test_stuck_csv_is_the_queue_in_its_order(client_in, loaded):
    rows = _csv(client_in.get(reverse("claims:stuck"), {"format": "csv"}))
    page = client_in.get(reverse("claims:stuck")).context["findings"]
    assert rows and [(r["category"], r["name"]) for r in rows] == [(f.category, f.name) for f in page]
    assert rows[0]["runbook"].startswith("/claims/runbooks/")


def test_node_csv_keeps_the_cluster_filter(client_in, loaded):
    rows = _csv(client_in.get(reverse("inventory:nodes"), {"format": "csv", "cluster": "capacity"}))
    assert sorted(r["name"] for r in rows) == sorted(Node.objects.filter(cluster__name="capacity").values_list("name", flat=True))
    assert all(r["status"] in ("Ready", "NotReady", "Cordoned", "unknown") for r in rows)


def test_list_pages_link_their_downloads_with_the_filters(client_in, loaded):
    body = client_in.get(reverse("inventory:devices"), {"cluster": "mig", "page": "2"}).content.decode()
    assert 'href="?cluster=mig&amp;format=csv"' in body and 'href="?cluster=mig&amp;format=json"' in body


def test_a_long_download_costs_a_fixed_number_of_queries_per_chunk(client_in, loaded, monkeypatch):
    monkeypatch.setattr(listexport, "CHUNK", 7)
    n = Device.objects.count()
    with CaptureQueriesContext(connection) as ctx:
        rows = _csv(client_in.get(reverse("inventory:devices"), {"format": "csv"}))
    assert len(rows) == n
    assert len(ctx.captured_queries) <= 3 + 3 * math.ceil(n / 7)


def test_formula_looking_cluster_text_is_defused_in_csv(client_in, sync_snapshot, tmp_path):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "gpu-a", "uid": "u-1", "labels": {"nvidia.com/gpu.product": "=HYPERLINK(\"http://x\")"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    sync_snapshot(write_list(tmp_path / "nodes.json", [node]), name="hostile", hooks=False)
    rows = _csv(client_in.get(reverse("inventory:nodes"), {"format": "csv"}))
    assert rows[0]["gpu_product"] == "'=HYPERLINK(\"http://x\")"
    as_json = json.loads(_body(client_in.get(reverse("inventory:nodes"), {"format": "json"})))
    assert as_json[0]["gpu_product"] == "=HYPERLINK(\"http://x\")"  # JSON keeps the text as it is


def test_downloads_need_a_login(client, loaded):
    for url in (reverse("inventory:devices"), reverse("claims:stuck")):
        resp = client.get(url, {"format": "csv"})
        assert resp.status_code == 302 and resp["Location"].startswith(reverse("login"))
