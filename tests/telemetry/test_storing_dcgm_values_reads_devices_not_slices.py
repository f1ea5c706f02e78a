"""Storing a scrape's values reads the devices' join fields only: never the slices (each
carries the node's whole raw JSON), and in a number of queries that does not grow with the
number of devices."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.dcgm import parse_exposition
from inventory.models import Cluster, Device
from inventory.telemetry import store_samples
from tests.telemetry.realdata import H100_SCRAPE, H100_SLICES

pytestmark = pytest.mark.django_db


def test_the_h100_scrape_is_stored_without_reading_a_slice(sync_snapshot):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    cluster = Cluster.objects.get(name="aicr")
    samples = parse_exposition(H100_SCRAPE.read_text())
    with CaptureQueriesContext(connection) as ctx:
        got = store_samples(cluster, samples)
    assert got["matched_devices"] == len({s.uuid for s in samples}) > 0
    assert not [q["sql"] for q in ctx.captured_queries if "resourceslice" in q["sql"].lower()]
    assert len(ctx.captured_queries) <= 12, [q["sql"][:120] for q in ctx.captured_queries]
    stored = Device.objects.exclude(metrics={}).get(uuid=samples[0].uuid)
    assert stored.metrics[samples[0].field] == next(s.value for s in samples if s.uuid == samples[0].uuid and s.field == samples[0].field)
    # The same values (the scrape has timestamps) again rewrite no device.
    with CaptureQueriesContext(connection) as again:
        store_samples(cluster, samples)
    assert not [q for q in again.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE") and "inventory_device" in q["sql"]]
