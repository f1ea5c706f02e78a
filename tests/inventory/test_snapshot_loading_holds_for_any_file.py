"""Property: whatever one file of a snapshot folder holds (random bytes, JSON of any shape and
depth, YAML built from anchors, aliases, tags, brackets and indentation), loading the folder
returns; the other file's objects load exactly as alone; every problem names the bad file; every
object loaded is a Kubernetes-shaped dict within the depth bound that encodes to JSON."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory import jsonlist
from inventory.snapshot import SnapshotError, load_path
from tests.conftest import VKS_CLAIM

GOOD = load_path(VKS_CLAIM).objects

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=30)


@st.composite
def kubernetes_like(draw):
    obj = {"apiVersion": draw(st.sampled_from(["v1", "resource.k8s.io/v1", "resource.k8s.io/v1beta1", "x"])),
           "kind": draw(st.sampled_from(["ConfigMap", "ResourceSlice", "ResourceClaim", "List", "Pod", "Node"])),
           "metadata": draw(st.one_of(st.dictionaries(st.sampled_from(["name", "namespace", "uid"]), scalars),
                                      json_values))}
    if draw(st.booleans()):
        obj["items"] = draw(st.lists(json_values, max_size=3))
    depth = draw(st.integers(0, 1200))
    obj["spec"] = json.loads("[" * depth + "]" * depth) if depth else draw(json_values)
    return obj


YAML_TOKENS = ["&a ", "*a", "&b ", "*b", "<<: ", "!!python/object:os.system ", "!!binary ", "[", "]", "{", "}",
               "- ", ": ", "\n", "  ", "---\n", "...\n", "kind: ConfigMap\n", "metadata: {name: x}\n", "'", '"',
               "\\ud800", "\t", "#", "%YAML 1.1\n", "? ", "|\n", ">\n", "\x00", "\ufeff", "items:\n"]

contents = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    json_values.map(lambda v: json.dumps(v).encode()),
    kubernetes_like().map(lambda v: json.dumps(v).encode()),
    kubernetes_like().map(lambda v: json.dumps({"kind": "List", "items": [v, v]}).encode()),
    st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map(lambda t: "".join(t).encode("utf-8", "surrogatepass")),
)


def _load(name: str, data: bytes):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        shutil.copy(VKS_CLAIM, folder / "a-good.yaml")
        (folder / name).write_bytes(data)
        return load_path(folder)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=contents, suffix=st.sampled_from([".json", ".yaml", ".yml"]))
def test_any_file_beside_a_good_one_loads_the_good_one_and_names_itself(data, suffix):
    load = _load(f"b-bad{suffix}", data)
    assert load.objects[: len(GOOD)] == GOOD
    for e in load.errors:
        assert e.startswith("b-bad") or ": b-bad" in e.split(" appears again")[0], e
    for obj in load.objects[len(GOOD):]:
        assert isinstance(obj, dict) and isinstance(obj.get("kind"), str) and isinstance(obj.get("metadata"), dict)
        assert not jsonlist.nested_deeper(obj)
        json.dumps(obj)  # no RecursionError downstream


@settings(max_examples=60, deadline=None)
@given(data=contents, suffix=st.sampled_from([".json", ".yaml"]))
def test_a_bad_file_alone_is_a_snapshot_error_or_a_load(data, suffix):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / f"only{suffix}").write_bytes(data)
        try:
            load = load_path(d)
        except SnapshotError as exc:
            assert "only" in str(exc)
        else:
            assert load.objects or load.errors is not None
