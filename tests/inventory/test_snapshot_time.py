"""A snapshot's clock (its newest timestamp) is the same read from the objects' text as from
the decoded objects: the stored-cluster diagnosis scans the text, the CLI the objects."""

from __future__ import annotations

import json

import pytest

from inventory.snapshot import load_path, newest_timestamp, newest_timestamp_in_text
from tests.conftest import CASES

SNAPSHOTS = sorted(CASES.glob("*/snapshot"))


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.parent.name)
def test_the_text_scan_finds_the_newest_timestamp_the_object_walk_finds(path):
    objects = load_path(path).objects
    newest = None
    for obj in objects:
        # Both the compact form the sync stores and PostgreSQL's jsonb text (", " / ": ").
        for text in (json.dumps(obj, separators=(",", ":")), json.dumps(obj)):
            newest = newest_timestamp_in_text(text, newest)
    walked = newest_timestamp(objects)
    assert (newest or "")[:19] == (walked or "")[:19]


def test_most_case_snapshots_carry_a_timestamp():
    # Guards the comparison above against cases with nothing to find.
    assert sum(newest_timestamp(load_path(p).objects) is not None for p in SNAPSHOTS) >= len(SNAPSHOTS) - 3


def test_strings_that_only_look_like_timestamps_in_part_are_not_taken():
    obj = {"lastTimestamp": "note 2099-01-01T00:00:00Z", "eventTime": "2026-01-02T03:04:05Z", "firstTimestamp": "2098-01-01T00:00:00"}
    assert newest_timestamp_in_text(json.dumps(obj)) == "2026-01-02T03:04:05Z"
    assert newest_timestamp([obj]) == "2026-01-02T03:04:05Z"


def test_a_time_written_in_an_annotation_label_or_attribute_does_not_move_the_clock():
    """Free text a user writes is not a moment of the cluster's: only time fields count."""
    obj = {
        "kind": "Pod",
        "metadata": {"creationTimestamp": "2026-01-02T03:04:05Z",
                     "annotations": {"example.com/expires": "9999-12-31T23:59:59Z"},
                     "labels": {"when": "2999-01-01T00:00:00Z"}},
        "spec": {"devices": [{"attributes": {"built": {"string": "2998-01-01T00:00:00Z"}}}],
                 "args": ["2997-01-01T00:00:00Z"]},
        "status": {"conditions": [{"type": "Ready", "lastTransitionTime": "2026-01-02T04:00:00Z"}]},
    }  # fmt: skip
    assert newest_timestamp([obj]) == "2026-01-02T04:00:00Z"
    for text in (json.dumps(obj), json.dumps(obj, separators=(",", ":"))):
        assert newest_timestamp_in_text(text) == "2026-01-02T04:00:00Z"
