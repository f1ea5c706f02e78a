"""A finding's ResourceSlices, DeviceClass and ResourceClaimTemplate link to their pages when
stored, and read "not stored" when not (a deleted template, a missing DeviceClass): the
on-call engineer goes from a no_matching_device finding straight to the slices it names."""

from __future__ import annotations

import pytest
from django.urls import reverse
from store_helpers import CASES, cluster_name

from claims.links import attach_object_links
from claims.models import Finding
from inventory.models import DeviceClass, KubeObject, ResourceSlice

pytestmark = pytest.mark.django_db
CASE_NAMES = ["no-matching-device-memory-selector", "claim-template-deleted-before-claim-created",
              "device-class-missing-gpu-side-disabled"]
KINDS = {"ResourceSlice", "DeviceClass", "ResourceClaimTemplate"}


def _stored(cluster, kind: str, namespace: str, name: str) -> bool:
    if kind == "ResourceSlice":
        return ResourceSlice.objects.filter(cluster=cluster, name=name).exists()
    if kind == "DeviceClass":
        return DeviceClass.objects.filter(cluster=cluster, name=name).exists()
    return KubeObject.objects.filter(cluster=cluster, kind=kind, namespace=namespace, name=name).exists()


def test_slices_classes_and_templates_link_when_stored_and_say_not_stored_when_not(client_in, sync_snapshot):
    for name in CASE_NAMES:
        sync_snapshot(CASES / name / "snapshot", name=cluster_name(CASES / name))
    findings = list(Finding.objects.open().select_related("cluster"))
    attach_object_links(findings)
    seen = {True: set(), False: set()}
    for f in findings:
        for link in f.links:
            if link.kind not in KINDS:
                continue
            stored = _stored(f.cluster, link.kind, link.namespace, link.name)
            seen[stored].add(link.kind)
            assert link.stored is stored, (f.category, link)
            assert bool(link.url) is stored, (f.category, link)
            if stored:
                assert client_in.get(link.url).status_code == 200, link.url
    # The cases name stored slices and classes, and a template and a class that are gone.
    assert seen[True] >= {"ResourceSlice", "DeviceClass"}
    assert seen[False] >= {"ResourceClaimTemplate", "DeviceClass"}

    body = client_in.get(reverse("claims:stuck")).content.decode()
    slice_url = next(link.url for f in findings for link in f.links if link.kind == "ResourceSlice" and link.url)
    assert f'href="{slice_url}"' in body


def test_a_stored_object_whose_name_no_object_can_have_is_named_not_linked(sync_snapshot):
    """A row made from cluster text may hold ``..``: a link to it would lead elsewhere."""
    sync_snapshot(CASES / CASE_NAMES[0] / "snapshot", name="dots")
    f = Finding.objects.open().select_related("cluster").filter(cluster__name="dots").first()
    cluster = f.cluster
    ResourceSlice.objects.create(cluster=cluster, name="..", uid="dots-slice", driver="gpu.nvidia.com", raw={})
    KubeObject.objects.create(cluster=cluster, kind="ResourceClaimTemplate", namespace="..", name="t", uid="dots-t",
                              raw={})
    good = ResourceSlice.objects.filter(cluster=cluster).exclude(name="..").first()
    f.involved = [{"kind": "ResourceSlice", "name": ".."},
                  {"kind": "ResourceClaimTemplate", "namespace": "..", "name": "t"},
                  {"kind": "ResourceSlice", "name": good.name}]
    attach_object_links([f])
    assert [(link.url != "", link.missing) for link in f.links] == [(False, True), (False, True), (True, False)]
