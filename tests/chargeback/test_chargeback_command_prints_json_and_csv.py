"""``manage.py chargeback --cluster NAME`` on a synced snapshot: JSON with ``namespaces``
(``namespace``, ``gpu_hours``) and CSV with one line per namespace and product."""

from __future__ import annotations

import csv
import io
import json

import pytest
from chargeback_helpers import CASES, load_case
from django.core.management import CommandError, call_command

from inventory.kube import parse_time


def _run(*args) -> str:
    out = io.StringIO()
    call_command("chargeback", *args, stdout=out)
    return out.getvalue()


def _want(case: str, since, until) -> dict[str, float]:
    """Whole GPUs of the case's allocated claims x hours from allocationTimestamp, cut to the window."""
    claims, _, _ = load_case(case)
    out: dict[str, float] = {}
    for c in claims:
        if not c.allocated:
            continue
        start = max(parse_time(c.allocation_timestamp), since)
        out[c.namespace] = out.get(c.namespace, 0.0) + len(c.results) * max(0.0, (until - start).total_seconds()) / 3600
    return out


@pytest.mark.django_db
def test_json_lists_gpu_hours_per_namespace(sync_snapshot):
    sync_snapshot(CASES / "healthy-cluster-h100" / "snapshot", "h100")
    _, _, now = load_case("healthy-cluster-h100")
    doc = json.loads(_run("--cluster", "h100", "--since", "2026-11-20T00:00:00Z", "--format", "json"))
    assert parse_time(doc["until"]) == now  # a snapshot cluster's window ends at its snapshot time
    got = {n["namespace"]: n["gpu_hours"] for n in doc["namespaces"]}
    want = _want("healthy-cluster-h100", parse_time("2026-11-20T00:00:00Z"), now)
    assert got.keys() == want.keys()
    for ns, v in want.items():
        assert got[ns] == pytest.approx(v, abs=1e-3)
    assert all({"namespace", "gpu_hours", "products", "idle_share", "cost"} <= n.keys() for n in doc["namespaces"])


@pytest.mark.django_db
def test_csv_has_a_line_per_namespace_and_product(sync_snapshot, settings):
    settings.CLAIMSCOPE_CHARGEBACK_PRICES = {"*": 2}
    sync_snapshot(CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot", "full")
    text = _run("--cluster", "full", "--since", "2026-11-09T00:00:00Z", "--until", "2026-11-09T10:00:00Z", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    want = _want("capacity-exhausted-all-gpus-allocated", parse_time("2026-11-09T00:00:00Z"), parse_time("2026-11-09T10:00:00Z"))
    assert {r["namespace"] for r in rows} == set(want)
    for r in rows:
        assert float(r["gpu_hours"]) == pytest.approx(want[r["namespace"]], abs=1e-3)
        assert float(r["cost"]) == pytest.approx(2 * float(r["gpu_hours"]), abs=0.01)
        assert r["currency"] == settings.CLAIMSCOPE_CHARGEBACK_CURRENCY


@pytest.mark.django_db
def test_unknown_cluster_and_bad_window_are_one_line_errors(sync_snapshot):
    with pytest.raises(CommandError, match="no stored cluster"):
        _run("--cluster", "nope")
    sync_snapshot(CASES / "healthy-cluster-h100" / "snapshot", "h100")
    with pytest.raises(CommandError, match="bad window"):
        _run("--cluster", "h100", "--since", "yesterday")
    with pytest.raises(CommandError, match="bad window"):
        _run("--cluster", "h100", "--since", "2026-11-21T00:00:00Z", "--until", "2026-11-20T00:00:00Z")
