"""``manage.py benchmark`` runs end to end on a one-node fleet and prints one line per figure
issue 12 asks for, each saying what it includes. It runs as a user runs it: its own process on
a database of its own (a temporary SQLite file), since it starts ``sync_cluster`` commands as
fresh processes that must see the same database. Nothing is timed: no figure is asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (
    "payload", "objects", "devices", "floor", "full_sync", "full_sync_over_floor", "peak_rss_full_sync",
    "peak_rss_over_payload", "resync_nochange_command", "resync_nochange_command_over_full",
    "resync_nochange_in_process", "resync_nochange_in_process_over_full", "resync_1pct_claims_command",
    "resync_1pct_claims_command_over_full", "worker_catch_up_in_process", "one_claim_change_in_process", "store_dcgm_values",
    "page_overview_fresh_process_ms",
)  # fmt: skip
PAGES = ("overview", "node_list", "node_page", "claims_list", "claim_page", "stuck_queue", "readiness", "migration_plan")


def _manage(env, *args):
    # Our interpreter and manage.py: nothing untrusted.
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_benchmark_prints_every_figure_and_cleans_up(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bench.sqlite3'}"}
    env.pop("CELERY_BROKER_URL", None)
    assert _manage(env, "migrate", "--noinput", "-v0").returncode == 0
    out = _manage(env, "benchmark", "--nodes", "1", "--repeat", "1")
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "database=sqlite" in lines
    figures = {}
    for line in lines:
        m = re.match(r"nodes=1 (\S+) (\S+)(.*)", line)
        if m:
            figures[m.group(1)] = (m.group(2), m.group(3))
    for name in FIGURES:
        assert name in figures, (name, lines)
    assert figures["devices"][0] == "32" and int(figures["payload"][0]) > 0
    assert "status ok" in figures["full_sync"][1] and "analyses included" in figures["full_sync"][1]
    for name in ("floor", "full_sync", "resync_nochange_command", "resync_nochange_in_process"):
        assert float(figures[name][0]) > 0
    assert int(figures["peak_rss_full_sync"][0]) > 20 * 2**20, "an absolute peak, not a difference"
    assert "stored: yes" in figures["one_claim_change_in_process"][1]
    for page in PAGES:
        _value, rest = figures[f"page_{page}_ms"]
        m = re.search(r"queries=(\d+) status=(\d+)", rest)
        assert m and m.group(2) == "200" and 0 < int(m.group(1)) <= 40, (page, rest)
    check = _manage(env, "shell", "-c", "from inventory.models import Cluster; print(Cluster.objects.filter(name__startswith='bench-').count())")
    assert check.stdout.strip().splitlines()[-1] == "0"
