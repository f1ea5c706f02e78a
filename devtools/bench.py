"""What the user waits for, measured on the benchmark fleet (``devtools.benchfleet``).

Every timed command is a fresh process started here through a small launcher (``_LAUNCHER``):
it forks, execs ``python manage.py ...`` (or the floor's ``python -c``), waits, and reports the
wall time from just before the fork to the child's exit and the child's ``ru_maxrss`` from
``wait4``: absolute, nothing subtracted. (The launcher is a 10 MiB interpreter, so the pages the
child holds before its exec, which ``ru_maxrss`` also counts, are far below any figure here;
this large benchmark process never forks a measured child itself.)

Figures (``Figure``): each line says what it includes. Runs against the configured database;
``ANALYZE`` after the full syncs, ``VACUUM ANALYZE`` on PostgreSQL before each size and after
deleting a cluster. Nothing here is a test: time is measured, never asserted.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

_LAUNCHER = r"""
import json, os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    json.dump({"wall": wall, "maxrss_kib": ru.ru_maxrss, "code": os.waitstatus_to_exitcode(status)}, f)
"""
_FLOOR = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    json.loads(f.read())\n"
# A fresh web process: the WSGI application loaded (as gunicorn does at boot), then the first
# request of one page, timed on its own, with its query count.
_FIRST_REQUEST = r"""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import config.wsgi  # what gunicorn loads before it accepts requests (warm-up included)
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
url, user = sys.argv[1], sys.argv[2]
client = Client()
client.force_login(get_user_model().objects.get(username=user))
plain = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
with override_settings(STORAGES=plain):
    # The test client's handler loads the middleware on its first request; gunicorn's
    # (config.wsgi's WSGIHandler) did at start-up, before accepting any: WhiteNoise's scan of
    # the collected static files is start-up, not the first request (0.2 s with them there).
    client.handler.load_middleware()
    with CaptureQueriesContext(connection) as ctx:
        t0 = time.perf_counter()
        resp = client.get(url)
        ms = (time.perf_counter() - t0) * 1000
print(json.dumps({"ms": ms, "queries": len(ctx.captured_queries), "status": resp.status_code}))
"""


@dataclass(frozen=True)
class Run:
    """One measured child process: wall seconds (fork to exit), peak RSS bytes, exit code."""

    wall: float
    peak_rss: int
    code: int
    stdout: str
    stderr: str


def measure(argv: Sequence[str], cwd: Path | None = None) -> Run:
    """Run ``argv`` (argv[0] an absolute executable) as a fresh process through the launcher."""
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as f:
        result = Path(f.name)
    try:
        # Our interpreter, our launcher, arguments built by this module: nothing untrusted.
        out = subprocess.run(  # noqa: S603
            [sys.executable, "-c", _LAUNCHER, str(result), *argv],
            cwd=cwd or settings.BASE_DIR, capture_output=True, text=True, check=False,
        )
        data = json.loads(result.read_text() or "{}")
    finally:
        result.unlink(missing_ok=True)
    if not data:
        raise RuntimeError(f"launcher failed: {out.stderr[-2000:]}")
    return Run(data["wall"], data["maxrss_kib"] * 1024, data["code"], out.stdout, out.stderr)


def floor(path: Path) -> Run:
    """A fresh ``python -c`` that reads ``path`` and ``json.loads`` it: the least any ingest does."""
    return measure([sys.executable, "-c", _FLOOR, str(path)])


def manage(*args: str) -> Run:
    """``python manage.py <args>`` as a fresh process (the configured database, this environment)."""
    return measure([sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), *args])


def first_request(url: str, username: str) -> dict[str, Any]:
    """{ms, queries, status} of the first request to ``url`` in a fresh web process (logged in
    as ``username``); the process's start-up (loading ``config.wsgi`` as gunicorn does before
    it accepts requests, warm-up included) is not in ``ms``."""
    out = subprocess.run(  # noqa: S603 - our interpreter and probe
        [sys.executable, "-c", _FIRST_REQUEST, url, username],
        cwd=settings.BASE_DIR, capture_output=True, text=True, check=False,
    )
    if out.returncode:
        raise RuntimeError(f"first request of {url} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def sync_status(run: Run) -> str:
    """The run's status as ``sync_cluster`` prints it (``cluster NAME: ok in N ms from ...``)."""
    for line in run.stdout.splitlines():
        if line.startswith("cluster ") and ": " in line:
            return line.split(": ", 1)[1].split(" ", 1)[0]
    return f"exit {run.code}"


def interleaved(first: Callable[[], Run], second: Callable[[int], Run], repeat: int) -> tuple[list[Run], list[Run]]:
    """``first(), second(0), first(), second(1), ...``: both see the same machine over time."""
    a, b = [], []
    for i in range(repeat):
        a.append(first())
        b.append(second(i))
    return a, b


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


PACKAGES = ("config", "inventory", "claims", "migration", "devtools")


def compile_project() -> str:
    """Compile the project's modules, as the image and ``make bytecode`` do, so that no timed
    command compiles them on import (where PYTHONDONTWRITEBYTECODE is set it would, every
    time: about 0.2 s of each start-up). Says what was found."""
    import compileall

    base = Path(settings.BASE_DIR)
    ok = all(compileall.compile_dir(base / p, quiet=1) for p in PACKAGES) and compileall.compile_file(base / "manage.py", quiet=1)
    return "compiled" if ok else "compile errors (some modules compile on import)"


def environment(bytecode: str) -> dict[str, str]:
    """Where the figures were taken: database and version, Python, CPUs, code revision, and
    ``bytecode``: what ``compile_project`` said before any timed command ran."""
    from django.db import connection

    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SHOW server_version")
            version = f"PostgreSQL {cur.fetchone()[0]}"
        else:
            cur.execute("select sqlite_version()")
            version = f"SQLite {cur.fetchone()[0]}"
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=settings.BASE_DIR,  # noqa: S607
                         capture_output=True, text=True, check=False).stdout.strip()
    marker = Path(settings.BASE_DIR) / "REVISION"  # a tree exported with `git archive` has no .git
    if not rev and marker.exists():
        rev = marker.read_text().strip()
    return {
        "database": connection.vendor,
        "database_version": version,
        "python": platform.python_version(),
        "cpus": str(os.cpu_count()),
        "revision": rev or "unknown",
        "bytecode": bytecode,
    }


def analyze() -> None:
    """Fresh planner statistics after a large sync (``ANALYZE`` on both databases)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("ANALYZE")


def vacuum() -> None:
    """PostgreSQL only: reclaim the rows of deleted clusters so they do not weigh on the next run."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")


@contextmanager
def read_end() -> Iterator[list[float]]:
    """While open, each sync's source stream records (``time.monotonic()``) when its last
    object was handed over; yields the list of those moments."""
    from inventory import sources

    ends: list[float] = []
    items = sources.ReadResult.items

    def timed_items(self):
        yield from items(self)
        ends.append(time.monotonic())

    sources.ReadResult.items = timed_items
    try:
        yield ends
    finally:
        sources.ReadResult.items = items
