"""generate_fleet: same seed and moment, same objects; identities stable and unique."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from devtools.fleet import FLEET_EPOCH, generate_fleet
from inventory.snapshot import newest_timestamp

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def test_same_seed_and_now_give_identical_objects():
    assert json.dumps(generate_fleet(30, seed=4, now=NOW)) == json.dumps(generate_fleet(30, seed=4, now=NOW))


def test_another_seed_gives_another_fleet():
    assert generate_fleet(30, seed=4, now=NOW) != generate_fleet(30, seed=5, now=NOW)


def test_default_moment_is_the_fixed_epoch():
    assert generate_fleet(3) == generate_fleet(3, now=FLEET_EPOCH)


def test_uids_are_unique_uuids_and_resource_versions_strings():
    objs = generate_fleet(40, seed=2, now=NOW)
    uids = [o["metadata"]["uid"] for o in objs]
    assert len(set(uids)) == len(uids)
    for u in uids:
        uuid.UUID(u)
    rvs = [o["metadata"]["resourceVersion"] for o in objs]
    assert all(isinstance(rv, str) and rv.isdigit() for rv in rvs)
    assert len(set(rvs)) == len(rvs)


def test_no_timestamp_is_later_than_now_and_the_newest_is_recent():
    objs = generate_fleet(40, seed=2, now=NOW)
    newest = newest_timestamp(objs)
    assert newest is not None
    newest_dt = datetime.fromisoformat(newest.replace("Z", "+00:00"))
    assert NOW - timedelta(minutes=2) <= newest_dt <= NOW


def test_a_fleet_needs_a_node():
    with pytest.raises(ValueError):
        generate_fleet(0)
