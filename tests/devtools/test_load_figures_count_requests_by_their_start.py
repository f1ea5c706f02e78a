"""The load benchmark's figures (``devtools.load``): a request belongs to the window its start
falls in, the logins are never counted, any answer but 200 (or a failed connection) is an
error, and percentiles are by nearest rank."""

from __future__ import annotations

import math

from devtools.load import by_name, figures, parse_log, percentile


def test_percentile_is_the_nearest_rank():
    values = sorted(float(i) for i in range(1, 101))
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([7.0], 99) == 7.0
    assert math.isnan(percentile([], 50))


def test_requests_fall_in_the_window_of_their_start_and_logins_are_not_counted():
    log = [
        "99.5\t10\toverview\t200\t",  # before the window
        "100.0\t20\tlogin\t302\t",  # set-up, inside the window
        "100.0\t30\toverview\t200\t",
        "101.0\t5000\tnode_page\t200\t",  # ends after the window: still counted by its start
        "101.5\t40\tclaim_page\t302\tHTTP 302 /login/",
        "101.9\t50\tapi_nodes\t0\tConnectionResetError: reset",
        "102.0\t60\toverview\t200\t",  # the window's end is open
        "102.0\t60\toverv",  # a torn last line
    ]
    records = parse_log(log)
    assert len(records) == 7
    f = figures(records, 100.0, 102.0)
    assert f.requests == 4 and f.errors == 2
    assert f.per_second == 2.0
    assert f.max == 5000 and f.p50 == 40
    assert any("claim_page: 302" in s for s in f.error_samples)
    pages = by_name(records, 100.0, 102.0)
    assert "login" not in pages
    assert pages["overview"].requests == 1 and pages["node_page"].p99 == 5000


def test_a_200_with_a_failure_is_an_error():
    (record,) = parse_log(["1.0\t3\toverview\t200\tCatchResponseError: login form in the page"])
    assert not record.ok
    assert figures([record], 0, 2).errors == 1
