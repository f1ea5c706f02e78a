"""A CEL selector is untrusted cluster text: length, nesting and evaluation cost are bounded, so
no selector can crash (100 nested parentheses were a RecursionError), hang (a list comprehension
over a hundred elements, three deep) or fill memory (a string squared by ``replace``). Every
refusal is a ``SelectorError`` naming the bound, and it is remembered for every device."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from inventory import cel
from inventory.cel import MAX_EXPRESSION_LENGTH, SelectorError, compile_selector, evaluate_device, selector_problem
from inventory.parse import parse_resource_slice
from inventory.snapshot import load_path
from tests.conftest import H100_SLICES

DEVICES = [d for o in load_path(H100_SLICES).objects for d in parse_resource_slice(o).devices]
GPU = next(d for d in DEVICES if d.driver == "gpu.nvidia.com")
HUNDRED = "[" + ",".join(str(i) for i in range(100)) + "]"


def test_a_selector_of_100_nested_parentheses_is_refused_not_a_recursion_error():
    expr = "(" * 100 + "device.driver == 'gpu.nvidia.com'" + ")" * 100
    assert len(expr) < 300
    with pytest.raises(SelectorError, match="nested too deeply"):
        evaluate_device(GPU, [expr])


def test_twenty_nested_parentheses_still_evaluate():
    expr = "(" * 20 + "device.driver == 'gpu.nvidia.com'" + ")" * 20
    assert evaluate_device(GPU, [expr]).matched


def test_a_long_chain_of_operators_is_refused_by_depth_too():
    with pytest.raises(SelectorError, match="nested too deeply"):
        compile_selector("1" + " + 1" * 1500 + " > 0")


def test_a_selector_longer_than_the_api_server_accepts_is_refused_unparsed():
    expr = "device.driver == '" + "x" * MAX_EXPRESSION_LENGTH + "'"
    started = time.monotonic()
    problem = selector_problem(expr)
    assert time.monotonic() - started < 0.1
    assert problem is not None and "too long" in problem and "10,240" in problem
    assert selector_problem("device.driver == '" + "x" * (MAX_EXPRESSION_LENGTH - 40) + "'") is None


def test_a_nested_list_comprehension_runs_out_of_steps_once_for_the_whole_fleet():
    expr = f"{HUNDRED}.all(a, {HUNDRED}.all(b, {HUNDRED}.all(c, a + b + c >= 0)))"
    started = time.monotonic()
    with pytest.raises(SelectorError, match="too costly"):
        evaluate_device(GPU, [expr])
    for d in DEVICES:  # refused at once from then on: the fleet pays the budget once
        with pytest.raises(SelectorError, match="too costly"):
            evaluate_device(d, [expr])
    assert time.monotonic() - started < 5
    assert "too costly" in (selector_problem(expr) or "")


def test_a_string_squared_by_replace_runs_out_of_steps_not_of_memory():
    expr = "'xx'" + ".replace('', 'xxxxxxxx')" * 12 + ".size() > 0"
    with pytest.raises(SelectorError, match="too costly"):
        evaluate_device(GPU, [expr])


def test_strings_doubled_inside_macros_run_out_of_steps():
    inner = "'" + "x" * 4000 + "'"
    expr = inner
    for v in "abcdefghijkl":
        expr = f"[{expr}].map({v}, {v} + {v})[0]"
    with pytest.raises(SelectorError, match="too costly"):
        evaluate_device(GPU, [f"{expr}.size() > 0"])


def test_a_runtime_error_is_a_non_match_with_its_message_not_a_refusal():
    result = evaluate_device(GPU, ["device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'"])
    assert not result.matched and result.error and "noSuchAttribute" in result.error


def test_the_selectors_drivers_document_stay_well_within_the_budget():
    exprs = [
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^nvidia h100.*$')",
        "device.attributes['gpu.nvidia.com'].exists(k, k == 'productName')",
    ]
    for d in DEVICES:
        for e in exprs:
            evaluate_device(d, [e])  # raises SelectorError if any were refused


def test_a_selector_refused_on_one_device_is_refused_on_every_device():
    # Runs out of steps only where the map it walks is large: a GPU's attributes.
    expr = f"device.attributes['gpu.nvidia.com'].all(k, {HUNDRED}.all(a, {HUNDRED}.all(b, true)))"
    other = next(d for d in DEVICES if d.driver != "gpu.nvidia.com")
    assert evaluate_device(other, [expr]).matched  # no gpu.nvidia.com attributes: an empty map
    with pytest.raises(SelectorError):
        evaluate_device(GPU, [expr])
    with pytest.raises(SelectorError):
        evaluate_device(other, [expr])
    assert cel.classes_matching(other, {"c": [expr]}) == []


def test_importing_the_module_does_not_load_celpy_until_a_selector_is_compiled():
    code = ("import sys, inventory.cel as c; a = 'celpy' in sys.modules; "
            "c.compile_selector('true'); print(a, 'celpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=".")
    assert out.stdout.split() == ["False", "True"]
