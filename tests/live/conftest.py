"""Fixtures of the live-cluster tests: the benchmark fleet's objects (devtools.benchfleet, real
shaped: see its docstring) served by the fake API server, and a Cluster reading it."""

from __future__ import annotations

import copy

import pytest

from devtools.benchfleet import generate_benchmark_fleet
from inventory.models import Cluster, SourceKind
from tests.fake_apiserver import FakeAPIServer


@pytest.fixture(scope="session")
def fleet_objects():
    return generate_benchmark_fleet(2)


@pytest.fixture
def fake(tmp_path, fleet_objects):
    server = FakeAPIServer()
    server.empty_lists_for_all_kinds()
    server.serve_objects(copy.deepcopy(fleet_objects))
    url = server.start()
    server.url = url
    server.kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", url)
    yield server
    server.stop()


@pytest.fixture
def live_settings(settings):
    """Short windows so a poll takes about a second: watches of 1 s (the fake sends its
    BOOKMARK at once, as the real server does 2 s before a watch's timeout), requests of 3 s."""
    settings.KUBE_WATCH_SECONDS = 1
    settings.KUBE_REQUEST_TIMEOUT = 3.0
    settings.KUBE_RETRY_ATTEMPTS = 3
    settings.KUBE_RETRY_SECONDS = 6
    settings.KUBE_READ_DEADLINE_SECONDS = 20
    settings.SYNC_LOCK_WAIT_SECONDS = 0.5
    return settings


@pytest.fixture
def cluster(db, fake, live_settings):
    return Cluster.objects.create(name="live", source_kind=SourceKind.KUBECONFIG, kubeconfig_path=str(fake.kubeconfig))
