"""PromQL selectors escape label values and accept only valid names."""

from __future__ import annotations

import pytest

from inventory.prometheus import escape_label_value, fields_selector, label_matchers


def test_label_values_are_escaped_as_promql_strings():
    assert escape_label_value('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_matchers_render_in_order_and_reject_invalid_label_names():
    assert label_matchers({"Hostname": "gpu-node-1", "gpu": "0"}) == '{Hostname="gpu-node-1",gpu="0"}'
    assert label_matchers(None) == ""
    with pytest.raises(ValueError):
        label_matchers({'UUID="x"} or {a': "b"})


def test_fields_selector_joins_dcgm_field_names_and_rejects_anything_else():
    assert fields_selector(["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"], {"gpu": "0"}) == (
        '{__name__=~"DCGM_FI_DEV_GPU_UTIL|DCGM_FI_DEV_FB_USED",gpu="0"}'
    )
    for bad in (["DCGM_FI_DEV_GPU_UTIL|up"], ["DCGM.*"], []):
        with pytest.raises(ValueError):
            fields_selector(bad)
