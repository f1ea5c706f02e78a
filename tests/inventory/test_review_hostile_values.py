"""Values a cluster can send that Kubernetes itself refuses, found by a hostile review: each is
a problem of one object or one value, never a failed sync or a 500 on pages every user sees.
Built from the real-shaped ``capacity-exhausted-all-gpus-allocated`` case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from inventory.models import Cluster, Device, SyncStatus
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


def test_two_claims_and_pods_of_one_name_open_one_page_that_names_the_other(tmp_path, sync_snapshot, client_in):
    docs = _docs()
    claim, pod = _first(docs, "ResourceClaim"), _first(docs, "Pod")
    twins = []
    for original in (claim, pod):
        twin = yaml.safe_load(yaml.safe_dump(original))
        twin["metadata"]["uid"] = "00000000-0000-4000-8000-00000000beef"
        twins.append(twin)
    run = sync_snapshot(_write(tmp_path, docs + twins), name="twins")
    assert run.status in (SyncStatus.OK, SyncStatus.PARTIAL), run.message
    meta = claim["metadata"]
    body = client_in.get(reverse("claims:claim", args=["twins", meta["namespace"], meta["name"]])).content.decode()
    assert "1 namesake" in body and "00000000-0000-4000-8000-00000000beef" in body
    meta = pod["metadata"]
    resp = client_in.get(reverse("claims:pod", args=["twins", meta["namespace"], meta["name"]]))
    assert resp.status_code == 200 and "00000000-0000-4000-8000-00000000beef" in resp.content.decode()
    # A page of a unique name says nothing of namesakes; an unknown one is a 404.
    node = _first(docs, "Node")["metadata"]["name"]
    assert "namesake" not in client_in.get(reverse("inventory:node", args=["twins", node])).content.decode()
    assert client_in.get(reverse("claims:claim", args=["twins", "nowhere", "nothing"])).status_code == 404


def _two_generations(tmp_path, sync_snapshot):
    """Cluster ``one-gen`` (the case) and ``two-gen`` (the case plus an older generation of one
    pool, whose slice lists one more GPU, gpu-99); returns both and the two slices."""
    docs = _docs()
    s = _first(docs, "ResourceSlice")
    s["spec"]["pool"]["generation"] = 2
    old = yaml.safe_load(yaml.safe_dump(s))
    old["metadata"].update(name=s["metadata"]["name"] + "-old", uid="00000000-0000-4000-8000-0000000000a1")
    old["spec"]["pool"]["generation"] = 1
    extra = yaml.safe_load(yaml.safe_dump(old["spec"]["devices"][0]))
    extra["name"] = "gpu-99"
    for key in ("uuid",):
        if key in extra.get("attributes", {}):
            extra["attributes"][key] = {"string": "GPU-00000000-0000-4000-8000-0000000000a2"}
    old["spec"]["devices"].append(extra)
    assert sync_snapshot(_write(tmp_path, docs), name="one-gen").status == SyncStatus.OK
    (tmp_path / "two").mkdir()
    run = sync_snapshot(_write(tmp_path / "two", [*docs, old]), name="two-gen")
    assert run.status in (SyncStatus.OK, SyncStatus.PARTIAL), run.message
    one, two = (Cluster.objects.get(name=n) for n in ("one-gen", "two-gen"))
    assert Device.objects.filter(cluster=two, name="gpu-99").exists()  # stored: the list may show it
    return one, two, s, old


def test_a_superseded_pool_generation_changes_no_overview_number(tmp_path, sync_snapshot):
    """A driver restarting its plugin may list a new pool generation beside the old one: only
    the newest generation publishes, so the old slice's extra GPU is neither counted nor free
    (the capacity figures already read it so; the overview's device counts now agree)."""
    from inventory import queries

    one, two, _, _ = _two_generations(tmp_path, sync_snapshot)
    want = queries._overview_counts(one)
    assert want["products"] and queries._overview_counts(two) == want


def test_the_node_page_leaves_out_a_superseded_generation_and_marks_its_slice(tmp_path, sync_snapshot, client_in):
    _, two, s, old = _two_generations(tmp_path, sync_snapshot)
    node = s["spec"]["nodeName"]
    body = client_in.get(reverse("inventory:node", args=[two.name, node])).content.decode()
    assert "gpu-99" not in body  # only the old generation lists it
    assert s["spec"]["devices"][0]["name"] in body
    row = next(line for line in body.splitlines() if old["metadata"]["name"] in line)
    assert "superseded" in row
    new_row = next(line for line in body.splitlines() if f'{s["metadata"]["name"]}<' in line)
    assert "superseded" not in new_row


def test_a_re_sync_of_a_file_without_resource_versions_reports_no_update(tmp_path, sync_snapshot):
    """Hand-written snapshots carry no resourceVersion: an object equal to the stored one is
    unchanged, as one met at its stored resourceVersion is (it was counted updated on every
    re-sync), claims included, whose allocation results stay. Slices take their own path."""
    from inventory.models import AllocationResult

    docs = _docs()
    for d in docs:
        d.get("metadata", {}).pop("resourceVersion", None)
    path = _write(tmp_path, docs)
    sync_snapshot(path, name="no-rv")
    again = sync_snapshot(path, name="no-rv")
    assert again.status == SyncStatus.OK, again.message
    for kind in ("Node", "Pod", "DeviceClass", "ResourceClaim"):
        c = again.counts[kind]
        assert c["seen"] > 0 and c["updated"] == 0 and c["unchanged"] == c["seen"], (kind, c)
    cluster = Cluster.objects.get(name="no-rv")
    held = sorted(AllocationResult.objects.filter(claim__cluster=cluster).values_list("claim__name", "device__name"))
    assert held and Device.objects.filter(cluster=cluster).count() > 0
    pod = _first(docs, "Pod")
    pod["metadata"].setdefault("labels", {})["changed"] = "yes"
    claim = next(d for d in docs if d.get("kind") == "ResourceClaim" and (d.get("status") or {}).get("allocation"))
    claim["status"].pop("allocation")
    claim["status"].pop("reservedFor", None)
    changed = sync_snapshot(_write(tmp_path, docs), name="no-rv")
    assert changed.counts["Pod"]["updated"] == 1, changed.counts["Pod"]
    assert changed.counts["ResourceClaim"]["updated"] == 1, changed.counts["ResourceClaim"]
    left = sorted(AllocationResult.objects.filter(claim__cluster=cluster).values_list("claim__name", "device__name"))
    assert left == [h for h in held if h[0] != claim["metadata"]["name"]]
