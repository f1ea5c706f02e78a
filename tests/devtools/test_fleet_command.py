"""manage.py generate_fleet writes a kind: List file the snapshot loader reads back."""

from __future__ import annotations

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.benchfleet import generate_benchmark_fleet
from devtools.fleet import generate_fleet
from inventory.snapshot import load_path


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_written_fleet_loads_back_as_the_generated_objects(tmp_path, suffix):
    path = tmp_path / f"fleet{suffix}"
    out = StringIO()
    call_command("generate_fleet", "--nodes", "12", "--seed", "5", "--out", str(path), stdout=out)
    load = load_path(path)
    assert load.errors == []
    assert load.objects == generate_fleet(12, seed=5)
    text = out.getvalue()
    assert f"{path.stat().st_size} bytes" in text
    for kind, n in Counter(o["kind"] for o in load.objects).items():
        assert f"{kind}" in text and str(n) in text


def test_zero_nodes_is_an_error(tmp_path):
    with pytest.raises(CommandError):
        call_command("generate_fleet", "--nodes", "0", "--out", str(tmp_path / "x.json"), stdout=StringIO())


def test_the_benchmark_shape_writes_the_benchmark_fleet(tmp_path):
    path = tmp_path / "bench.json"
    call_command("generate_fleet", "--nodes", "2", "--shape", "benchmark", "--out", str(path), stdout=StringIO())
    assert load_path(path).objects == generate_benchmark_fleet(2)
