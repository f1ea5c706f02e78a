"""Inventory pages render real data with a bounded number of SQL queries, and escape cluster text."""

from __future__ import annotations

import copy

import pytest
import yaml
from django.urls import reverse

from inventory.models import Cluster, Device, Node
from inventory.sources import ReadResult
from inventory.sync import apply_read
from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


@pytest.fixture
def loaded(sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig", hooks=False)
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    sync_snapshot(VKS_SLICES, name="vks", hooks=False)
    sync_snapshot(VKS_CLAIM, name="vks", hooks=False)


def test_every_page_needs_login(client, loaded):
    node = Node.objects.get(name="gpu-node-01")
    for url in (reverse("inventory:overview"), reverse("inventory:nodes"), node.get_absolute_url()):
        resp = client.get(url)
        assert resp.status_code == 302 and resp["Location"].startswith(reverse("login"))


def test_overview_counts_mig_parents_as_physical_gpus(client_in, loaded, django_assert_max_num_queries):
    with django_assert_max_num_queries(15):
        resp = client_in.get(reverse("inventory:cluster", args=["mig"]))
    assert resp.status_code == 200
    products = {p["product"]: p for p in resp.context["products"]}
    h100 = products["NVIDIA H100 80GB HBM3"]
    assert (h100["whole"], h100["mig_parents"], h100["mig_instances"], h100["mig_allocated"]) == (6, 2, 14, 12)
    profiles = {(p["product_name"], p["profile"]): p for p in resp.context["profiles"]}
    assert profiles[("NVIDIA H100 80GB HBM3", "1g.10gb")]["free"] == 2


def test_overview_of_all_clusters_compares_them(client_in, loaded, django_assert_max_num_queries):
    with django_assert_max_num_queries(15):
        resp = client_in.get(reverse("inventory:overview"))
    rows = {r["cluster"].name: r for r in resp.context["clusters"]}
    assert rows["aicr"]["gpus"] == 16 and rows["vks"]["allocated"] == 1


def test_node_page_nests_mig_instances_under_their_gpu_with_holders(client_in, loaded, django_assert_max_num_queries):
    node = Node.objects.get(name="gpu-node-01")
    with django_assert_max_num_queries(19):  # 15 + the DRA state (queries.dra_states: slices, claims, rules, pods)
        resp = client_in.get(node.get_absolute_url())
    assert resp.status_code == 200
    gpus = resp.context["gpus"]
    parted = [g for g in gpus if g["migs"]]
    assert len(parted) == 2 and all(len(g["migs"]) == 7 for g in parted)
    held = [m for g in parted for m in g["migs"] if m.holder]
    assert len(held) == 12
    assert all(m.holder["claim"].namespace for m in held)
    free = resp.context["free_by_profile"]
    assert free["1g.10gb"]["free_instances"] == 2


def test_node_list_filters_and_paginates_with_few_queries(client_in, loaded, django_assert_max_num_queries):
    with django_assert_max_num_queries(10):
        resp = client_in.get(reverse("inventory:nodes"), {"driver": "gpu.nvidia.com", "cluster": "aicr"})
    names = [row.record.name for row in resp.context["table"].page.object_list]
    assert names == ["gpu-node-1", "gpu-node-2"]


def test_device_search_finds_by_uuid_claim_and_pod(client_in, loaded, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        resp = client_in.get(reverse("inventory:devices"), {"q": "GPU-bc5610b9"})
    assert [d.name for d in resp.context["devices"]] == ["gpu-1"]
    resp = client_in.get(reverse("inventory:devices"), {"q": "dra-gpu-example-798fccd4d-sfl2p"})
    assert [(d.cluster.name, d.name) for d in resp.context["devices"]] == [("vks", "gpu-0")]
    # The claim's namespace, and the uid of the pod it is reserved for (exact), each once.
    for q in ("gpu-test1", "D36CA24F-9949-4c33-9d47-c06846f775b1"):
        resp = client_in.get(reverse("inventory:devices"), {"q": q})
        assert [(d.cluster.name, d.name) for d in resp.context["devices"]] == [("vks", "gpu-0")], q
    assert not client_in.get(reverse("inventory:devices"), {"q": "d36ca24f-9949"}).context["devices"]
    held = client_in.get(reverse("inventory:devices"), {"allocated": "true"}).context["table"].page.paginator.count
    idle = client_in.get(reverse("inventory:devices"), {"allocated": "false"}).context["table"].page.paginator.count
    assert (held, held + idle) == (Device.objects.filter(allocations__isnull=False).values("pk").distinct().count(), Device.objects.count())


def test_device_page_shows_holder_and_attributes(client_in, loaded, django_assert_max_num_queries):
    dev = Device.objects.get(cluster__name="vks", node_name="conformance-test-np1-qcqc8-bpdtl-wv2gs")
    with django_assert_max_num_queries(16):  # 12 + the DRA state of its node (queries.dra_states)
        resp = client_in.get(dev.get_absolute_url())
    html = resp.content.decode()
    assert "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk" in html
    assert "GRID A100-10C" in html


def test_htmx_request_gets_only_the_table_partial(client_in, loaded):
    resp = client_in.get(reverse("inventory:nodes"), HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert 'id="table"' in html and "<html" not in html


def test_hostile_label_and_device_names_are_escaped(client_in):
    cluster = Cluster.objects.create(name="evil")
    slices = yaml.safe_load(H100_SLICES.read_text())["items"][1:2]
    s = copy.deepcopy(slices[0])
    s["spec"]["devices"][0]["attributes"]["productName"] = {"string": "<script>alert('p')</script>"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-1", "uid": "n1", "labels": {"evil": "<img src=x onerror=alert(1)>"}}}
    apply_read(cluster, ReadResult(objects=[s, node], complete_kinds={"ResourceSlice", "Node"}))
    html = client_in.get(reverse("inventory:node", args=["evil", "gpu-node-1"])).content.decode()
    assert "<script>alert('p')</script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html


def test_an_unknown_cluster_in_a_pasted_link_shows_nothing_and_says_why(client_in, loaded):
    resp = client_in.get(reverse("inventory:nodes"), {"cluster": "doesnotexist"})
    assert resp.status_code == 200
    assert list(resp.context["table"].page.object_list) == []
    assert "Select a valid choice" in resp.content.decode()
    resp = client_in.get(reverse("inventory:devices"), {"cluster": "doesnotexist"})
    assert resp.context["devices"] == []
