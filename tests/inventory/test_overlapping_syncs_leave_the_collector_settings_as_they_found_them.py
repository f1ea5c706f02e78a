"""A sync raises the cycle collector's thresholds while it runs (``sync.apply_read``); the
thresholds are process-wide, so syncs that overlap in one process (a Celery worker with a
thread pool, "Sync now" run eagerly by a threaded web server) must leave them as they were
before the first began, whatever order they end in."""

from __future__ import annotations

import gc
import threading

import pytest
from django.db import connection

from inventory.models import Cluster, SourceKind
from inventory.readitem import ReadItem
from inventory.snapshot import load_path
from inventory.sources import ReadResult
from inventory.sync import apply_read
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_sync_that_began_second_and_ended_last_restores_the_original_thresholds():
    first = Cluster.objects.create(name="first", source_kind=SourceKind.SNAPSHOT)
    second = Cluster.objects.create(name="second", source_kind=SourceKind.SNAPSHOT)
    before = gc.get_threshold()
    second_reading, first_done = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def second_stream():
        second_reading.set()  # the second sync is under way: let the first one end
        assert first_done.wait(30)
        yield from ()

    def run_second():
        try:
            outcome["second"] = apply_read(second, ReadResult(stream=second_stream(), complete_kinds=set()))
        except BaseException as exc:  # reported by the main thread
            outcome["second"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run_second)

    def first_stream():
        thread.start()
        assert second_reading.wait(30)
        for obj in load_path(H100_SLICES).objects:
            yield ReadItem.of(obj)

    try:
        counts, errors = apply_read(first, ReadResult(stream=first_stream(), complete_kinds={"ResourceSlice"}))
    finally:
        first_done.set()
        thread.join(30)
    after, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.set_threshold(*before)  # whatever happened, later tests run with the usual settings
    assert not errors and counts["ResourceSlice"]["created"] == len(load_path(H100_SLICES).objects)
    assert outcome["second"] == ({}, [])
    assert after == before
    assert frozen == 0
