"""``manage.py load_benchmark`` runs end to end for a few seconds on a one-node fleet: gunicorn
on loopback, locust users logged in through the login form and API clients with a token, an
idle window and a re-sync window, and prints every figure. It runs as a user runs it, in its
own process on a database of its own (a temporary SQLite file), since gunicorn and the
re-syncs are processes that must see the same database. No latency is asserted; that every
request answered 200 is (a page that fails under a re-sync is a bug, not a slow machine)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIGURE = re.compile(r"nodes=1 (idle|during) (\S+) (?:window_s=\S+ )?requests=(\d+) errors=(\d+) per_s=\S+ "
                    r"p50_ms=\S+ p95_ms=\S+ p99_ms=(\S+) max_ms=\S+")


def _manage(env, *args, timeout=600):
    # Our interpreter and manage.py: nothing untrusted.
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_load_benchmark_prints_both_windows_with_no_error_and_cleans_up(tmp_path):
    for module in ("locust", "gunicorn"):  # found, not imported: locust patches the process (gevent)
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (requirements-dev.txt)")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'load.sqlite3'}"}
    env.pop("CELERY_BROKER_URL", None)
    assert _manage(env, "migrate", "--noinput", "-v0").returncode == 0
    out = _manage(env, "load_benchmark", "--nodes", "1", "--users", "4", "--seconds", "2", "--warmup", "0.5",
                  "--think", "0.1-0.3")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "database=sqlite" in lines
    rows = {(m.group(1), m.group(2)): m for line in lines if (m := FIGURE.match(line))}
    for phase in ("idle", "during"):
        whole = rows[(phase, "all")]
        assert int(whole.group(3)) > 0, (phase, lines)
        assert int(whole.group(4)) == 0, [line for line in lines if "error_sample" in line]
        assert float(whole.group(5)) > 0
        pages = {name for (p, name) in rows if p == phase and name != "all"}
        assert {"overview", "claim_page", "migration_plan", "api_nodes", "api_plan"} <= pages, pages
    resyncs = [line for line in lines if re.match(r"nodes=1 resync_\d+ ", line)]
    assert resyncs and all("status ok, exit 0" in line for line in resyncs), resyncs
    assert "of 8 claims changed" in resyncs[0], "a re-sync that changes nothing would measure nothing"
    assert any(line.startswith("nodes=1 p99_during_over_idle ") for line in lines)
    assert "nodes=1 errors_total 0 (target 0)" in lines
    check = _manage(env, "shell", "-c", "from inventory.models import Cluster; from django.contrib.auth.models import User; "
                    "print(Cluster.objects.filter(name__startswith='load-').count(), User.objects.filter(username='load').count())")
    assert check.stdout.strip().splitlines()[-1] == "0 0"
