"""A malformed line in a ``.prom`` scrape (truncated, hand-edited, binary junk) costs that line:
the other samples are parsed and stored, the sync stays ``ok`` (its objects and analyses stand),
and the run counts the skipped lines. Property: no text makes the scrape parser raise."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inventory.dcgm import parse_exposition, parse_scrape
from inventory.models import Device
from tests.telemetry.pagedata import h100_scrape_folder
from tests.telemetry.realdata import H100_SCRAPE

LINES = H100_SCRAPE.read_text().splitlines()
SAMPLE_AT = [i for i, line in enumerate(LINES) if line.startswith("DCGM_")]


def _damaged(at: int, junk: str) -> str:
    lines = list(LINES)
    lines[at] = junk
    return "\n".join(lines) + "\n"


def test_a_truncated_line_is_skipped_and_the_rest_of_the_file_parsed():
    at = SAMPLE_AT[3]
    text = _damaged(at, LINES[at][: len(LINES[at]) // 2])
    scrape = parse_scrape(text)
    whole = parse_exposition(H100_SCRAPE.read_text())
    assert scrape.skipped == 1
    assert scrape.problems[0].startswith(f"line {at + 1}: malformed sample ")
    assert len(scrape.samples) == len(whole) - 1
    assert all(s in whole for s in scrape.samples)


def test_the_strict_parser_still_names_the_line():
    at = SAMPLE_AT[0]
    with pytest.raises(ValueError, match=rf"^line {at + 1}: "):
        parse_exposition(_damaged(at, 'DCGM_FI_DEV_GPU_UTIL{gpu="0" 5'))


@pytest.mark.django_db
def test_a_sync_with_a_bad_scrape_line_is_ok_stores_the_other_values_and_counts_the_line(sync_snapshot, tmp_path):
    folder = h100_scrape_folder(tmp_path / "snap")
    at = SAMPLE_AT[5]
    (folder / H100_SCRAPE.name).write_text(_damaged(at, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-\x01"))
    run = sync_snapshot(folder, name="bad-line")
    assert run.status == "ok", (run.error, run.errors)
    assert run.counts["skipped"]["malformed scrape lines"] == 1
    want = len({s.uuid for s in parse_scrape((folder / H100_SCRAPE.name).read_text()).samples})
    assert Device.objects.filter(cluster__name="bad-line").exclude(metrics={}).count() == want > 0


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from([*LINES[:12], "{", "}", '"', "\\", "# TYPE x gauge", "DCGM_FI_DEV_GPU_UTIL{", "NaN", "+Inf",
                              "DCGM_FI_DEV_GPU_UTIL 1e999", 'DCGM_FI_DEV_GPU_UTIL{UUID="a\\"b"} 1 2 3', "\x00", "\n"]),
             max_size=40).map("\n".join),
))
def test_no_text_makes_the_scrape_parser_raise(text):
    scrape = parse_scrape(text)
    assert scrape.skipped <= len(text.splitlines())
    assert len(scrape.problems) <= min(scrape.skipped, 5)


@pytest.mark.parametrize("stamp", ["-9999999999999999", "9999999999999999", "NaN"])
@pytest.mark.django_db
def test_a_sample_stamped_at_no_time_is_one_malformed_line_not_the_telemetry(sync_snapshot, tmp_path, stamp):
    folder = h100_scrape_folder(tmp_path / "snap")
    at = SAMPLE_AT[5]
    (folder / H100_SCRAPE.name).write_text(_damaged(at, f"{LINES[at]} {stamp}"))  # the file's lines carry no stamp
    scrape = parse_scrape((folder / H100_SCRAPE.name).read_text())
    assert scrape.skipped == 1 and "not a time" in scrape.problems[0]
    run = sync_snapshot(folder, name="bad-stamp")
    assert run.status == "ok", (run.error, run.errors)
    assert run.counts["skipped"]["malformed scrape lines"] == 1
    assert Device.objects.filter(cluster__name="bad-stamp").exclude(metrics={}).count() > 0
