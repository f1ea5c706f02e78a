"""A request whose CEL selector fails at run time on the real H100s is ``selector_invalid``
only (the scheduler aborts the allocation on the error; "no device matches" would send the
engineer after the wrong fix), and a selector nested a hundred deep in any construct never
crashes the diagnosis: it is ``selector_invalid`` or evaluated, with no failed rule."""

from __future__ import annotations

import pytest
from dx import base_cluster, categories, pending, request, run

DRIVER = "device.driver == 'gpu.nvidia.com'"
DEEP = {
    "parentheses": "(" * 100 + DRIVER + ")" * 100,
    "calls": "size(" * 100 + "'x'" + ")" * 100 + " == 1",
    "lists": "size(" + "[" * 100 + "]" * 100 + ") == 1",
    "maps": "{'a': " * 100 + "1" + "}" * 100 + " != {}",
    "conditionals": "true ? " * 100 + "true" + " : false" * 100,
    "conjunctions": " && ".join(["(" + DRIVER] * 100) + ")" * 100,
    "negations": "!" * 100 + "true",
    "members": "device.driver" + ".size()" * 100 + " == 1",
}


def test_a_missing_attribute_read_unguarded_is_selector_invalid_not_no_matching_device():
    f = run(base_cluster() + pending(request("gpu", "gpu.nvidia.com", 1,
                                             "device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'")))
    assert categories(f) == ["selector_invalid"]
    assert f[0].severity == "critical" and "noSuchAttribute" in f[0].evidence["runtime_errors"][0]


@pytest.mark.parametrize("construct", sorted(DEEP))
def test_a_hundred_deep_selector_never_crashes_the_diagnosis(construct):
    f = run(base_cluster() + pending(request("gpu", "gpu.nvidia.com", 1, DEEP[construct])))
    assert f.failures == ()
    assert len(categories(f)) == 1 and categories(f)[0] in ("selector_invalid", "pending_unexplained")
