"""The live source against a fake API server: paging, version fallback, failures lose nothing."""

from __future__ import annotations

import pytest
import yaml

from inventory.models import Cluster, Device, ResourceClaim, ResourceSlice, SourceKind
from inventory.sources import LiveSource, SourceError
from inventory.sync import sync_cluster
from tests.conftest import H100_SLICES, VKS_CLAIM, VKS_SLICES
from tests.fake_apiserver import FakeAPIServer

pytestmark = pytest.mark.django_db

SLICES_PATH = "/apis/resource.k8s.io/v1/resourceslices"


def _objects():
    objs = []
    for f in (H100_SLICES, VKS_SLICES, VKS_CLAIM):
        objs.extend(yaml.safe_load(f.read_text())["items"])
    return objs


@pytest.fixture
def fake(tmp_path):
    server = FakeAPIServer()
    server.empty_lists_for_all_kinds()
    server.serve_objects(_objects())
    url = server.start()
    server.kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", url)
    yield server
    server.stop()


def _source(fake, **kw):
    return LiveSource(kubeconfig=str(fake.kubeconfig), page_size=2, timeout=kw.pop("timeout", 5.0), **kw)


def _cluster():
    return Cluster.objects.create(name="live", source_kind=SourceKind.KUBECONFIG)


def test_live_sync_pages_through_every_list_and_records_the_server_version(fake):
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.count() == 6  # 4 aicr + 2 vks, read two per page
    assert Device.objects.filter(driver="gpu.nvidia.com").count() == 18
    assert sum(1 for r in fake.requests if r.startswith(SLICES_PATH) and "continue=" in r) == 2
    cluster.refresh_from_db()
    assert cluster.server_version == "v1.36.1"
    assert ResourceClaim.objects.get().state == "in_use"


def test_a_500_on_page_two_deletes_nothing_and_marks_the_run_partial(fake):
    cluster = _cluster()
    sync_cluster(cluster, _source(fake))
    fake.failures[(SLICES_PATH, 1)] = 500
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "partial"
    assert any("HTTP 500" in e for e in run.errors)
    assert ResourceSlice.objects.count() == 6 and Device.objects.count() == 22


def test_a_timeout_deletes_nothing(fake):
    cluster = _cluster()
    sync_cluster(cluster, _source(fake))
    fake.delays[SLICES_PATH] = 1.5
    run = sync_cluster(cluster, _source(fake, timeout=0.5))
    assert run.status == "partial"
    assert any("ResourceSlice" in e for e in run.errors)
    assert ResourceSlice.objects.count() == 6


def test_a_server_without_v1_is_read_through_v1beta1_and_normalized(tmp_path):
    server = FakeAPIServer(version="v1.32.3")
    server.empty_lists_for_all_kinds(dra_version="v1beta1")
    legacy = {
        "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpu", "uid": "u-1", "resourceVersion": "5"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "basic": {"attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-1"}},
                                                     "capacity": {"memory": {"value": "80Gi"}}}}],
        },
    }
    server.serve_objects([legacy], dra_version="v1beta1")
    url = server.start()
    try:
        kc = server.write_kubeconfig(tmp_path / "kc", url)
        run = sync_cluster(_cluster(), LiveSource(kubeconfig=str(kc)))
    finally:
        server.stop()
    assert run.status == "ok", run.errors
    dev = Device.objects.get()
    assert (dev.type, dev.uuid, dev.memory_bytes) == ("gpu", "GPU-1", 80 * 2**30)


def test_a_dead_api_server_fails_the_run_and_keeps_the_inventory(fake):
    cluster = _cluster()
    sync_cluster(cluster, _source(fake))
    fake.stop()
    run = sync_cluster(cluster, _source(fake, timeout=1.0))
    assert run.status == "failed"
    assert "/version" in run.error
    assert ResourceSlice.objects.count() == 6


def test_wrong_credentials_fail_with_the_status(fake):
    fake.token = "another"
    run = sync_cluster(_cluster(), _source(fake))
    assert run.status == "failed" and "401" in run.error


def test_missing_kubeconfig_is_a_clear_source_error(tmp_path):
    with pytest.raises(SourceError, match="cannot load cluster credentials"):
        LiveSource(kubeconfig=str(tmp_path / "missing"))


def test_an_expired_continue_token_relists_from_the_start(fake):
    fake.fail_once[(SLICES_PATH, 2)] = 410
    run = sync_cluster(_cluster(), _source(fake))
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.count() == 6
    assert sum(1 for r in fake.requests if r.startswith(SLICES_PATH) and "continue=" not in r) == 2
