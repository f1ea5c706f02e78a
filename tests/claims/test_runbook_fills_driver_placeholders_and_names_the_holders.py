"""A runbook opened for a finding fills the driver's placeholders (``<kubelet-plugin-pod>``,
``<driver-ns>``, ``<claim-uid>``) from the finding, and names the claims holding the devices
of the ResourceSlices the finding involves (who holds the GPUs a waiting claim needs)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from store_helpers import CASES

from claims.models import Finding
from claims.runbooks import placeholder_values
from inventory.models import AllocationResult

pytestmark = pytest.mark.django_db
CAPACITY = CASES / "capacity-exhausted-all-gpus-allocated/snapshot"


def test_the_kubelet_plugin_pod_and_its_namespace_fill_the_driver_placeholders():
    involved = [
        {"kind": "ResourceSlice", "namespace": None, "name": "gpu-rtx-03-gpu.nvidia.com-h8twj"},
        {"kind": "Node", "namespace": None, "name": "gpu-rtx-03"},
        {"kind": "Pod", "namespace": "gpu-operator", "name": "nvidia-dra-driver-gpu-kubelet-plugin-8l2fw"},
    ]
    values = placeholder_values(involved, "gpu-rtx-03", claim_uid="9470a000-0000-4000-8000-000000020005")
    assert values["kubelet-plugin-pod"] == "nvidia-dra-driver-gpu-kubelet-plugin-8l2fw"
    assert values["driver-ns"] == "gpu-operator"
    assert values["claim-uid"] == "9470a000-0000-4000-8000-000000020005"


def test_a_workload_pod_is_not_taken_for_the_plugin():
    values = placeholder_values([{"kind": "Pod", "namespace": "team-a", "name": "llm-0"}])
    assert "kubelet-plugin-pod" not in values and "driver-ns" not in values


def test_capacity_exhausted_runbook_names_the_claims_holding_the_devices(client_in, sync_snapshot):
    sync_snapshot(CAPACITY, name="capacity")
    f = Finding.objects.open().get(category="capacity_exhausted")
    slices = {o["name"] for o in f.involved if o["kind"] == "ResourceSlice"}
    holders = {f"{r.claim.namespace}/{r.claim.name}" for r in AllocationResult.objects.filter(
        device__slice__name__in=slices).select_related("claim")}
    assert holders
    resp = client_in.get(reverse("claims:runbook", args=[f.category]), {"finding": f.pk})
    shown = {f"{h['claim'].namespace}/{h['claim'].name}" for d in resp.context["held"] for h in d.holders}
    assert shown == holders
    body = resp.content.decode()
    assert "Who holds the devices" in body and all(h in body for h in holders)
