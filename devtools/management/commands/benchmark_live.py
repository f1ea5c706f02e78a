"""``manage.py benchmark_live [--nodes N]``: what a live cluster's polls cost (issue 13).

The benchmark fleet (``devtools.benchfleet``: per node 8 claims and their GPU pods, 20 pods
without GPUs, 3 Events) is served by the test suite's fake API server (``tests/fake_apiserver.py``,
plain http on loopback), and one line per figure is printed (``nodes=N name value unit (what)``):

- ``old_poll``: a re-sync through ``LiveSource`` with nothing changed, every kind listed in full
  with no selector: what every poll cost before (bytes from the server, seconds);
- ``first_sync``: the first sync of ``run_sync`` (no cursors: every list, with the selectors);
- ``relist``: a sync with the cursors deleted, nothing changed (the hourly full relist);
- ``steady_poll``: a poll with the cursors stored, nothing changed (median of three): watches
  of ``KUBE_WATCH_SECONDS`` (their BOOKMARK) and the 404s of kinds not installed;
- ``change_to_claim_page_poll_cold`` / ``..._poll``: a claim turned into a stuck deallocation in
  the fake, then one poll, then the claim page requested until it shows the deletion (and
  ``change_to_stuck_queue_*`` the stuck queue until it lists the claim); ``_cold``: the first
  change, when no cluster model is held yet (the analyses read it back), then a second change
  (in production add the wait until the next poll starts, at most the sync interval);
- ``..._watch`` / ``..._watch_again``: the same with ``watch_clusters`` running (interval 0.5 s).

``ANALYSIS_REFRESH_SECONDS`` is set to an hour, so a no-change poll re-analyses nothing.

Bytes are what the fake server sent (body bytes). The configured database is used; the
benchmark's clusters (``bench-live-*``) are deleted afterwards unless ``--keep``. Time is
measured here, never in tests.
"""

from __future__ import annotations

import copy
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection
from django.test import Client
from django.test.utils import override_settings
from django.urls import reverse

from devtools.benchfleet import change_one_claim, generate_benchmark_fleet
from inventory.models import Cluster, SourceKind, WatchCursor
from inventory.runs import after_read_hooks, run_sync
from inventory.sources import LiveSource
from inventory.sync import sync_cluster

USER = "benchmark"


class Command(BaseCommand):
    help = "Measure live polls against the fake API server (bytes and seconds)."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, default=1000)
        parser.add_argument("--watch-seconds", type=float, default=5.0, help="KUBE_WATCH_SECONDS of the polls")
        parser.add_argument("--keep", action="store_true")

    def emit(self, n: int, name: str, value: float, unit: str, what: str) -> None:
        self.stdout.write(f"nodes={n} {name} {value:.3f} {unit} ({what})")
        self.stdout.flush()

    def handle(self, *args, **opts):
        from tests.fake_apiserver import FakeAPIServer  # a dev tool: the suite's fake server

        n = opts["nodes"]
        objects = generate_benchmark_fleet(n)
        top = max(int(o["metadata"].get("resourceVersion") or 0) for o in objects)
        fake = FakeAPIServer()
        fake.empty_lists_for_all_kinds()
        fake.serve_objects(objects)
        fake.resource_version = top
        url = fake.start()
        tmp = Path(tempfile.mkdtemp(prefix="claimscope-bench-live-"))
        kubeconfig = fake.write_kubeconfig(tmp / "kubeconfig", url)
        counts = {k: sum(1 for o in objects if o["kind"] == k) for k in ("Node", "ResourceSlice", "ResourceClaim", "Pod", "Event")}
        self.stdout.write(f"nodes={n} fleet {counts}")
        Cluster.objects.filter(name__startswith="bench-live-").delete()
        user, _ = get_user_model().objects.get_or_create(username=USER)
        try:
            # Pages without collectstatic's manifest, as ``benchmark`` times them.
            plain = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
            # No re-analysis for time alone while the benchmark runs (ANALYSIS_REFRESH_SECONDS):
            # a no-change poll is then what it is between two refreshes.
            with override_settings(KUBE_WATCH_SECONDS=opts["watch_seconds"], KUBE_REQUEST_TIMEOUT=120.0, STORAGES=plain,
                                   ANALYSIS_REFRESH_SECONDS=3600,
                                   KUBE_READ_DEADLINE_SECONDS=900, SYNC_LOCK_WAIT_SECONDS=30, ALLOWED_HOSTS=["*"]):
                self._old(n, fake, kubeconfig)
                self._new(n, fake, kubeconfig, objects, user)
        finally:
            fake.stop()
            if not opts["keep"]:
                Cluster.objects.filter(name__startswith="bench-live-").delete()

    def _timed_sync(self, fake, fn):
        fake.bytes_sent = 0
        t0 = time.perf_counter()
        run = fn()
        return time.perf_counter() - t0, fake.bytes_sent, run

    def _old(self, n, fake, kubeconfig):
        cluster = Cluster.objects.create(name=f"bench-live-old-{n}", source_kind=SourceKind.KUBECONFIG,
                                         kubeconfig_path=str(kubeconfig))

        def old():
            return sync_cluster(cluster, LiveSource(kubeconfig=str(kubeconfig), timeout=120.0), after_read=after_read_hooks)

        old()  # stores everything
        s, b, run = self._timed_sync(fake, old)
        self.emit(n, "old_poll", s, "s", f"LiveSource re-sync, nothing changed, every kind listed in full: {b:,} bytes, {run.status}")
        self.emit(n, "old_poll_bytes", b / 2**20, "MiB", "bytes the server sent for it")
        cluster.delete()

    def _new(self, n, fake, kubeconfig, objects, user):
        cluster = Cluster.objects.create(name=f"bench-live-{n}", source_kind=SourceKind.KUBECONFIG,
                                         kubeconfig_path=str(kubeconfig), sync_interval_seconds=30)
        s, b, run = self._timed_sync(fake, lambda: run_sync(cluster))
        self.emit(n, "first_sync", s, "s", f"no cursors: every list with its selectors, {b:,} bytes, {run.status}, "
                                          f"pods kept {run.counts.get('Pod', {}).get('created')}, skipped {run.counts.get('skipped')}")
        WatchCursor.objects.filter(cluster=cluster).delete()
        s, b, run = self._timed_sync(fake, lambda: run_sync(cluster))
        self.emit(n, "relist", s, "s", f"cursors deleted, nothing changed: {b:,} bytes, {run.status}")
        self.emit(n, "relist_bytes", b / 2**20, "MiB", "bytes the server sent for it")
        polls = [self._timed_sync(fake, lambda: run_sync(cluster)) for _ in range(3)]
        med = statistics.median(p[0] for p in polls)
        self.emit(n, "steady_poll", med, "s", f"cursors stored, nothing changed (median of 3; watches of "
                                              f"{settings.KUBE_WATCH_SECONDS:g} s): {polls[-1][1]:,} bytes, {polls[-1][2].status}")
        self.emit(n, "steady_poll_bytes", polls[-1][1] / 1024, "KiB", "bytes the server sent for one")

        client = Client()
        client.force_login(user)
        stuck = reverse("claims:stuck") + f"?cluster={cluster.name}"
        now = datetime.now(UTC)

        def make_stuck(exclude: set[str]):
            live = [{"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1", **copy.deepcopy(i)}
                    for i in fake.lists["/apis/resource.k8s.io/v1/resourceclaims"] if i["metadata"]["uid"] not in exclude]
            _, claim = change_one_claim(live, now=now)
            fake.apply(claim)
            return claim

        def on_claim_page(claim) -> bool:
            # The claim page prints "Deletion requested" as Y-m-d H:i:s (UTC).
            m = claim["metadata"]
            page = client.get(reverse("claims:claim", args=[cluster.name, m["namespace"], m["name"]]))
            return m["deletionTimestamp"].replace("T", " ").rstrip("Z") in page.content.decode()

        def in_stuck_queue(claim) -> bool:
            # Filtered to the claim (``q``): the queue holds thousands of findings, paged.
            name = claim["metadata"]["name"]
            return name in client.get(stuck + f"&q={name}").content.decode()

        def until(test, claim, t0, limit):
            while not test(claim):
                if time.perf_counter() - t0 > limit:
                    return None
                time.sleep(0.05)
            return time.perf_counter() - t0

        def report(mode, claim, t0, extra):
            page = until(on_claim_page, claim, t0, 60)
            queue = until(in_stuck_queue, claim, t0, 20)
            self.emit(n, f"change_to_claim_page_{mode}", page if page is not None else float("nan"), "s",
                      f"change in the server -> the claim page shows its deletion{extra}")
            self.emit(n, f"change_to_stuck_queue_{mode}", queue if queue is not None else float("nan"), "s",
                      "-> the stuck queue lists it" + ("" if queue is not None else " (not within 20 s: no finding stored)"))

        changed: set[str] = set()
        for label in ("poll_cold", "poll"):
            claim = make_stuck(changed)
            changed.add(claim["metadata"]["uid"])
            t0 = time.perf_counter()
            run = run_sync(cluster)
            polled = time.perf_counter() - t0
            report(label, claim, t0, f"; one poll of {polled:.2f} s ({run.status}, sync {run.duration_ms} ms"
                                     + (", the first since the cluster model was dropped: it is read back" if label == "poll_cold" else "")
                                     + f") plus, in production, up to the sync interval ({cluster.sync_interval_seconds} s) before it starts")

        from inventory.management.commands.watch_clusters import Command as Watch

        watch = Watch()
        runs_before = cluster.sync_runs.count()
        worker = threading.Thread(target=lambda: (watch.watch(names=[cluster.name], interval=0.5, checkpoint=600,
                                                              max_seconds=600), connection.close()))
        worker.start()
        try:
            t_wait = time.perf_counter()
            while cluster.sync_runs.count() == runs_before and time.perf_counter() - t_wait < 300:
                time.sleep(0.1)  # its first sync (a poll's worth: the watches from the cursors)
            time.sleep(1.0)  # the watches are open
            for label in ("watch", "watch_again"):
                claim = make_stuck(changed)
                changed.add(claim["metadata"]["uid"])
                report(label, claim, time.perf_counter(), " with watch_clusters running (interval 0.5 s)")
        finally:
            watch.stop = True
            worker.join(120)
