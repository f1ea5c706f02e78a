"""Through the real sync: the ledger stores each held device's kind and share (MIG, shared,
whole GPU), a pending claim adds no row, and a snapshot's DCGM scrape gives an estimated
utilization beside the allocated hours."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from chargeback_helpers import CASES, load_case
from django.core.management import call_command

from claims import chargeback as cb
from claims.ledger.models import ChargebackHolding
from inventory import dcgm
from inventory.kube import parse_time
from inventory.models import Device
from inventory.snapshot import load_path
from tests.conftest import write_list


def _doc(cluster: str, *args) -> dict:
    out = io.StringIO()
    call_command("chargeback", "--cluster", cluster, *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
@pytest.mark.parametrize("case", ["mig-and-full-gpu-both-advertised", "orphan-claim-reserved-for-deleted-pod",
                                  "capacity-exhausted-all-gpus-allocated", "constraint-unsatisfiable-parentuuid"])
def test_the_ledger_holds_what_the_pure_rule_gives(sync_snapshot, case):
    sync_snapshot(CASES / case / "snapshot", "c")
    claims, devices, _ = load_case(case)
    want = sorted(
        (h.namespace, h.claim, h.device, h.kind, round(h.share, 6))
        for c in claims for h in cb.claim_holdings("c", c, devices, None)[0]
    )
    got = sorted(
        (r.namespace, r.claim_name, (r.driver, r.pool, r.device_name), r.kind, round(r.share, 6))
        for r in ChargebackHolding.objects.filter(cluster__name="c")
    )
    assert got == want and got
    pending = {c.name for c in claims if not c.allocated}
    assert not ChargebackHolding.objects.filter(claim_name__in=pending).exists()


@pytest.mark.django_db
def test_a_shared_devices_consumed_share_reaches_the_report(sync_snapshot):
    sync_snapshot(CASES / "orphan-claim-reserved-for-deleted-pod" / "snapshot", "shared")
    row = ChargebackHolding.objects.get(cluster__name="shared")
    assert (row.kind, row.share) == ("shared", 1.0)
    doc = _doc("shared", "--since", "2026-05-11T14:00:00Z", "--until", "2026-05-11T15:00:00Z")
    (ns,) = doc["namespaces"]
    # Allocated since creation (no allocationTimestamp), until the snapshot's time.
    start = max(row.start.timestamp(), 1778508000.0)  # 2026-05-11T14:00:00Z
    until = min(row.last_seen.timestamp(), 1778511600.0)
    assert ns["gpu_hours"] == pytest.approx((until - start) / 3600, abs=1e-3)


@pytest.mark.django_db
def test_dcgm_values_of_the_snapshot_give_an_estimated_use(sync_snapshot, tmp_path):
    """The case's objects carry no times; the copy gives its claim an allocation time and its
    pod a Ready condition six hours later (the snapshot's moment), its scrape unchanged."""
    case = CASES / "dcgm-exporter-no-pod-labels-on-dra-node" / "snapshot"
    objects = load_path(case).objects
    for o in objects:
        if o.get("kind") == "ResourceClaim" and o.get("status", {}).get("allocation"):
            o["status"]["allocation"]["allocationTimestamp"] = "2026-11-20T10:00:00Z"
        if o.get("kind") == "Pod":
            o.setdefault("status", {})["conditions"] = [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-20T16:00:00Z"}]
    write_list(tmp_path / "cluster.json", objects)
    for prom in case.glob("*.prom"):
        shutil.copy(prom, tmp_path / prom.name)
    sync_snapshot(tmp_path, "dcgm")
    rows = list(ChargebackHolding.objects.filter(cluster__name="dcgm"))
    assert rows
    devices = {(d.driver, d.pool, d.name): d for d in Device.objects.filter(cluster__name="dcgm")}
    since, until = parse_time("2026-11-20T12:00:00Z"), parse_time("2026-11-20T16:00:00Z")
    doc = _doc("dcgm", "--since", since.isoformat())
    assert parse_time(doc["until"]) == until  # the snapshot's moment
    want_used = 0.0
    for r in rows:
        util = dcgm.utilization_percent(devices[(r.driver, r.pool, r.device_name)].metrics)
        assert util is not None  # the scrape names the held GPU by UUID
        want_used += cb.held_seconds(r.start, r.last_seen, since, until) / 3600 * r.share * util / 100
    assert want_used > 0
    assert sum(n["used_gpu_hours_measured"] for n in doc["namespaces"]) == 0  # no Prometheus: nothing measured
    assert sum(n["used_gpu_hours_estimated"] for n in doc["namespaces"]) == pytest.approx(want_used, abs=1e-3)
    assert sum(n["gpu_hours_no_utilization"] for n in doc["namespaces"]) == pytest.approx(0, abs=1e-6)
