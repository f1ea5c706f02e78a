"""``manage.py load_benchmark --nodes 1000 --users 50 --seconds 60``: concurrent users on the main
pages and the API while a re-sync runs, against gunicorn on loopback (issue 16).

Steps, on the configured database (``DATABASE_URL``):

1. The fleet: ``--fleet F.json`` (``generate_fleet --shape benchmark --out F.json``) or the
   benchmark fleet of ``--nodes`` generated here; two re-sync files, ``A`` with 1 % of the claims
   changed (``fleet.mutate_claims``) and ``B`` with another 1 % changed from ``A``.
2. ``sync_cluster --snapshot FLEET --cluster load-N`` into an empty cluster (set-up, printed).
3. gunicorn as the image runs it (2 workers x 4 threads) on a free loopback port, and locust
   (``devtools/load_locustfile.py``) with ``--users``: four in five are browser users who log in
   through the login form and then request the cluster overview, node list, a node page, the
   claims list, the stuck queue, a claim page, readiness and the migration plan (pages filtered to
   the cluster; node and claim pages spread over up to 20 of each); the rest are API clients
   with a token on the API lists. Each user waits ``--think`` seconds (uniform) between requests.
4. Once every browser user is logged in and ``--warmup`` seconds have passed: the idle window
   (``--seconds``, no sync), then the re-sync window: ``sync_cluster --snapshot A|B`` commands
   (alternating, so each really rewrites 1 % of the claims and re-runs the analyses) back to
   back from the window's start until ``--seconds`` have passed; the window ends when the sync
   running then ends, so it is never shorter than one whole re-sync.
5. Figures per window, from locust's per-request log: requests started in the window, errors
   (any answer but 200, redirects included, or no answer), p50/p95/p99/max latency; then the
   same per page; then ``p99_during_over_idle``.

The cluster ``load-N`` and the user ``load`` are deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from devtools import bench, load
from devtools.benchfleet import generate_benchmark_fleet
from devtools.fleet import mutate_claims

USER = "load"


def _write(objects: list[dict[str, Any]], path: Path) -> None:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")))


def _changed(objects: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """``objects`` with 1 % of the claims changed, at least one (only the claims are copied)."""
    at = [i for i, o in enumerate(objects) if o.get("kind") == "ResourceClaim"]
    changed = mutate_claims([objects[i] for i in at], max(0.01, 1 / max(1, len(at))), seed=seed)
    out = list(objects)
    for i, claim in zip(at, changed, strict=True):
        out[i] = claim
    return out


def _spread(items: list, k: int) -> list:
    """Up to ``k`` items spread evenly over ``items``."""
    if len(items) <= k:
        return items
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


def _think(text: str) -> tuple[float, float]:
    try:
        lo, _, hi = text.partition("-")
        pair = (float(lo), float(hi or lo))
    except ValueError as exc:
        raise CommandError(f"--think: {text!r} is not MIN-MAX seconds") from exc
    if not 0 <= pair[0] <= pair[1]:
        raise CommandError("--think: MIN-MAX with 0 <= MIN <= MAX")
    return pair


class Command(BaseCommand):
    help = "Concurrent users on the main pages and the API, idle and during a re-sync, against gunicorn."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, default=1000, help="benchmark fleet size (ignored with --fleet)")
        parser.add_argument("--fleet", default="", metavar="F.json", help="a fleet file (generate_fleet --shape benchmark)")
        parser.add_argument("--users", type=int, default=50)
        parser.add_argument("--seconds", type=float, default=60.0, help="length of each window (idle, re-sync)")
        parser.add_argument("--think", default="1-2", metavar="MIN-MAX", help="seconds each user waits between requests")
        parser.add_argument("--warmup", type=float, default=5.0, help="seconds after the logins, not measured")
        parser.add_argument("--sync-timeout", type=float, default=900.0, help="a re-sync running longer is killed")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--keep", action="store_true", help="keep the cluster load-N and the user load")

    def line(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def handle(self, *args, **opts):
        users = opts["users"]
        if users < 2:
            raise CommandError("--users: at least 2 (a browser user and an API client)")
        if opts["seconds"] <= 0:
            raise CommandError("--seconds must be positive")
        think = _think(opts["think"])
        for module in ("locust", "gunicorn"):
            if importlib.util.find_spec(module) is None:
                raise CommandError(f"{module} is not installed: pip install -r requirements-dev.txt")
        api_users = max(1, users // 5)
        for k, v in bench.environment(bench.compile_project()).items():
            self.line(f"{k}={v}")
        tmp = Path(tempfile.mkdtemp(prefix="claimscope-load-"))
        try:
            self.run(opts, users, api_users, think, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def run(self, opts: dict, users: int, api_users: int, think: tuple[float, float], tmp: Path) -> None:
        from inventory.models import Cluster

        if opts["fleet"]:
            fleet = Path(opts["fleet"])
            try:
                objects = json.loads(fleet.read_bytes())["items"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise CommandError(f"--fleet {fleet}: {exc}") from exc
        else:
            fleet = tmp / "fleet.json"
            objects = generate_benchmark_fleet(opts["nodes"], seed=opts["seed"])
            _write(objects, fleet)
        n = sum(1 for o in objects if o.get("kind") == "Node")
        resyncs = [tmp / "resync-a.json", tmp / "resync-b.json"]
        a = _changed(objects, opts["seed"] + 1)
        _write(a, resyncs[0])
        _write(_changed(a, opts["seed"] + 2), resyncs[1])
        claims = sum(1 for o in objects if o.get("kind") == "ResourceClaim")
        del objects, a
        gc.collect()

        name = f"load-{n}"
        Cluster.objects.filter(name=name).delete()
        bench.vacuum()
        setup = bench.manage("sync_cluster", "--snapshot", str(fleet), "--cluster", name)
        self.line(f"nodes={n} setup_full_sync {setup.wall:.1f} s (sync_cluster into an empty cluster, before the "
                  f"load; status {bench.sync_status(setup)})")
        if setup.code:
            raise CommandError(f"the set-up sync failed: {setup.stderr[-2000:]}")
        bench.analyze()
        cluster = Cluster.objects.get(name=name)
        password, token = self.load_user()
        config = tmp / "locust.json"
        log = tmp / "requests.tsv"
        config.write_text(json.dumps({
            "log": str(log), "browser_users": users - api_users, "api_users": api_users, "think": list(think),
            "username": USER, "password": password, "token": token,
            "pages": self.pages(cluster), "api": self.api(cluster),
        }))
        port = load.free_port()
        base = f"http://127.0.0.1:{port}"
        server_log = tmp / "gunicorn.log"
        server = load.start_gunicorn(port, load.server_env(os.environ), Path(settings.BASE_DIR), server_log)
        locust = None
        try:
            load.wait_http(f"{base}/healthz", 90, server)
            self.line(f"nodes={n} server gunicorn 2 workers x 4 threads on 127.0.0.1:{port} (as the image runs it, no "
                      f"access log); {os.cpu_count()} CPUs shared with other work")
            self.line(f"nodes={n} users {users} ({users - api_users} browser users logged in through the login form, "
                      f"{api_users} API clients with a token; think time {think[0]:g}-{think[1]:g} s uniform)")
            self.line(f"nodes={n} load_average_before {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
            cap = int(300 + opts["warmup"] + 2 * opts["seconds"] + opts["sync_timeout"])
            locust = load.start_locust(base, users, config, Path(settings.BASE_DIR), tmp / "locust.log", cap)
            self.wait_logins(log, users - api_users, locust)
            time.sleep(opts["warmup"])
            idle0 = time.time()
            time.sleep(opts["seconds"])
            idle1 = time.time()
            during0, runs = idle1, []
            while not runs or time.time() < during0 + opts["seconds"]:
                runs.append(self.resync(resyncs[len(runs) % 2], name, opts["sync_timeout"]))
            during1 = time.time()
            self.line(f"nodes={n} load_average_after {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
        except BaseException:
            for proc, what in ((locust, "locust"), (server, "gunicorn")):
                if proc is not None:
                    load.stop(proc)
                    tail = (tmp / f"{what}.log").read_text(errors="replace")[-1500:] if (tmp / f"{what}.log").exists() else ""
                    self.stderr.write(f"{what} log tail:\n{tail}")
            raise
        load.stop(locust)
        load.stop(server)
        records = load.parse_log(log.read_text(encoding="utf-8").splitlines())
        for i, (wall, status, code) in enumerate(runs, 1):
            self.line(f"nodes={n} resync_{i} {wall:.1f} s (sync_cluster --snapshot of a file with {max(1, round(claims * 0.01))} "
                      f"of {claims} claims changed since the stored state, process start to exit, analyses included; "
                      f"status {status}, exit {code})")
        idle = self.report(n, "idle", records, idle0, idle1, "no sync running")
        during = self.report(n, "during", records, during0, during1,
                             f"{len(runs)} re-sync(s) back to back, the window ends with the last")
        if during1 - during0 > opts["seconds"] * 1.05:
            self.line(f"nodes={n} note the re-sync window ran {during1 - during0:.1f} s, longer than --seconds "
                      f"{opts['seconds']:g}: it ends with the re-sync running when --seconds had passed")
        ratio = during.p99 / idle.p99 if idle.p99 and not math.isnan(idle.p99) else math.nan
        self.line(f"nodes={n} p99_during_over_idle {ratio:.2f} x (target <= 3.0)")
        self.line(f"nodes={n} errors_total {idle.errors + during.errors} (target 0)")
        if not opts["keep"]:
            Cluster.objects.filter(name=name).delete()
            from django.contrib.auth import get_user_model

            get_user_model().objects.filter(username=USER).delete()
            bench.vacuum()

    def load_user(self) -> tuple[str, str]:
        """The user ``load`` with a fresh random password, and its API token."""
        from django.contrib.auth import get_user_model
        from rest_framework.authtoken.models import Token

        user, _ = get_user_model().objects.get_or_create(username=USER)
        password = secrets.token_urlsafe(18)
        user.set_password(password)
        user.save()
        token, _ = Token.objects.get_or_create(user=user)
        return password, token.key

    def pages(self, cluster) -> dict[str, list[str]]:
        from inventory.models import Node, ResourceClaim

        q = f"?cluster={cluster.name}"
        nodes = list(Node.objects.filter(cluster=cluster, gpu_count__gt=0).order_by("name"))
        claims = list(ResourceClaim.objects.filter(cluster=cluster).order_by("namespace", "name"))
        pages = {
            "overview": [reverse("inventory:cluster", args=[cluster.name])],
            "node_list": [reverse("inventory:nodes") + q],
            "node_page": [x.get_absolute_url() for x in _spread(nodes, 20)],
            "claims_list": [reverse("claims:list") + q],
            "stuck_queue": [reverse("claims:stuck") + q],
            "claim_page": [x.get_absolute_url() for x in _spread(claims, 20)],
            "readiness": [reverse("migration:readiness") + q],
            "migration_plan": [reverse("migration:plan") + q],
        }
        return {k: v for k, v in pages.items() if v}

    def api(self, cluster) -> dict[str, list[str]]:
        q = f"?cluster={cluster.name}"
        return {
            "api_nodes": [reverse("inventory-api:node-list") + q],
            "api_devices": [reverse("inventory-api:device-list") + q],
            "api_claims": [reverse("claims-api:claim-list") + q],
            "api_findings": [reverse("claims-api:finding-list") + q],
            "api_readiness": [reverse("migration-api:readiness-list") + q],
            "api_plan": [reverse("migration-api:plan") + q],
        }

    def wait_logins(self, log: Path, browsers: int, locust: subprocess.Popen, timeout: float = 300) -> None:
        """Until every browser user's login has been answered (recorded in the log)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if locust.poll() is not None:
                raise CommandError(f"locust exited with {locust.returncode} before the users had logged in")
            done = [r for r in load.parse_log(log.read_text().splitlines()) if r.name == "login"] if log.exists() else []
            if len(done) >= browsers:
                bad = [r for r in done if r.status != 302 or r.error]
                if bad:
                    raise CommandError(f"{len(bad)} logins failed: {bad[0]}")
                return
            time.sleep(0.5)
        raise CommandError(f"the browser users had not logged in within {timeout:.0f} s")

    def resync(self, path: Path, name: str, timeout: float) -> tuple[float, str, int]:
        """One ``sync_cluster`` command: (wall seconds, status, exit code)."""
        argv = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "sync_cluster", "--snapshot", str(path),
                "--cluster", name]
        t0 = time.perf_counter()
        try:
            out = subprocess.run(argv, cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
        except subprocess.TimeoutExpired:
            return time.perf_counter() - t0, f"killed after {timeout:.0f} s", -9
        wall = time.perf_counter() - t0
        run = bench.Run(wall, 0, out.returncode, out.stdout, out.stderr)
        if out.returncode:
            self.stderr.write(f"re-sync exit {out.returncode}: {out.stderr[-1000:]}")
        return wall, bench.sync_status(run), out.returncode

    def report(self, n: int, phase: str, records: list[load.Record], t0: float, t1: float, what: str) -> load.PhaseFigures:
        f = load.figures(records, t0, t1)
        self.line(f"nodes={n} {phase} all window_s={t1 - t0:.1f} {self.fmt(f)} ({what}; latency at the client, "
                  f"request sent to last byte, ms)")
        for page, pf in load.by_name(records, t0, t1).items():
            self.line(f"nodes={n} {phase} {page} {self.fmt(pf)}")
        for sample in f.error_samples:
            self.line(f"nodes={n} {phase} error_sample {sample}")
        return f

    @staticmethod
    def fmt(f: load.PhaseFigures) -> str:
        return (f"requests={f.requests} errors={f.errors} per_s={f.per_second:.1f} p50_ms={f.p50:.0f} "
                f"p95_ms={f.p95:.0f} p99_ms={f.p99:.0f} max_ms={f.max:.0f}")
