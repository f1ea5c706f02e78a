"""The header search and the list filters find a namespace, a MIG profile and a pod uid, and
text filters match a part of the value."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Device, Pod, ResourceClaim
from inventory.search import search
from tests.conftest import CASES

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


@pytest.fixture
def mig(sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig", hooks=False)


def test_a_namespace_finds_its_claims_and_pods(mig):
    result = {g.kind: g for g in search("team-b").groups}
    claims = ResourceClaim.objects.filter(namespace="team-b")
    assert result["claim"].count == claims.count() > 0
    assert result["pod"].count == Pod.objects.filter(namespace="team-b").count() > 0


def test_a_mig_profile_finds_its_instances(mig):
    profile = Device.objects.filter(type="mig").exclude(profile="").values_list("profile", flat=True).first()
    got = {g.kind: g for g in search(profile).groups}["device"]
    assert got.count == Device.objects.filter(profile__icontains=profile).count() > 1


def test_a_pod_uid_finds_the_pod(mig):
    pod = Pod.objects.order_by("pk").first()
    result = search(pod.uid)
    assert result.single() is not None and result.single().pk == pod.pk


def test_partial_profile_and_namespace_filters(client_in, mig):
    profile = Device.objects.filter(type="mig").exclude(profile="").values_list("profile", flat=True).first()
    part = profile.split(".")[0]  # "1g" of "1g.10gb"
    rows = client_in.get(reverse("inventory:devices"), {"profile": part}).context["devices"]
    assert rows and all(part in d.profile for d in rows)
    claims = client_in.get(reverse("claims:list"), {"namespace": "team"}).context["claims"]
    assert {c.namespace for c in claims} == set(ResourceClaim.objects.values_list("namespace", flat=True))


def test_the_device_list_sorts_on_any_column(client_in, mig):
    resp = client_in.get(reverse("inventory:devices"), {"sort": "-memory_bytes"})
    mem = [d.memory_bytes or 0 for d in resp.context["devices"]]
    assert mem == sorted(mem, reverse=True) and len(set(mem)) > 1
    resp = client_in.get(reverse("inventory:devices"), {"sort": "profile"})
    profiles = [d.profile for d in resp.context["devices"]]
    assert profiles == sorted(profiles)
    assert 'class="profile"' in resp.content.decode()  # 1g.10gb never breaks inside
