"""mutate_claims changes exactly the fraction of claims asked for, and nothing else."""

from __future__ import annotations

import copy

import pytest

from devtools.fleet import generate_fleet, mutate_claims
from inventory import parse
from tests.devtools.test_fleet_consistency_helpers import allocation_problems


@pytest.fixture(scope="module")
def fleet():
    return generate_fleet(50, seed=3)


def _changed(a, b):
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.1, 0.5, 1.0])
def test_exactly_the_fraction_of_claims_changes(fleet, fraction):
    before = copy.deepcopy(fleet)
    after = mutate_claims(fleet, fraction, seed=1)
    assert fleet == before, "the input is not modified"
    changed = _changed(fleet, after)
    n_claims = sum(1 for o in fleet if o["kind"] == "ResourceClaim")
    assert len(changed) == round(fraction * n_claims)
    for old, new in changed:
        assert new["kind"] == "ResourceClaim"
        assert int(new["metadata"]["resourceVersion"]) > int(old["metadata"]["resourceVersion"])


def test_allocated_claims_become_reserved_for_their_existing_pod(fleet):
    after = mutate_claims(fleet, 1.0, seed=1)
    before = {o["metadata"]["uid"]: parse.parse_resource_claim(o) for o in fleet if o["kind"] == "ResourceClaim"}
    now = {o["metadata"]["uid"]: parse.parse_resource_claim(o) for o in after if o["kind"] == "ResourceClaim"}
    flipped = [u for u, c in before.items() if c.state == "allocated" and now[u].state == "in_use"]
    assert flipped
    assert allocation_problems(after) == []


def test_new_resource_versions_are_unique(fleet):
    after = mutate_claims(fleet, 0.5, seed=9)
    rvs = [o["metadata"]["resourceVersion"] for o in after]
    assert len(set(rvs)) == len(rvs)


def test_fraction_outside_zero_to_one_is_refused(fleet):
    with pytest.raises(ValueError):
        mutate_claims(fleet, 1.5)
