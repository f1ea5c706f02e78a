"""Values a cluster can send that Kubernetes itself refuses, found by a hostile review: each is
a problem of one object or one value, never a failed sync or a 500 on pages every user sees.
Built from the real-shaped ``capacity-exhausted-all-gpus-allocated`` case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from inventory.models import Device, SyncStatus
from inventory.records.resource import parse_quantity
from tests.conftest import CASES

pytestmark = pytest.mark.django_db
CASE = CASES / "capacity-exhausted-all-gpus-allocated/snapshot/cluster.yaml"


def _docs() -> list[dict]:
    return [d for d in yaml.safe_load_all(CASE.read_text()) if d]


def _write(tmp_path: Path, docs: list[dict]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _first(docs: list[dict], kind: str) -> dict:
    return next(d for d in docs if d.get("kind") == kind)


@pytest.mark.parametrize("text", ["NaN", "sNaN", "Infinity", "-Infinity", "inf", "nan"])
def test_a_non_finite_quantity_is_no_quantity(text):
    assert parse_quantity(text) is None
    assert parse_quantity("81559Mi") is not None


@pytest.mark.parametrize("text", ["NaN", "Infinity"])
def test_a_non_finite_device_capacity_leaves_the_sync_ok_and_the_pages_up(tmp_path, sync_snapshot, client_in, text):
    docs = _docs()
    s = _first(docs, "ResourceSlice")
    for d in s["spec"]["devices"]:
        d.setdefault("capacity", {})["memory"] = {"value": text}
    run = sync_snapshot(_write(tmp_path, docs), name="nan")
    assert run.status == SyncStatus.OK, run.message
    assert Device.objects.filter(cluster__name="nan").count() > 0
    for url in (reverse("inventory:cluster", args=["nan"]), reverse("inventory:nodes"), reverse("claims:stuck")):
        assert client_in.get(url).status_code == 200, url


@pytest.mark.parametrize("node", ["a/b", "..", "x/../../admin"])
def test_a_node_name_no_node_can_have_is_text_on_every_page_not_a_500(tmp_path, sync_snapshot, client_in, node):
    docs = _docs()
    s = _first(docs, "ResourceSlice")
    s["spec"]["nodeName"] = node
    pod = _first(docs, "Pod")
    pod.setdefault("spec", {})["nodeName"] = node
    run = sync_snapshot(_write(tmp_path, docs), name="odd")
    assert run.status in (SyncStatus.OK, SyncStatus.PARTIAL), run.message
    device = Device.objects.filter(cluster__name="odd", node_name=node).first()
    assert device is not None
    urls = [reverse("inventory:nodes"), reverse("inventory:devices"), reverse("inventory:devices") + "?sort=-cluster",
            reverse("claims:list"), reverse("claims:stuck"), reverse("inventory:cluster", args=["odd"]),
            reverse("inventory:resourceslices", args=["odd"]), reverse("inventory:device", args=[device.pk]),
            reverse("inventory:telemetry-heatmap", args=["odd"]),
            reverse("claims:pod", args=["odd", pod["metadata"]["namespace"], pod["metadata"]["name"]])]
    for url in urls:
        resp = client_in.get(url)
        assert resp.status_code == 200, url
        body = resp.content.decode()
        assert f'/nodes/{node}/"' not in body, url
