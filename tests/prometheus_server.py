"""Start a real, throwaway Prometheus for tests, backfilled from OpenMetrics files.

Used by tests/telemetry/conftest.py and reusable by other test packages::

    from tests.prometheus_server import prometheus_or_skip
    server = prometheus_or_skip(tmp_path_factory.mktemp("prom"))   # pytest.skip if no binary
    ... server.url ...
    server.stop()

How: ``promtool tsdb create-blocks-from openmetrics <file> <data dir>`` for each file (blocks
added under a running server only show after a restart, so backfill first), then
``prometheus`` with an empty scrape config, that data dir and a loopback port, waiting for
``/-/ready``. Retention is ``RETENTION`` (100 years): Prometheus drops blocks by their distance
from the newest block, and the fixtures' fixed timestamps are months apart, so nothing is dropped
whatever the wall clock says.

When the binaries are missing the helpers skip, unless ``CLAIMSCOPE_REQUIRE_PROMETHEUS=1`` is set,
then they fail. Binaries: ``$PROMETHEUS_BIN``/``$PROMTOOL_BIN`` or ``prometheus``/``promtool``
on PATH (Debian package ``prometheus``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "prometheus"
RETENTION = "36500d"
READY_TIMEOUT_S = 30.0


def _binary(env: str, name: str) -> str | None:
    # An explicit path that is not an executable counts as missing.
    return shutil.which(os.environ.get(env) or name)


def binaries() -> tuple[str, str] | None:
    """(prometheus, promtool) paths, or None when either is missing."""
    prom, tool = _binary("PROMETHEUS_BIN", "prometheus"), _binary("PROMTOOL_BIN", "promtool")
    return (prom, tool) if prom and tool else None


def require_binaries() -> tuple[str, str]:
    """The binaries, or ``pytest.skip`` (``pytest.fail`` with CLAIMSCOPE_REQUIRE_PROMETHEUS=1)."""
    import pytest

    found = binaries()
    if found:
        return found
    msg = "prometheus/promtool not installed (Debian: apt-get install prometheus)"
    if os.environ.get("CLAIMSCOPE_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(msg + " and CLAIMSCOPE_REQUIRE_PROMETHEUS=1")
    pytest.skip(msg)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def backfill(promtool: str, openmetrics_files: Iterable[Path], data_dir: Path) -> None:
    """Turn each OpenMetrics file into TSDB blocks under ``data_dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for f in openmetrics_files:
        proc = subprocess.run(
            [promtool, "tsdb", "create-blocks-from", "openmetrics", str(f), str(data_dir)],
            capture_output=True, text=True, timeout=120, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"promtool failed on {f}: {proc.stderr.strip() or proc.stdout}")


@dataclass
class PrometheusServer:
    url: str
    process: subprocess.Popen[bytes]
    workdir: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"prometheus not ready within {READY_TIMEOUT_S}s: {log.read_text()[-2000:]}")


def start_prometheus(
    workdir: Path,
    openmetrics_files: Iterable[Path] | None = None,
    bins: tuple[str, str] | None = None,
) -> PrometheusServer:
    """Backfill ``openmetrics_files`` (default: every ``*.om`` in FIXTURE_DIR) and start.

    Raises ``RuntimeError`` when the binaries are missing or the server does not get ready.
    """
    bins = bins or binaries()
    if not bins:
        raise RuntimeError("prometheus/promtool not found")
    prom, promtool = bins
    files = sorted(openmetrics_files) if openmetrics_files is not None else sorted(
        FIXTURE_DIR.glob("*.om")
    )
    data = workdir / "data"
    backfill(promtool, files, data)
    config = workdir / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    last_error: Exception | None = None
    for _ in range(3):  # a freed port can be taken before prometheus binds it
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = workdir / f"prometheus-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    prom,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={data}",
                    f"--storage.tsdb.retention.time={RETENTION}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--log.level=warn",
                ],
                stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
            )
        server = PrometheusServer(url=url, process=proc, workdir=workdir)
        try:
            _wait_ready(url, proc, log)
            return server
        except RuntimeError as exc:
            server.stop()
            last_error = exc
    raise RuntimeError(f"could not start prometheus: {last_error}")


def prometheus_or_skip(workdir: Path, openmetrics_files: Iterable[Path] | None = None) -> PrometheusServer:
    """``start_prometheus`` after ``require_binaries`` (skip or fail when missing)."""
    return start_prometheus(workdir, openmetrics_files, require_binaries())
