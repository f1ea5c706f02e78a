"""Pieces of ``manage.py load_benchmark``: the web server and the load as processes, and the
figures read from the load's request log (``devtools/load_locustfile.py`` writes it).

Time is measured here, never asserted in tests. Figures per phase (``PhaseFigures``): requests
whose *start* falls in the phase's window, their client-side latency (locust's: from sending
the request to the last byte of the body, in milliseconds, over loopback), errors (any answer
but 200, or a failed connection), and percentiles by nearest rank.
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LOCUSTFILE = Path(__file__).with_name("load_locustfile.py")
# The browser users' login is set-up, not a page: never in a phase's figures.
SETUP_NAMES = frozenset({"login_form", "login"})


@dataclass(frozen=True, slots=True)
class Record:
    """One request of the load: ``start`` epoch seconds, ``ms`` latency, ``name`` the page or
    API list it asked for, ``status`` the HTTP status (0: no answer), ``error`` ("" when 200)."""

    start: float
    ms: float
    name: str
    status: int
    error: str

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error


@dataclass(frozen=True, slots=True)
class PhaseFigures:
    """Requests started in ``[t0, t1)``: count, errors, requests per second, and latency
    percentiles (ms; ``nan`` when there is no request)."""

    requests: int
    errors: int
    per_second: float
    p50: float
    p95: float
    p99: float
    max: float
    error_samples: tuple[str, ...]


def parse_log(lines: Iterable[str]) -> list[Record]:
    """Records from the locustfile's tab-separated lines; a torn last line (the load was
    stopped while writing) is skipped."""
    out = []
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 5:
            continue
        try:
            out.append(Record(float(parts[0]), float(parts[1]), parts[2], int(parts[3]), parts[4]))
        except ValueError:
            continue
    return out


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0-100) of an ascending sequence; ``nan`` if empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def figures(records: Iterable[Record], t0: float, t1: float) -> PhaseFigures:
    """The figures of the records (set-up requests excluded) that started in ``[t0, t1)``."""
    chosen = [r for r in records if t0 <= r.start < t1 and r.name not in SETUP_NAMES]
    ms = sorted(r.ms for r in chosen)
    bad = [r for r in chosen if not r.ok]
    samples = tuple(dict.fromkeys(f"{r.name}: {r.status} {r.error}".strip() for r in bad))[:5]
    span = t1 - t0
    return PhaseFigures(
        requests=len(chosen), errors=len(bad), per_second=len(chosen) / span if span > 0 else math.nan,
        p50=percentile(ms, 50), p95=percentile(ms, 95), p99=percentile(ms, 99), max=ms[-1] if ms else math.nan,
        error_samples=samples,
    )


def by_name(records: Iterable[Record], t0: float, t1: float) -> dict[str, PhaseFigures]:
    """``figures`` per request name (page or API list)."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.name not in SETUP_NAMES:
            groups[r.name].append(r)
    return {name: figures(rs, t0, t1) for name, rs in sorted(groups.items())}


def free_port() -> int:
    """A TCP port free on loopback now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(base: Mapping[str, str]) -> dict[str, str]:
    """The web server's environment: ``base`` (database, secrets) with plain-http cookies (the
    load speaks http on loopback, where Secure cookies would not be sent back) and static files
    without collectstatic's manifest (the load requests HTML and JSON, never static files)."""
    env = dict(base)
    env.update({"SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
                "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"})
    env.pop("CELERY_BROKER_URL", None)  # the web process enqueues nothing during the load
    return env


def start_gunicorn(port: int, env: Mapping[str, str], cwd: Path, log: Path, workers: int = 2, threads: int = 4,
                   ) -> subprocess.Popen:
    """gunicorn as the image runs it (``Dockerfile``: 2 workers, 4 threads, 60 s timeout) on
    ``127.0.0.1:port``, without an access log; its own log goes to ``log``."""
    argv = [sys.executable, "-m", "gunicorn", "config.wsgi:application", f"--bind=127.0.0.1:{port}",
            f"--workers={workers}", f"--threads={threads}", "--timeout=60", "--worker-tmp-dir=/dev/shm"]
    with log.open("ab") as out:
        # Our interpreter and arguments: nothing untrusted.
        return subprocess.Popen(argv, cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT)  # noqa: S603


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    """Wait until ``url`` answers 200; RuntimeError after ``timeout`` s or if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 - our loopback server
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer 200 within {timeout:.0f} s")


def start_locust(host: str, users: int, config: Path, cwd: Path, log: Path, run_time_s: int) -> subprocess.Popen:
    """Locust headless with ``users`` users all started at once, at most ``run_time_s`` seconds
    (the command stops it earlier with SIGTERM), its output to ``log``."""
    argv = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--host", host,
            "-u", str(users), "-r", str(users), "--run-time", f"{run_time_s}s", "--stop-timeout", "5",
            "--only-summary", "--loglevel", "WARNING", "--exit-code-on-error", "0"]
    env = {**os.environ, "CLAIMSCOPE_LOAD_CONFIG": str(config)}
    with log.open("ab") as out:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603


def stop(proc: subprocess.Popen, timeout: float = 30) -> int:
    """SIGTERM, then SIGKILL after ``timeout`` s; the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
