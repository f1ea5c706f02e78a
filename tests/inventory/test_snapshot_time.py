"""A snapshot's clock (its newest timestamp) comes from the time fields the API server, a
kubelet or a controller sets, and from nothing a user or a driver writes freely."""

from __future__ import annotations

import pytest

from inventory.snapshot import load_path, newest_timestamp
from tests.conftest import CASES

SNAPSHOTS = sorted(CASES.glob("*/snapshot"))


def test_most_case_snapshots_carry_a_timestamp():
    # Guards the comparison above against cases with nothing to find.
    assert sum(newest_timestamp(load_path(p).objects) is not None for p in SNAPSHOTS) >= len(SNAPSHOTS) - 3


def test_strings_that_only_look_like_timestamps_in_part_are_not_taken():
    obj = {"lastTimestamp": "note 2099-01-01T00:00:00Z", "eventTime": "2026-01-02T03:04:05Z", "firstTimestamp": "2098-01-01T00:00:00"}
    assert newest_timestamp([obj]) == "2026-01-02T03:04:05Z"


FREE_TEXT = {
    "kind": "ResourceClaim",
    "metadata": {"creationTimestamp": "2026-01-02T03:04:05Z",
                 "annotations": {"example.com/expires": "9999-12-31T23:59:59Z", "startTime": "9999-01-01T00:00:00Z"},
                 "labels": {"lastUpdateTime": "2999-01-01T00:00:00Z"}},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
                         "config": [{"opaque": {"driver": "gpu.nvidia.com",
                                                "parameters": {"lastUpdateTime": "9998-12-31T23:59:59Z"}}}]}},
    "status": {"allocation": {"allocationTimestamp": "2026-01-02T03:30:00Z"},
               "devices": [{"driver": "gpu.nvidia.com", "data": {"startedAt": "2997-01-01T00:00:00Z"},
                            "conditions": [{"type": "Ready", "lastTransitionTime": "2026-01-02T04:00:00Z"}]}]},
}  # fmt: skip


def test_a_time_written_in_annotations_labels_or_opaque_parameters_does_not_move_the_clock():
    """Free text a user or a driver writes is not a moment of the cluster's, even under a key
    named like a time field."""
    assert newest_timestamp([FREE_TEXT]) == "2026-01-02T04:00:00Z"


@pytest.mark.parametrize(("obj", "newest"), [
    ({"kind": "Event", "metadata": {}, "deprecatedLastTimestamp": "2030-01-01T00:00:00Z"}, "2030-01-01T00:00:00Z"),
    ({"kind": "Event", "metadata": {}, "series": {"lastObservedTime": "2030-01-02T00:00:00.123456Z"}}, "2030-01-02T00:00:00.123456Z"),
    ({"kind": "Pod", "metadata": {}, "status": {"containerStatuses": [{"state": {"terminated": {"finishedAt": "2030-01-03T00:00:00Z"}}}]}},
     "2030-01-03T00:00:00Z"),
    ({"kind": "ResourceSlice", "metadata": {}, "spec": {"devices": [{"name": "gpu-0", "attributes": {"t": {"string": "2999-01-01T00:00:00Z"}},
                                                                      "taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "2030-01-04T00:00:00Z"}]}]}},
     "2030-01-04T00:00:00Z"),
    ({"kind": "Node", "metadata": {}, "status": {"conditions": [{"lastHeartbeatTime": "2030-01-05T00:00:00Z"}]}}, "2030-01-05T00:00:00Z"),
])  # fmt: skip
def test_the_time_fields_of_each_kind_set_the_clock(obj, newest):
    assert newest_timestamp([obj]) == newest
