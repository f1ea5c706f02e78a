"""DeviceClass, ResourceSlice and ResourceClaimTemplate pages, and the clusters index, on real
objects: what each object says, the objects it links to, in a fixed number of queries."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import AllocationResult, Device, DeviceClass, KubeObject, ResourceClaim, ResourceSlice
from tests.conftest import CASES, H100_SLICES

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


@pytest.fixture
def loaded(sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig")
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)


def test_clusters_index_lists_each_cluster_with_its_object_counts(client_in, loaded, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        resp = client_in.get(reverse("inventory:clusters"))
    rows = {r["cluster"].name: r for r in resp.context["rows"]}
    assert set(rows) == {"mig", "aicr"}
    assert rows["mig"]["classes"] == DeviceClass.objects.filter(cluster__name="mig").count() == 2
    assert rows["mig"]["templates"] == 3 and rows["aicr"]["slices"] == ResourceSlice.objects.filter(cluster__name="aicr").count()
    assert reverse("inventory:resourceslices", args=["aicr"]) in resp.content.decode()


def test_the_clusters_index_counts_free_devices_as_the_overview_does(client_in, loaded):
    """A cordoned node's idle devices are free to no pod: the index says what the overview says."""
    from inventory import queries
    from inventory.models import Node

    node = Node.objects.filter(cluster__name="mig", free_count__gt=0).first()
    assert node is not None
    Node.objects.filter(pk=node.pk).update(unschedulable=True)
    rows = {r["cluster"].name: r for r in client_in.get(reverse("inventory:clusters")).context["rows"]}
    overview = {r["cluster"].name: r for r in queries.with_dra_counts(queries.cluster_rows())}
    assert {n: (r["free"], r["migs"]) for n, r in rows.items()} == {n: (r["free"], r["migs"]) for n, r in overview.items()}
    idle = sum(Node.objects.filter(cluster__name="mig").values_list("free_count", flat=True))
    assert rows["mig"]["free"] == idle - node.free_count


def test_device_class_page_shows_its_selectors_and_the_devices_matching_it(client_in, loaded, django_assert_max_num_queries):
    dc = DeviceClass.objects.filter(cluster__name="mig").exclude(selectors=[]).order_by("name").first()
    with django_assert_max_num_queries(12):
        resp = client_in.get(reverse("inventory:deviceclass", args=["mig", dc.name]))
    body = resp.content.decode()
    from django.utils.html import escape

    assert resp.context["selectors"]
    for expr in resp.context["selectors"]:
        assert escape(expr) in body
    expected = {d.pk for d in Device.objects.filter(cluster__name="mig") if dc.name in d.device_classes}
    assert expected and {d.pk for d in resp.context["devices"]} == expected
    assert resp.context["page"].paginator.count == len(expected)


def test_resource_slice_page_lists_its_devices_with_the_claims_holding_them(client_in, loaded, django_assert_max_num_queries):
    rs = ResourceSlice.objects.get(cluster__name="mig")
    with django_assert_max_num_queries(12):
        resp = client_in.get(reverse("inventory:resourceslice", args=["mig", rs.name]))
    devices = resp.context["devices"]
    assert sorted(d.name for d in devices) == sorted(Device.objects.filter(slice=rs).values_list("name", flat=True))
    held = {d.pk: d.holder for d in devices if d.holder}
    results = AllocationResult.objects.filter(device__slice=rs).select_related("claim")
    assert held and {r.device_id for r in results} == set(held)
    body = resp.content.decode()
    assert reverse("inventory:node", args=["mig", rs.node_name]) in body
    assert reverse("inventory:yaml", args=["resourceslice", rs.pk]) in body


def test_claim_template_page_shows_its_requests_the_pods_using_it_and_their_claims(client_in, loaded):
    t = KubeObject.objects.get(cluster__name="mig", kind="ResourceClaimTemplate", name="mig-1g10gb")
    resp = client_in.get(reverse("inventory:claimtemplate", args=["mig", t.namespace, t.name]))
    assert [r["name"] for r in resp.context["requests"]] == [
        r["name"] for r in t.raw["spec"]["spec"]["devices"]["requests"]]
    pods = {p.name for p in resp.context["pods"]}
    assert len(pods) == 6 and all(p.startswith("jupyter-mig-") for p in pods)
    claims = {c.name for c in resp.context["claims"]}
    assert claims and claims <= set(ResourceClaim.objects.filter(cluster__name="mig", namespace=t.namespace).values_list("name", flat=True))


def test_unknown_objects_are_404(client_in, loaded):
    assert client_in.get(reverse("inventory:deviceclass", args=["mig", "nope"])).status_code == 404
    assert client_in.get(reverse("inventory:resourceslice", args=["nope", "x"])).status_code == 404
    assert client_in.get(reverse("inventory:yaml", args=["secret", 1])).status_code == 404


@pytest.mark.parametrize("sort", ["name", "-name", "profile", "-memory_bytes"])
def test_a_slices_devices_and_a_classs_matching_devices_sort_by_their_columns(client_in, loaded, sort):
    rs = max(ResourceSlice.objects.filter(cluster__name="mig"), key=lambda s: Device.objects.filter(slice=s).count())
    resp = client_in.get(reverse("inventory:resourceslice", args=["mig", rs.name]), {"sort": sort})
    assert resp.status_code == 200
    field, descending = sort.lstrip("-"), sort.startswith("-")
    values = [getattr(d, field) for d in resp.context["devices"]]
    assert len(values) == Device.objects.filter(slice=rs).count() > 1
    known = [v for v in values if v is not None]  # databases put NULLs at either end
    assert known == sorted(known, reverse=descending) and len(set(known)) > 1
    assert f"sort={'' if descending else '-'}{field}" in resp.content.decode()  # the header links the other way

    dc = DeviceClass.objects.filter(cluster__name="mig").order_by("name").first()
    resp = client_in.get(reverse("inventory:deviceclass", args=["mig", dc.name]), {"sort": "-node_name"})
    nodes = [d.node_name for d in resp.context["devices"]]
    assert resp.status_code == 200 and nodes == sorted(nodes, reverse=True)
