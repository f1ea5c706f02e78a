"""The committed OpenMetrics fixtures are exactly what build_fixtures.py makes from the
copied real files, and they hold every real sample."""

from __future__ import annotations

import csv

from tests.fixtures.prometheus import build_fixtures as bf
from tests.telemetry.realdata import H200_CSV


def test_the_committed_files_match_a_fresh_build():
    assert (bf.HERE / "h100-aicr-scrape.om").read_text() == bf.render(bf.h100_families())
    assert (bf.HERE / "h200-nvml-load.om").read_text() == bf.render(bf.h200_families())


def test_the_h200_fixture_has_one_sample_per_csv_row_and_mapped_column():
    rows = list(csv.DictReader(H200_CSV.open()))
    fams = bf.h200_families()
    assert set(fams) == set(bf.H200_COLUMNS.values())
    assert all(len(v) == len(rows) for v in fams.values())
    labels = fams["DCGM_FI_DEV_GPU_UTIL"][0][0]
    assert labels["UUID"] == rows[0]["uuid"] and labels["modelName"] == rows[0]["name"]
