"""A v1alpha3 DeviceTaintRule may select devices by CEL; the taint applies where the selector
holds (inventory.queries.dra_states evaluates it with inventory.cel)."""

from __future__ import annotations

import pytest

from inventory import queries
from inventory.models import Cluster
from tests.dra import shapes

pytestmark = pytest.mark.django_db


def test_a_cel_selected_rule_taints_only_the_devices_it_selects(tmp_path):
    rule = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "gpu-2-only", "uid": "uid-r"},
            "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "selectors": [
                {"cel": {"expression": "device.attributes['gpu.nvidia.com'].type == 'gpu' && device.attributes['gpu.nvidia.com'].index == 2"}}]},
                "taint": {"key": "example.com/broken", "effect": "NoSchedule"}}}  # fmt: skip
    shapes.sync([*shapes.dynamic_mig_node("gpu-node-1"), rule], tmp_path / "s.json", "dra")
    st = queries.dra_states(Cluster.objects.get(name="dra"), ["gpu-node-1"])["gpu-node-1"]
    tainted = sorted(k[2] for k, s in st.devices.items() if s.taints)
    assert tainted == ["gpu-2"]
    assert st.allocatable_now_by_profile["gpu"] == 3
