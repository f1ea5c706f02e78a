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
    ({"kind": "Event", "metadata": {}, "deprecatedLastTimestamp": "2025-01-01T00:00:00Z"}, "2025-01-01T00:00:00Z"),
    ({"kind": "Event", "metadata": {}, "series": {"lastObservedTime": "2025-01-02T00:00:00.123456Z"}}, "2025-01-02T00:00:00.123456Z"),
    ({"kind": "Pod", "metadata": {}, "status": {"containerStatuses": [{"state": {"terminated": {"finishedAt": "2025-01-03T00:00:00Z"}}}]}},
     "2025-01-03T00:00:00Z"),
    ({"kind": "ResourceSlice", "metadata": {}, "spec": {"devices": [{"name": "gpu-0", "attributes": {"t": {"string": "2999-01-01T00:00:00Z"}},
                                                                      "taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "2025-01-04T00:00:00Z"}]}]}},
     "2025-01-04T00:00:00Z"),
    ({"kind": "Node", "metadata": {}, "status": {"conditions": [{"lastHeartbeatTime": "2025-01-05T00:00:00Z"}]}}, "2025-01-05T00:00:00Z"),
])  # fmt: skip
def test_the_time_fields_of_each_kind_set_the_clock(obj, newest):
    assert newest_timestamp([obj]) == newest


def test_a_time_after_the_moment_of_reading_does_not_move_the_clock():
    """A creationTimestamp in 2099 (hand-edited, or a node whose clock ran off) is not when the
    snapshot was taken: the clock stays at the latest time that can be one."""
    claim = {**FREE_TEXT, "metadata": {**FREE_TEXT["metadata"], "creationTimestamp": "2099-12-04T10:00:00Z"}}
    assert newest_timestamp([claim]) == "2026-01-02T04:00:00Z"


@pytest.mark.django_db
def test_one_future_timestamp_leaves_the_diagnosis_and_chargeback_clock_of_the_case(tmp_path, sync_snapshot):
    from claims.chargeback_data import as_of
    from claims.models import Finding
    from inventory.models import Cluster

    case = CASES / "claims-stuck-deleting-delete-protection"
    sync_snapshot(case / "snapshot", "clean")
    base = load_path(case / "snapshot").objects
    future = [dict(o) for o in base]
    for o in future:
        if o.get("kind") == "ResourceClaim":
            o["metadata"] = {**o["metadata"], "creationTimestamp": "2099-12-04T10:00:00Z"}
            break
    else:
        raise AssertionError("the case holds no claim")
    import json

    (tmp_path / "objects.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": future}))
    sync_snapshot(tmp_path, "skewed")
    assert as_of(Cluster.objects.get(name="skewed")) == as_of(Cluster.objects.get(name="clean"))
    seen = {c: sorted(Finding.objects.filter(cluster__name=c, resolved_at__isnull=True).values_list("category", "summary"))
            for c in ("clean", "skewed")}
    assert seen["clean"] and seen["skewed"] == seen["clean"]
