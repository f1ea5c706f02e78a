"""``manage.py benchmark [--nodes N ...]``: what the user waits for, on a fleet as heavy as a real one.

For each size: ``devtools.benchfleet.generate_benchmark_fleet`` (per node 8 H200 NVL, half in
MIG 7x 1g.18gb = 32 devices, 8 claims and 8 GPU pods, 20 other pods, 3 Events) written as one
compact JSON ``kind: List``; then one line per figure (``nodes=N name value unit (what)``):

- ``floor``: a fresh ``python -c`` reading the file and ``json.loads``-ing it;
- ``full_sync``: the whole ``python manage.py sync_cluster --snapshot FILE --cluster NEW``
  command, process start to exit, analyses included (diagnosis, readiness, telemetry of the
  snapshot), into a cluster with nothing stored; median of ``--repeat`` runs interleaved with
  the floor's (floor, sync, floor, sync...); ``full_sync_over_floor`` = median / median;
- ``resync_nochange_command``: the same command on the same file again (median), over full;
- ``resync_nochange_in_process``: ``inventory.runs.run_sync`` (what the worker's task calls)
  on the same file inside this running process, after one untimed warm-up call (median);
- ``resync_1pct_claims_command``: the command on a file in which 1 % of the claims changed
  since the stored state (``fleet.mutate_claims``, chained so every run changes 1 %), median;
- ``worker_catch_up_in_process``: ``run_sync`` in this process on the state the last 1 % command
  stored (other processes synced since this process last did);
- ``one_claim_change_in_process``: then ``run_sync`` on a file in which one in-use claim turned
  into a stuck deallocation, until it returns (its findings are stored by then; the line says
  whether the finding is there);
- ``peak_rss_full_sync``: ``ru_maxrss`` of the full sync command (median of its runs),
  absolute; ``peak_rss_over_payload``;
- ``store_dcgm_values``: storing one scrape's values for every whole GPU (``poll_metrics``);
- ``page_*``: first request after the syncs (``cold``), median of two more (``warm``), queries;
  ``page_overview_fresh_process``: the first request of a fresh web process (WSGI app loaded).

The configured database (``DATABASE_URL``) is used; the benchmark's clusters (``bench-*``) are
deleted afterwards unless ``--keep``. Time is measured here, never in tests.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from devtools import bench
from devtools.benchfleet import change_one_claim, generate_benchmark_fleet
from devtools.fleet import mutate_claims
from inventory.models import Cluster, Device, Node, ResourceClaim

USER = "benchmark"


def _write(objects: list[dict[str, Any]], path: Path) -> int:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")))
    return path.stat().st_size


def _read(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_bytes())["items"]


def _change_claims(objects: list[dict[str, Any]], fraction: float, seed: int) -> list[dict[str, Any]]:
    """``objects`` with ``fraction`` of the claims changed (``fleet.mutate_claims``, which copies
    what it is given: here only the claims, so a large fleet is not copied whole)."""
    at = [i for i, o in enumerate(objects) if o["kind"] == "ResourceClaim"]
    changed = mutate_claims([objects[i] for i in at], fraction, seed=seed)
    out = list(objects)
    for i, claim in zip(at, changed, strict=True):
        out[i] = claim
    return out


class Command(BaseCommand):
    help = "Benchmark the sync command, re-syncs and pages on a real-shaped fleet; one figure per line."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, nargs="+", default=[100], help="fleet sizes (nodes)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--repeat", type=int, default=3, help="runs per command figure (the median is printed)")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark clusters")

    def emit(self, n: int, name: str, value: float | int | str, unit: str = "", what: str = "") -> None:
        if isinstance(value, float):
            value = f"{value:.3f}"
        line = f"nodes={n} {name} {value} {unit}".rstrip()
        self.stdout.write(f"{line} ({what})" if what else line)
        self.stdout.flush()

    def handle(self, *args, **opts):
        # Pages are timed without collectstatic's manifest (STORAGES below): no folder to warn about.
        warnings.filterwarnings("ignore", "No directory at", UserWarning)
        self.repeat = max(1, opts["repeat"])
        for k, v in bench.environment(bench.compile_project()).items():
            self.stdout.write(f"{k}={v}")
        from django.contrib.auth import get_user_model

        get_user_model().objects.get_or_create(username=USER)
        for n in opts["nodes"]:
            self.run_size(n, opts["seed"], opts["keep"])

    def _drop(self, name: str) -> None:
        if Cluster.objects.filter(name=name).exists():
            Cluster.objects.filter(name=name).delete()
            bench.vacuum()

    def run_size(self, n: int, seed: int, keep: bool) -> None:
        r = self.repeat
        tmp = Path(tempfile.mkdtemp(prefix="claimscope-bench-"))
        path = tmp / "fleet.json"
        objects = generate_benchmark_fleet(n, seed=seed)
        size = _write(objects, path)
        kinds = Counter(o["kind"] for o in objects)
        devices = sum(len(o["spec"].get("devices") or []) for o in objects if o["kind"] == "ResourceSlice")
        self.emit(n, "payload", size, "bytes", f"{size / 2**20:.1f} MiB of compact JSON")
        self.emit(n, "objects", len(objects), "", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        self.emit(n, "devices", devices)
        self.emit(n, "load_average", " ".join(f"{x:.2f}" for x in os.getloadavg()), "",
                  f"1, 5, 15 min before this size, on {os.cpu_count()} CPUs shared with other work")
        # Let the generated fleet go: this process then holds what a worker holds.
        del objects
        gc.collect()
        for i in range(r):
            self._drop(f"bench-{n}-{i}")
        bench.vacuum()

        # -- full sync as the user runs it, interleaved with the floor ---------------------------
        name = f"bench-{n}-{r - 1}"

        def full(i: int) -> bench.Run:
            if i:
                self._drop(f"bench-{n}-{i - 1}")
            return bench.manage("sync_cluster", "--snapshot", str(path), "--cluster", f"bench-{n}-{i}")

        floors, fulls = bench.interleaved(lambda: bench.floor(path), full, r)
        floor_s = bench.median([x.wall for x in floors])
        full_s = bench.median([x.wall for x in fulls])
        statuses = ", ".join(bench.sync_status(x) for x in fulls)
        self.emit(n, "floor", floor_s, "s", f"fresh python -c: read + json.loads; median of {r}, runs "
                  + " ".join(f"{x.wall:.2f}" for x in floors))
        self.emit(n, "full_sync", full_s, "s", f"whole sync_cluster --snapshot command, start to exit, analyses "
                  f"included, empty cluster; median of {r} interleaved with the floor, runs "
                  + " ".join(f"{x.wall:.2f}" for x in fulls) + f"; status {statuses}")
        self.emit(n, "full_sync_over_floor", full_s / floor_s, "x", "target <= 3.0")
        peak = bench.median([x.peak_rss for x in fulls])
        self.emit(n, "peak_rss_full_sync", int(peak), "bytes", f"{peak / 2**20:.0f} MiB, ru_maxrss of the command, "
                  f"absolute, median of {r}; runs " + " ".join(f"{x.peak_rss / 2**20:.0f}" for x in fulls) + " MiB")
        self.emit(n, "peak_rss_over_payload", peak / size, "x", "target <= 3.0")
        for x in fulls:
            if x.code:
                self.stderr.write(f"nodes={n} full sync exit {x.code}: {x.stderr[-500:]}")
        bench.analyze()
        cluster = Cluster.objects.get(name=name)

        # -- re-syncs ---------------------------------------------------------------------------
        nochange = [bench.manage("sync_cluster", "--snapshot", str(path), "--cluster", name) for _ in range(r)]
        nochange_s = bench.median([x.wall for x in nochange])
        self.emit(n, "resync_nochange_command", nochange_s, "s", f"the same command and file again, start to exit; "
                  f"median of {r}; status " + ", ".join(bench.sync_status(x) for x in nochange))
        self.emit(n, "resync_nochange_command_over_full", nochange_s / full_s, "x", "target <= 0.2")

        from inventory.runs import run_sync

        cluster.refresh_from_db()
        bench.timed(lambda: run_sync(cluster))  # warm-up: imports, caches, connection
        inproc = [bench.timed(lambda: run_sync(cluster)) for _ in range(r)]
        inproc_s = bench.median([t for t, _ in inproc])
        self.emit(n, "resync_nochange_in_process", inproc_s, "s", f"inventory.runs.run_sync in this running process, "
                  f"after one warm-up call; median of {r}; status " + ", ".join(str(run.status) for _, run in inproc))
        self.emit(n, "resync_nochange_in_process_over_full", inproc_s / full_s, "x", "target <= 0.05")

        current = _read(path)
        pct = []
        for i in range(r):
            current = _change_claims(current, 0.01, seed=seed + 1 + i)
            changed = tmp / f"fleet-1pct-{i}.json"
            _write(current, changed)
            pct.append(bench.manage("sync_cluster", "--snapshot", str(changed), "--cluster", name))
        pct_s = bench.median([x.wall for x in pct])
        claims = sum(1 for o in current if o["kind"] == "ResourceClaim")
        self.emit(n, "resync_1pct_claims_command", pct_s, "s", f"the command on a file with {round(claims * 0.01)} of "
                  f"{claims} claims changed since the stored state, analyses included; median of {r}; status "
                  + ", ".join(bench.sync_status(x) for x in pct))
        self.emit(n, "resync_1pct_claims_command_over_full", pct_s / full_s, "x", "target <= 0.1")

        # A worker that syncs this cluster itself (the 1 % runs above were other processes):
        # first a catch-up sync of the stored state (printed apart), as a worker polling every
        # interval would have done, then the one change.
        Cluster.objects.filter(pk=cluster.pk).update(snapshot_path=str(changed))
        cluster.refresh_from_db()
        catch_up_s, catch_up = bench.timed(lambda: run_sync(cluster))
        self.emit(n, "worker_catch_up_in_process", catch_up_s, "s", "run_sync in this process on the state the last "
                  f"1 % command stored (no change): what a worker pays after other processes synced; status {catch_up.status}")
        from claims.models import Finding

        # Two changes in a row: the first finds the worker holding no model of the cluster (the
        # 1 % runs were other processes: it loads the stored model), the second is the steady
        # state of a polling worker (its model held and kept current).
        for label, what in (("one_claim_first_change_in_process", "the worker held no model (it loads the stored "
                             "one)"), ("one_claim_change_in_process", "the worker holds the model from its last sync")):
            one_objects, claim = change_one_claim(current)
            current = one_objects
            one = tmp / f"fleet-{label}.json"
            _write(one_objects, one)
            del one_objects
            gc.collect()
            Cluster.objects.filter(pk=cluster.pk).update(snapshot_path=str(one))
            cluster.refresh_from_db()
            with bench.read_end() as read_end:
                one_s, one_run = bench.timed(lambda: run_sync(cluster))
                done = time.monotonic()
            meta = claim["metadata"]
            found = Finding.objects.filter(cluster=cluster, namespace=meta["namespace"], name=meta["name"],
                                           category="claim_stuck_deallocating", resolved_at__isnull=True).exists()
            self.emit(n, label, one_s, "s", f"run_sync in this process on a file in which one in-use claim became a "
                      f"stuck deallocation, read included, until its findings are stored; {what}; status "
                      f"{one_run.status}; finding claim_stuck_deallocating stored: {'yes' if found else 'NO'}; "
                      "target <= 0.2 after the read at 5,000 nodes")
            self.emit(n, f"{label}_after_read", max(0.0, one_s - inproc_s), "s", "the same minus "
                      "resync_nochange_in_process (the read and an unchanged reconcile): the change's own cost")
            self.emit(n, f"{label}_after_read_measured", done - read_end[-1] if read_end else float("nan"), "s",
                      "from the moment the sync had read its source's last object (the reconcile of the stream "
                      "done but its end) to run_sync's return: the reconcile's end, the analyses, the commit, "
                      "the overview warmed")
        del current

        self.metrics_poll(n, cluster)
        plain = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
        with override_settings(STORAGES=plain):
            self.pages(n, cluster)
        fresh = bench.first_request(reverse("inventory:cluster", args=[cluster.name]), USER)
        self.emit(n, "page_overview_fresh_process_ms", fresh["ms"], "ms",
                  f"first request of a fresh web process (WSGI app loaded first, not counted), queries={fresh['queries']} "
                  f"status={fresh['status']}")
        self.emit(n, "load_average_after", " ".join(f"{x:.2f}" for x in os.getloadavg()), "", "1, 5, 15 min")
        if not keep:
            self._drop(name)
        shutil.rmtree(tmp, ignore_errors=True)

    def metrics_poll(self, n: int, cluster: Cluster) -> None:
        """Storing one scrape's values for every whole GPU (three DCGM fields each), as
        ``poll_metrics`` does every 30 s: the join to devices and the write."""
        from inventory.dcgm import DcgmSample
        from inventory.telemetry import store_samples

        gpus = Device.objects.filter(cluster=cluster, type="gpu").exclude(uuid="").values_list("uuid", "node_name")
        samples = [
            DcgmSample(field=f, value=v, uuid=uuid, gpu_index=None, hostname=node, gpu_instance_id=None,
                       mig_profile=None, pod=None, namespace=None, container=None, labels={"UUID": uuid}, timestamp=None)
            for uuid, node in gpus
            for f, v in (("DCGM_FI_DEV_GPU_UTIL", 87.0), ("DCGM_FI_DEV_GPU_TEMP", 61.0), ("DCGM_FI_DEV_POWER_USAGE", 512.5))
        ]  # fmt: skip
        seconds, got = bench.timed(lambda: store_samples(cluster, samples))
        self.emit(n, "store_dcgm_values", seconds, "s", f"in this process, {got['matched_devices']} GPUs, {len(samples)} samples")

    def pages(self, n: int, cluster: Cluster) -> None:
        from django.contrib.auth import get_user_model

        client = Client()
        client.force_login(get_user_model().objects.get(username=USER))
        node = Node.objects.filter(cluster=cluster, gpu_count__gt=0).order_by("-mig_count", "name").first()
        claim = ResourceClaim.objects.filter(cluster=cluster, state="pending").first() or ResourceClaim.objects.filter(cluster=cluster).first()
        q = f"?cluster={cluster.name}"
        urls = {
            "overview": reverse("inventory:cluster", args=[cluster.name]),
            "node_list": reverse("inventory:nodes") + q,
            "node_page": node.get_absolute_url() if node else None,
            "claims_list": reverse("claims:list") + q,
            "claim_page": claim.get_absolute_url() if claim else None,
            "stuck_queue": reverse("claims:stuck") + q,
            "readiness": reverse("migration:readiness") + q,
            "migration_plan": reverse("migration:plan") + q,
        }
        for page, url in urls.items():
            if not url:
                continue
            times, queries, status = [], 0, 0
            for _ in range(3):
                with CaptureQueriesContext(connection) as ctx:
                    seconds, resp = bench.timed(lambda url=url: client.get(url))
                times.append(seconds)
                queries, status = len(ctx.captured_queries), resp.status_code
            self.emit(n, f"page_{page}_ms", times[0] * 1000, "ms",
                      f"cold: first request after the syncs; warm {bench.median(times[1:]) * 1000:.1f} ms (median of 2); "
                      f"queries={queries} status={status}; in this process, Django test client")
