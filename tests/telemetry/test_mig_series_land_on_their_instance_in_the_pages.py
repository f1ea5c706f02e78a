"""A snapshot's MIG series (the real A30 excerpt) land on the one matching MIG instance, which the
heatmap draws inside its parent GPU and the node panel lists with GR engine activity in percent;
series the slices cannot place are listed as unmatched with the reason."""

from __future__ import annotations

import shutil

import pytest
import yaml
from django.urls import reverse

from inventory.dcgm import parse_exposition
from inventory.models import Cluster, Device, UnmatchedSeries
from tests.telemetry.pagedata import PAGE_CHROME
from tests.telemetry.realdata import A30_MIG, H100_SCRAPE
from tests.telemetry.test_join_mig_instances import A30_UUID, GR_ACTIVE, _a30_slice

pytestmark = pytest.mark.django_db


def _slice_doc(placements):
    """The real-shaped A30 MIG slice of the join tests, as a ResourceSlice document."""
    from tests.telemetry.realdata import MIG_CASE, resource_slice_objects

    raw = resource_slice_objects(MIG_CASE)[0]
    devs = {d.name: d for d in _a30_slice(placements)}
    template = next(d for d in raw["spec"]["devices"] if d["attributes"]["type"]["string"] == "mig")
    out = []
    for name, d in devs.items():
        e = yaml.safe_load(yaml.safe_dump(template))
        e["name"] = name
        for attr, v in (("parentUUID", d.parent_uuid), ("profile", d.profile), ("productName", d.product_name), ("uuid", d.uuid)):
            e["attributes"][attr]["string"] = v
        out.append(e)
    raw["spec"]["devices"] = out
    return raw


@pytest.fixture
def a30(sync_snapshot, tmp_path):
    folder = tmp_path / "a30"
    folder.mkdir()
    (folder / "slice.yaml").write_text(yaml.safe_dump(_slice_doc([0])))
    shutil.copy(A30_MIG, folder / A30_MIG.name)
    shutil.copy(H100_SCRAPE, folder / H100_SCRAPE.name)  # GPUs this cluster does not have
    sync_snapshot(folder, name="a30")
    return Cluster.objects.get(name="a30")


def test_the_mig_series_land_on_the_instance_and_show_inside_their_gpu(client_in, a30, django_assert_max_num_queries):
    dev = Device.objects.get(cluster=a30, parent_uuid=A30_UUID)
    want = next(s.value for s in parse_exposition(A30_MIG.read_text()) if s.field == GR_ACTIVE)
    assert dev.metrics[GR_ACTIVE] == want
    with django_assert_max_num_queries(4 + PAGE_CHROME):
        html = client_in.get(reverse("inventory:telemetry-heatmap", args=["a30"])).content.decode()
    gpu_box = html.split('class="heat-gpu"')[1].split("</span>")[0]
    assert reverse("inventory:telemetry-device", args=[dev.pk]) in gpu_box
    assert f"{want * 100:.0f} % GR active" in gpu_box
    with django_assert_max_num_queries(2 + PAGE_CHROME):
        panel = client_in.get(reverse("inventory:telemetry-node", args=["a30", dev.node_name])).content.decode()
    assert dev.name in panel and "GR active" in panel and "MIG mode" in panel


def test_series_of_gpus_the_slices_do_not_publish_are_listed_with_their_reason(client_in, a30, django_assert_max_num_queries):
    h100 = {s.uuid for s in parse_exposition(H100_SCRAPE.read_text())}
    rows = UnmatchedSeries.objects.filter(cluster=a30)
    assert {r.labels["UUID"] for r in rows} == h100
    with django_assert_max_num_queries(4 + PAGE_CHROME):
        html = client_in.get(reverse("inventory:telemetry-unmatched", args=["a30"])).content.decode()
    assert f"no device with uuid {sorted(h100)[0]}" in html and "DCGM_FI_DEV_GPU_UTIL" in html
    assert f"{rows.count()}" in html
    index = client_in.get(reverse("inventory:telemetry")).content.decode()
    assert reverse("inventory:telemetry-unmatched", args=["a30"]) in index
