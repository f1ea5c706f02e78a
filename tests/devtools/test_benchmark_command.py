"""The benchmark command runs end to end on a small fleet and prints one line per figure the
scale issue asks for (the peak-RSS figures need fresh processes on the configured database
and are left out here). Nothing is timed: the figures themselves are not asserted."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from inventory.models import Cluster

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES = (
    "payload", "objects", "devices", "floor", "full_sync", "full_sync_over_floor", "after_sync_hooks",
    "full_sync_status", "resync_nochange", "resync_nochange_over_full", "resync_nochange_hooks",
    "resync_1pct_claims", "resync_1pct_hooks", "store_dcgm_values",
)  # fmt: skip
PAGES = ("overview", "node_list", "node_page", "claims_list", "claim_page", "stuck_queue")


def test_benchmark_prints_every_figure_and_cleans_up():
    out = io.StringIO()
    call_command("benchmark", nodes=[4], repeat=1, skip_rss=True, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("database=")
    figures = dict(re.match(r"nodes=4 (\S+) (.*)", line).groups() for line in lines[1:] if line.startswith("nodes=4 "))
    for name in FIGURES:
        assert name in figures, (name, lines)
    assert figures["full_sync_status"] == "ok"
    assert int(figures["devices"]) > 0 and int(figures["payload"].split()[0]) > 0
    for name in ("floor", "full_sync", "resync_nochange"):
        assert float(figures[name].split()[0]) > 0
    for page in PAGES:
        m = re.fullmatch(r"[\d.]+ ms cold, [\d.]+ ms warm, queries=(\d+) status=(\d+)", figures[f"page_{page}_ms"])
        assert m, figures[f"page_{page}_ms"]
        assert m.group(2) == "200" and 0 < int(m.group(1)) <= 20
    assert not Cluster.objects.filter(name__startswith="bench-").exists()
