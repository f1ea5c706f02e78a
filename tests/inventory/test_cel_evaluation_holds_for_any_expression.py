"""Property: any text as a selector, on a real device, gives a match, a runtime error or a
``SelectorError``: never another exception, never a hang. Expressions are built from CEL's own
pieces (macros, operators, string functions, the device's attributes) nested at random, and from
random text."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.cel import MatchResult, SelectorError, compile_selector, evaluate_device
from inventory.parse import parse_resource_slice
from inventory.snapshot import load_path
from tests.conftest import H100_SLICES

compile_selector("true")  # builds celpy's environment, which raises the recursion limit, before hypothesis runs
GPU = next(d for o in load_path(H100_SLICES).objects for d in parse_resource_slice(o).devices if d.driver == "gpu.nvidia.com")

atoms = st.sampled_from([
    "true", "false", "1", "-7", "2.5", "'x'", "''", "'gpu'", "[1, 2, 3]", "[]", "{'a': 1}", "null",
    "device.driver", "device.attributes['gpu.nvidia.com']", "device.attributes['gpu.nvidia.com'].productName",
    "device.attributes['gpu.nvidia.com'].index", "device.capacity['gpu.nvidia.com'].memory",
    "device.attributes['other.example.com']", "quantity('80Gi')", "semver('1.2.3')", "x", "y",
])


def _extend(inner):
    return st.one_of(
        st.tuples(inner, st.sampled_from([" && ", " || ", " == ", " != ", " < ", " + ", " - ", " * ", " / ", " % ", " in "]),
                  inner).map("".join),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"!{e}"),
        inner.map(lambda e: f"-{e}"),
        st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
        st.tuples(inner, st.sampled_from(["all", "exists", "exists_one", "map", "filter"]), inner).map(
            lambda t: f"{t[0]}.{t[1]}(x, {t[2]})"),
        st.tuples(inner, st.sampled_from(["size()", "lowerAscii()", "upperAscii()", "trim()", "replace('', 'ab')",
                                          "split('')", "compareTo(quantity('1'))", "isGreaterThan(semver('0.1.0'))",
                                          "matches('^(a+)+$')", "startsWith('N')", "indexOf('H')", "asInteger()"])).map(
            lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"[{t[0]}, {t[1]}]"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
    )


expressions = st.one_of(
    st.recursive(atoms, _extend, max_leaves=25),
    st.text(max_size=80),
    st.lists(st.sampled_from(["(", ")", "[", "]", "{", "}", ".", ",", "'", '"', "\\", "all(", "x", "1", "+", "&&",
                              "device", ".map(x, ", "?", ":", " "]), max_size=80).map("".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression=expressions)
def test_any_expression_is_a_result_or_a_selector_error_in_bounded_time(expression):
    started = time.monotonic()
    try:
        result = evaluate_device(GPU, [expression])
    except SelectorError as exc:
        assert str(exc)
    else:
        assert isinstance(result, MatchResult)
        assert result.matched in (True, False)
        assert result.error is None or isinstance(result.error, str)
    assert time.monotonic() - started < 3


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 400), wrapper=st.sampled_from(["({})", "!{}", "[{}][0]", "{} && true", "true ? {} : false"]))
def test_any_depth_of_nesting_is_evaluated_or_refused(depth, wrapper):
    expr = "true"
    for _ in range(depth):
        expr = wrapper.format(expr)
    try:
        evaluate_device(GPU, [expr])
    except SelectorError as exc:
        assert "too" in str(exc) or "does not compile" in str(exc)
