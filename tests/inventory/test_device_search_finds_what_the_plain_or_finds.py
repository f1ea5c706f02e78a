"""The device list's search (``q``) finds exactly the devices that one OR of its lookups finds,
in the same order, for any term: the UNION it is written as (so that PostgreSQL's trigram
indexes serve it) changes no result. Terms are taken from real-shaped clusters: parts of
UUIDs, device, node and pod names, profiles, claim names, namespaces, reservations' pod
names and uids, and text with LIKE's special characters."""

from __future__ import annotations

import pytest
from django.db.models import Q
from django.urls import reverse

from inventory import filters
from inventory.filters import DeviceFilter, device_uuid_q, filtered
from inventory.models import AllocationResult, Device, Reservation, ResourceClaim
from tests.conftest import CASES

pytestmark = pytest.mark.django_db
ORDER = ("cluster__name", "node_name", "driver", "name", "pk")  # the device list's order
SNAPSHOTS = ("constraint-unsatisfiable-parentuuid", "mig-and-full-gpu-both-advertised",
             "capacity-exhausted-all-gpus-allocated", "healthy-vks-real")  # fmt: skip


def reference(value: str) -> list[int]:
    """The search as one OR, subqueries under it (as it was before the UNION)."""
    value = value.strip()
    reserved = Reservation.objects.filter(Q(name__icontains=value) | Q(uid__iexact=value)).values("claim_id")
    claims = ResourceClaim.objects.filter(
        Q(name__icontains=value) | Q(namespace__icontains=value) | Q(pk__in=reserved)).values("pk")
    held = AllocationResult.objects.filter(claim_id__in=claims, device__isnull=False).values("device_id")
    found = Device.objects.filter(
        device_uuid_q(value) | Q(name__icontains=value) | Q(node_name__icontains=value)
        | Q(metrics_pod__icontains=value) | Q(profile__icontains=value) | Q(pk__in=held))
    return list(found.order_by(*ORDER).values_list("pk", flat=True))


def searched(value: str) -> list[int]:
    f = DeviceFilter({"q": value}, queryset=Device.objects.all())
    return list(filtered(f).order_by(*ORDER).values_list("pk", flat=True))


@pytest.fixture
def clusters(sync_snapshot):
    for case in SNAPSHOTS:
        sync_snapshot(CASES / case / "snapshot/cluster.yaml", name=case, hooks=False)
    # No snapshot carries DCGM's pod: a few devices get one, as a telemetry read stores it.
    for i, pk in enumerate(Device.objects.order_by("pk").values_list("pk", flat=True)[:6]):
        Device.objects.filter(pk=pk).update(metrics_pod=f"team-dcgm/trainer-{i}-7f9c")


def terms() -> list[str]:
    out = {"", "  ", "%", "_", "\\", "-", "MIG-", "gpu-0", "1g", "zzz-no-such-thing", "team-dcgm/trainer-1"}
    for d in Device.objects.order_by("pk")[:40]:
        out |= {d.uuid[4:12], d.uuid.lower(), d.parent_uuid[-9:].upper(), d.name, d.node_name[2:], d.profile}
    for c in ResourceClaim.objects.order_by("pk")[:15]:
        out |= {c.name[:12], c.name.upper(), c.namespace}
    for r in Reservation.objects.order_by("pk")[:10]:
        out |= {r.name, r.uid.upper(), r.uid[:8], f" {r.uid} "}  # a uid matches whole, any case
    return sorted(out)


@pytest.mark.parametrize("listed", [filters.HELD_LISTED, 0], ids=["held-listed", "held-as-subquery"])
def test_every_term_finds_the_same_devices_in_the_same_order(clusters, listed, monkeypatch):
    monkeypatch.setattr(filters, "HELD_LISTED", listed)
    assert Reservation.objects.exists() and AllocationResult.objects.exclude(device=None).exists()
    found = 0
    for term in terms():
        want = reference(term)
        assert searched(term) == want, term
        found += bool(want) and len(want) < Device.objects.count()
    assert found > 30  # most terms are selective, not all-or-nothing


def test_the_page_lists_them(client_in, clusters):
    claim = ResourceClaim.objects.filter(results__device__isnull=False).order_by("pk").first()
    for term in (claim.name, claim.namespace, "MIG-", "gpu"):
        want = reference(term)
        resp = client_in.get(reverse("inventory:devices"), {"q": term})
        assert resp.status_code == 200
        assert [d.pk for d in resp.context["devices"]] == want[:50], term
        assert resp.context["table"].paginator.count == len(want)
