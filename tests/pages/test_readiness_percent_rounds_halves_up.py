"""Readiness scores round halves up the same way for every count (5/8 is 63 %, 3/8 is 38 %)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from migration.readiness import percent_half_up


@pytest.mark.parametrize(("part", "whole", "want"), [(5, 8, 63), (3, 8, 38), (1, 8, 13), (7, 8, 88), (1, 2, 50), (0, 8, 0), (8, 8, 100)])
def test_halves_round_up(part, whole, want):
    assert percent_half_up(part, whole) == want


def test_every_fraction_up_to_twenty_items_agrees_with_decimal_half_up():
    for whole in range(1, 21):
        for part in range(whole + 1):
            want = int((Decimal(100 * part) / Decimal(whole)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
            assert percent_half_up(part, whole) == want, (part, whole)


def test_no_items_is_zero_percent():
    assert percent_half_up(0, 0) == 0
