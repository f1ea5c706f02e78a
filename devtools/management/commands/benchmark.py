"""``manage.py benchmark [--nodes N ...]``: sync and page figures on a generated fleet.

Prints one line per figure (``name value unit``), for each fleet size asked:
- ``floor``: read and JSON-decode the fleet payload (the least any ingest must do);
- ``full_sync``: sync into a cluster with nothing stored (reconcile only) and ``hooks``: the
  after-sync work (telemetry, diagnosis, readiness) that follows it; ratios to the floor;
- ``resync_nochange`` and ``resync_1pct``: re-sync of the same payload, and after 1% of
  claims changed (``fleet.mutate_claims``);
- ``store_dcgm_values``: storing one scrape's values for every whole GPU (``poll_metrics``);
- ``peak_rss_reconcile`` and ``peak_rss_with_analyses``: peak resident memory of a fresh
  process doing one full sync without and with the after-sync analyses, and what it adds to
  the same process syncing only the DeviceClasses (Django, every import, no fleet), vs payload;
- per page: server time (median of 3) and SQL query count.

Runs against the configured database (``DATABASE_URL``); the benchmark cluster is deleted
afterwards. Time is measured here, never in tests.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from devtools.fleet import generate_fleet, mutate_claims
from inventory.dcgm import DcgmSample
from inventory.models import Cluster, Device, Node, ResourceClaim, SourceKind
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from inventory.tasks import after_read_hooks
from inventory.telemetry import store_samples


def _write(objects, path: Path) -> int:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")))
    return path.stat().st_size


def _timed_sync(cluster: Cluster, path: Path) -> tuple[float, float, str]:
    """(reconcile seconds, hook seconds, status) of one sync."""
    marks: dict[str, float] = {}

    def hooks(c, read):
        marks["reconciled"] = time.perf_counter()
        after_read_hooks(c, read)

    t0 = time.perf_counter()
    run = sync_cluster(cluster, SnapshotSource(path), after_read=hooks)
    end = time.perf_counter()
    reconciled = marks.get("reconciled", end)
    return reconciled - t0, end - reconciled, run.status


def _child_peak_rss(args: list[str]) -> int:
    """Peak RSS in bytes of ``manage.py <args>`` run as a fresh process.

    Read from the child's ``VmHWM`` (``/proc/<pid>/status``), polled until it exits: the
    kernel resets that mark at exec, whereas ``ru_maxrss`` would also count the pages the
    forked child shared with this (large) benchmark process before exec.
    """
    # Our own interpreter and manage.py with arguments built here: nothing untrusted.
    proc = subprocess.Popen([sys.executable, "manage.py", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
    peak = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        except OSError:
            break
        time.sleep(0.02)
    _, err = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {err.decode()[-500:]}")
    return peak


class Command(BaseCommand):
    help = "Benchmark sync and pages on generated fleets; prints one figure per line."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, nargs="+", default=[100], help="fleet sizes (nodes)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--keep", action="store_true", help="keep the benchmark clusters")
        parser.add_argument("--repeat", type=int, default=3, help="full syncs timed per size (best is kept)")
        parser.add_argument("--skip-rss", action="store_true",
                            help="leave out the peak-RSS figures (fresh processes on the configured database)")
        # Internal: the child process whose memory is measured (reconcile only, no analyses).
        parser.add_argument("--rss-child", nargs=2, metavar=("PATH", "CLUSTER"), help=argparse.SUPPRESS)

    def emit(self, n: int, name: str, value: float | int | str, unit: str = "") -> None:
        if isinstance(value, float):
            value = f"{value:.3f}"
        self.stdout.write(f"nodes={n} {name} {value} {unit}".rstrip())

    def handle(self, *args, **opts):
        if opts["rss_child"]:
            path, name = opts["rss_child"]
            cluster = Cluster.objects.create(name=name, source_kind=SourceKind.SNAPSHOT, snapshot_path=path, enabled=False)
            run = sync_cluster(cluster, SnapshotSource(path))
            self.stdout.write(run.status)
            return
        self.repeat = max(1, opts["repeat"])
        self.skip_rss = opts["skip_rss"]
        db = connection.vendor
        self.stdout.write(f"database={db}")
        for n in opts["nodes"]:
            self.run_size(n, opts["seed"], opts["keep"])

    def run_size(self, n: int, seed: int, keep: bool) -> None:
        if connection.vendor == "postgresql":
            # Earlier runs leave their deleted clusters' rows as dead tuples until autovacuum
            # comes by; every size starts from a clean, analysed database.
            with connection.cursor() as cur:
                cur.execute("VACUUM ANALYZE")
        tmp = Path(tempfile.mkdtemp(prefix="claimscope-bench-"))
        objects = generate_fleet(n, seed=seed)
        path = tmp / "fleet.json"
        size = _write(objects, path)
        devices = sum(len(o["spec"].get("devices") or []) for o in objects if o.get("kind") == "ResourceSlice")
        self.emit(n, "payload", size, "bytes")
        self.emit(n, "objects", len(objects))
        self.emit(n, "devices", devices)

        name = f"bench-{n}"
        Cluster.objects.filter(name=name).delete()
        cluster = Cluster.objects.create(name=name, source_kind=SourceKind.SNAPSHOT, snapshot_path=str(path), enabled=False)

        # Peak RSS of fresh processes doing one full sync, reconcile only and with the
        # analyses (the sync command). Each is compared with the same command syncing only
        # the fleet's DeviceClasses: Django, every import, the CEL parser and the database
        # connection, no fleet.
        classes = tmp / "classes.json"
        _write([o for o in objects if o.get("kind") == "DeviceClass"], classes)
        # The timed syncs run in this process: let the generated fleet go first, so this process
        # holds what a worker holds (the 1 % change below is made from the file).
        del objects
        gc.collect()
        for figure, command in () if self.skip_rss else (
            ("peak_rss_reconcile", lambda p, c: ["benchmark", "--rss-child", str(p), c]),
            ("peak_rss_with_analyses", lambda p, c: ["sync_cluster", "--snapshot", str(p), "--cluster", c]),
        ):
            peaks = {}
            for which, payload in (("baseline", classes), ("fleet", path)):
                Cluster.objects.filter(name=f"{name}-rss").delete()
                peaks[which] = _child_peak_rss(command(payload, f"{name}-rss"))
                Cluster.objects.filter(name=f"{name}-rss").delete()
            self.emit(n, figure, peaks["fleet"], f"bytes (baseline {peaks['baseline']} bytes)")
            self.emit(n, f"{figure}_above_baseline_over_payload", (peaks["fleet"] - peaks["baseline"]) / size, "x")

        # The timed full sync into a cluster with nothing stored: best of ``repeat`` runs, and
        # the floor likewise (this machine is shared: single runs vary by +-15 %).
        # Each repeat measures the floor right before the sync, so both see the same machine.
        best, floors = None, []
        for i in range(self.repeat):
            if i:
                Cluster.objects.filter(pk=cluster.pk).delete()
                cluster = Cluster.objects.create(name=name, source_kind=SourceKind.SNAPSHOT, snapshot_path=str(path), enabled=False)
            t0 = time.perf_counter()
            json.loads(path.read_bytes())
            floors.append(time.perf_counter() - t0)
            result = _timed_sync(cluster, path)
            if best is None or result[0] < best[0]:
                best = result
        floor = min(floors)
        full, hooks, status = best
        self.emit(n, "floor", floor, "s")
        self.emit(n, "full_sync", full, "s")
        self.emit(n, "full_sync_over_floor", full / floor, "x")
        self.emit(n, "after_sync_hooks", hooks, "s")
        self.emit(n, "full_sync_status", status)

        again, again_hooks, _ = _timed_sync(cluster, path)
        self.emit(n, "resync_nochange", again, "s")
        self.emit(n, "resync_nochange_over_full", again / full, "x")
        self.emit(n, "resync_nochange_hooks", again_hooks, "s")

        changed = tmp / "fleet-1pct.json"
        _write(mutate_claims(json.loads(path.read_bytes())["items"], 0.01, seed=seed), changed)
        one, one_hooks, _ = _timed_sync(cluster, changed)
        self.emit(n, "resync_1pct_claims", one, "s")
        self.emit(n, "resync_1pct_hooks", one_hooks, "s")

        self.metrics_poll(n, cluster)
        self.pages(n, cluster)
        if not keep:
            Cluster.objects.filter(pk=cluster.pk).delete()

    def metrics_poll(self, n: int, cluster: Cluster) -> None:
        """Time to store one scrape's values for every whole GPU (three DCGM fields each), as
        ``poll_metrics`` does every 30 s: the join to devices and the write."""
        gpus = Device.objects.filter(cluster=cluster, type="gpu").exclude(uuid="").values_list("uuid", "node_name")
        samples = [
            DcgmSample(field=f, value=v, uuid=uuid, gpu_index=None, hostname=node, gpu_instance_id=None,
                       mig_profile=None, pod=None, namespace=None, container=None, labels={"UUID": uuid}, timestamp=None)
            for uuid, node in gpus
            for f, v in (("DCGM_FI_DEV_GPU_UTIL", 87.0), ("DCGM_FI_DEV_GPU_TEMP", 61.0), ("DCGM_FI_DEV_POWER_USAGE", 512.5))
        ]  # fmt: skip
        t0 = time.perf_counter()
        got = store_samples(cluster, samples)
        self.emit(n, "store_dcgm_values", time.perf_counter() - t0, f"s ({got['matched_devices']} GPUs, {len(samples)} samples)")

    def pages(self, n: int, cluster: Cluster) -> None:
        # Server time of the views themselves: static URLs without a collectstatic manifest.
        plain = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
        with override_settings(STORAGES=plain):
            self._pages(n, cluster)

    def _pages(self, n: int, cluster: Cluster) -> None:
        from django.contrib.auth import get_user_model

        user, _ = get_user_model().objects.get_or_create(username="benchmark")
        client = Client()
        client.force_login(user)
        node = Node.objects.filter(cluster=cluster, gpu_count__gt=0).order_by("-mig_count", "name").first()
        claim = ResourceClaim.objects.filter(cluster=cluster, state="pending").first() or ResourceClaim.objects.filter(cluster=cluster).first()
        urls = {
            "overview": reverse("inventory:cluster", args=[cluster.name]),
            "node_list": reverse("inventory:nodes") + f"?cluster={cluster.name}",
            "node_page": node.get_absolute_url() if node else None,
            "claims_list": reverse("claims:list") + f"?cluster={cluster.name}",
            "claim_page": claim.get_absolute_url() if claim else None,
            "stuck_queue": reverse("claims:stuck") + f"?cluster={cluster.name}",
        }
        for page, url in urls.items():
            if not url:
                continue
            times, queries, status = [], 0, 0
            for _ in range(3):
                with CaptureQueriesContext(connection) as ctx:
                    t0 = time.perf_counter()
                    resp = client.get(url)
                    times.append(time.perf_counter() - t0)
                queries, status = len(ctx.captured_queries), resp.status_code
            # First request after the sync (cold caches), then the median of the repeats.
            self.emit(n, f"page_{page}_ms", times[0] * 1000, f"ms cold, {statistics.median(times[1:]) * 1000:.1f} ms warm, queries={queries} status={status}")
