"""Under dynamic MIG every placement is published; what can be allocated is what the counters
left by the allocated devices allow (``inventory.capacity.allocatable_now_by_profile``)."""

from __future__ import annotations

from inventory import capacity, records
from tests.dra import shapes

NODE = "gpu-node-1"


def _parsed(objs):
    return [records.parse_object(o) for o in objs]


def _node(claims=()):
    slices = _parsed(shapes.dynamic_mig_node(NODE))
    devices = [d for s in slices for d in s.devices]
    return devices, slices, _parsed(claims)


def _claim(name, device):
    return shapes.allocate({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
                            "spec": {"devices": {"requests": [{"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}},
                           [shapes.result("mig", device, NODE)], node=NODE)


def test_an_idle_dynamic_mig_node_counts_each_gpu_once_and_one_media_placement_per_gpu():
    devices, slices, claims = _node()
    got = capacity.allocatable_now_by_profile(devices, slices, claims)
    # 4 GPUs: 7 one-slice placements each, one +me each (a GPU has one OFA engine), 4 of the
    # 2-slice 1g.35gb, 3 of 2g.35gb, 2 of 3g.71gb, 1 of 4g/7g, and the 4 whole GPUs.
    assert got == {"1g.18gb": 28, "1g.18gb+me": 4, "1g.35gb": 16, "2g.35gb": 12, "3g.71gb": 8,
                   "4g.71gb": 4, "7g.141gb": 4, "gpu": 4}
    published = sum(1 for d in devices if d.type == "mig")
    assert published == 100  # possible placements, not MIG instances


def test_allocated_placements_take_their_counters_and_a_gpu_whose_counters_are_taken_is_not_free():
    claims = [
        _claim("a", "gpu-0-mig-3g71gb-9-0"),  # slices 0-3 of GPU 0
        _claim("b", "gpu-1"),  # the whole of GPU 1
        _claim("c", "gpu-2-mig-1g18gb-me-20-0"),  # slice 0 and the OFA engine of GPU 2
    ]
    devices, slices, parsed = _node(claims)
    got = capacity.allocatable_now_by_profile(devices, slices, parsed)
    # GPU 0: 1g at 4,5,6; GPU 1: nothing; GPU 2: 1g at 1..6; GPU 3: 7.
    assert got["1g.18gb"] == 3 + 0 + 6 + 7
    # +me needs the OFA engine: free on GPU 0 (3g takes none) and GPU 3 only.
    assert got["1g.18gb+me"] == 2
    # 3g at 4 on GPU 0 and GPU 2, both placements on GPU 3.
    assert got["3g.71gb"] == 1 + 1 + 2
    assert got["2g.35gb"] == 1 + 2 + 3
    assert got["1g.35gb"] == 2 + 3 + 4
    assert got["4g.71gb"] == 1 and got["7g.141gb"] == 1
    assert got["gpu"] == 1  # only GPU 3 is whole and untouched


def test_a_noexecute_taint_from_a_device_taint_rule_keeps_a_gpu_out():
    devices, slices, claims = _node()
    rule = records.parse_object({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain-gpu-3"},
        "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-3"},
                 "taint": {"key": "example.com/maintenance", "effect": "NoExecute"}},
    })
    taints = {d.key: capacity.device_taints(d, [rule]) for d in devices}
    got = capacity.allocatable_now_by_profile(devices, slices, claims, taints)
    assert got["gpu"] == 3
    assert got["1g.18gb"] == 28  # the rule names the whole-GPU device only


def test_an_admin_access_claim_takes_nothing():
    admin = _claim("monitor", "gpu-0")
    admin["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    devices, slices, claims = _node([admin])
    assert capacity.allocatable_now_by_profile(devices, slices, claims)["gpu"] == 4


def test_each_gpu_says_what_still_fits_it():
    claims = [_claim("a", "gpu-0-mig-3g71gb-9-0")]
    slices = _parsed(shapes.dynamic_mig_node(NODE))
    st = capacity.node_states(slices, _parsed(claims))[NODE]
    gpu0 = next(s.device.uuid for s in st.devices.values() if s.device.name == "gpu-0")
    gpu3 = next(s.device.uuid for s in st.devices.values() if s.device.name == "gpu-3")
    assert st.gpu_allocatable(gpu0)["1g.18gb"] == 3 and st.gpu_allocatable(gpu0)["gpu"] == 0
    assert st.gpu_allocatable(gpu3) == {"1g.18gb": 7, "1g.18gb+me": 1, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2,
                                        "4g.71gb": 1, "7g.141gb": 1, "gpu": 1}
