"""Fixtures for the telemetry tests: parsed real slices and a real, backfilled Prometheus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inventory.parse import Device
from tests.prometheus_server import PrometheusServer, prometheus_or_skip
from tests.telemetry.realdata import H100_SLICES, MIG_CASE, slice_devices


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    """A real Prometheus holding tests/fixtures/prometheus/*.om; skips without the binary
    unless CLAIMSCOPE_REQUIRE_PROMETHEUS=1."""
    server = prometheus_or_skip(tmp_path_factory.mktemp("prometheus"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def prometheus_url(prometheus: PrometheusServer) -> str:
    return prometheus.url


@pytest.fixture(scope="session")
def h100_devices() -> list[Device]:
    return slice_devices(H100_SLICES)


@pytest.fixture(scope="session")
def mig_devices() -> list[Device]:
    return slice_devices(MIG_CASE)
