"""A device with allowMultipleAllocations stays allocatable while its capacity is not consumed;
its sharers are every claim holding it (inventory.capacity)."""

from __future__ import annotations

import copy

import yaml

from inventory import capacity, records
from tests.dra import shapes

POOL = "dra-example-driver-cluster-worker"


def _slice(shared: bool = True):
    doc = yaml.safe_load((shapes.FIXTURES / "k8s" / "resourceslices" / "dra-example-driver-mock-gpus.v1.yaml").read_text())
    obj = copy.deepcopy(doc["items"][0] if doc.get("kind") == "List" else doc)
    for d in obj["spec"]["devices"]:
        d["attributes"]["type"] = {"string": "gpu"}  # counted as a whole GPU (the example driver publishes no type)
        if shared:
            d["allowMultipleAllocations"] = True  # what the driver publishes with gpuAllowMultipleAllocations=true
    return records.parse_object(obj)


def _claims(memory_each: str, n: int):
    [c0, c1] = [o for o in shapes.example("gpu-allow-multiple-allocations__gpu-allow-multiple-allocations.yaml") if o["kind"] == "ResourceClaim"]
    out = []
    for i in range(n):
        base = (c0, c1)[i % 2]
        out.append(records.parse_object(shapes.allocate(base, [shapes.result(
            "gpu", "gpu-0", POOL, driver="gpu.example.com", shareID=f"share-{i}", consumedCapacity={"memory": memory_each})],
            name=f"{base['metadata']['name']}-{i}")))
    return out


def test_a_gpu_shared_by_two_claims_has_room_and_names_both_sharers():
    s = _slice()
    claims = _claims("16Gi", 2)
    held = capacity.holdings(claims)
    gpu0 = s.devices[0]
    assert [c.name for c, _ in held[gpu0.key].results] == ["shared-gpu-pod0-0", "shared-gpu-pod1-1"]
    assert capacity.capacity_left(gpu0, held[gpu0.key]) == {"gpu.example.com/memory": (80 - 32) * 2**30}
    assert capacity.has_room(gpu0, held[gpu0.key])
    got = capacity.allocatable_now_by_profile(s.devices, [s], claims)
    assert got == {"gpu": len(s.devices)}  # gpu-0 still takes more sharers


def test_sharers_are_listed_by_claim_whatever_order_the_claims_come_in():
    """The claims reach ``holdings`` in read order, the stored model's bucket order or a
    database's unordered rows: the sharers of a device come out the same way each time."""
    s = _slice()
    claims = _claims("8Gi", 4)
    gpu0 = s.devices[0]
    want = sorted((c.namespace, c.name) for c in claims)
    for order in (claims, claims[::-1], claims[1::2] + claims[::2]):
        assert [(c.namespace, c.name) for c, _ in capacity.holdings(order)[gpu0.key].results] == want


def test_a_shared_gpu_whose_capacity_is_consumed_has_no_room():
    s = _slice()
    claims = _claims("40Gi", 2)
    gpu0 = s.devices[0]
    assert not capacity.has_room(gpu0, capacity.holdings(claims)[gpu0.key])
    assert capacity.allocatable_now_by_profile(s.devices, [s], claims) == {"gpu": len(s.devices) - 1}


def test_an_unshared_gpu_held_once_is_taken():
    s = _slice(shared=False)
    claims = _claims("16Gi", 1)
    assert capacity.allocatable_now_by_profile(s.devices, [s], claims) == {"gpu": len(s.devices) - 1}


def test_a_negative_consumption_gives_no_capacity_back():
    """A hand-written ``consumedCapacity`` of -40Gi beside a real 40Gi is not 0 consumed: the
    negative one counts as none, so the device is still full."""
    s = _slice()
    [full] = _claims("40Gi", 1)
    [minus] = _claims("-40Gi", 1)
    [full2] = _claims("40Gi", 2)[1:]
    gpu0 = s.devices[0]
    held = capacity.holdings([full, minus])
    assert capacity.capacity_left(gpu0, held[gpu0.key]) == {"gpu.example.com/memory": 40 * 2**30}
    held = capacity.holdings([full, minus, full2])
    assert capacity.capacity_left(gpu0, held[gpu0.key]) == {"gpu.example.com/memory": 0}
    assert not capacity.has_room(gpu0, held[gpu0.key])
