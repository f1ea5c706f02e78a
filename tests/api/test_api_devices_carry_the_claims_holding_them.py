"""Devices in the API name the claims whose allocation holds them, with the pods reserving
those claims, as stored; and filter as the device list page does."""

from __future__ import annotations

import pytest

from inventory.models import AllocationResult, Device, Reservation

pytestmark = pytest.mark.django_db


def test_every_allocated_device_names_its_claim_and_pods(api, fleet):
    results = AllocationResult.objects.filter(device__isnull=False).select_related("claim", "device__cluster")
    assert results.count() > 3
    for r in results:
        d = r.device
        body = api.get(f"/api/inventory/devices/{d.pk}/").json()
        assert body["cluster"] == d.cluster.name and body["name"] == d.name and body["uuid"] == d.uuid
        held = {(h["namespace"], h["name"], h["request"]) for h in body["holders"]}
        assert (r.claim.namespace, r.claim.name, r.request) in held
        pods = [p["uid"] for h in body["holders"] if h["name"] == r.claim.name for p in h["pods"]]
        assert sorted(pods) == sorted(Reservation.objects.filter(claim=r.claim).values_list("uid", flat=True))


def test_a_consumer_without_a_stored_pod_is_marked_not_stored(api, fleet):
    from inventory.models import Pod

    gone = [r for r in Reservation.objects.filter(claim__cluster__name="orphan")
            if not Pod.objects.filter(cluster__name="orphan", uid=r.uid).exists()]
    assert gone, "the orphan case reserves its claim for a deleted pod"
    rows = api.get("/api/inventory/devices/", {"cluster": "orphan", "allocated": "true"}).json()["results"]
    pods = {p["uid"]: p["stored"] for d in rows for h in d["holders"] for p in h["pods"]}
    assert pods[gone[0].uid] is False


def test_free_devices_have_no_holders(api, fleet):
    rows = api.get("/api/inventory/devices/", {"cluster": "aicr", "allocated": "false", "limit": 1000}).json()
    assert rows["count"] == Device.objects.filter(cluster__name="aicr", allocations__isnull=True).count() > 0
    assert all(d["holders"] == [] for d in rows["results"])


def test_filters_are_the_device_list_pages(api, fleet):
    mig = Device.objects.filter(cluster__name="mig", type="mig").exclude(profile="").first()
    rows = api.get("/api/inventory/devices/", {"cluster": "mig", "profile": mig.profile, "limit": 1000}).json()
    assert rows["count"] == Device.objects.filter(cluster__name="mig", profile=mig.profile).count() > 1
    assert {d["profile"] for d in rows["results"]} == {mig.profile}
    fragment = mig.uuid[4:14]
    found = api.get("/api/inventory/devices/", {"q": fragment}).json()["results"]
    assert mig.pk in {d["id"] for d in found}


def test_an_unknown_cluster_is_a_400_not_the_whole_fleet(api, fleet):
    resp = api.get("/api/inventory/devices/", {"cluster": "no-such-cluster"})
    assert resp.status_code == 400 and "cluster" in resp.json()
