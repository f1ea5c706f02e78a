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
    text = json.dumps({"a": "note 2099-01-01T00:00:00Z", "b": "2026-01-02T03:04:05Z", "c": "2098-01-01T00:00:00"})
    assert newest_timestamp_in_text(text) == "2026-01-02T03:04:05Z"
