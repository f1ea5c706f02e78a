"""One odd object costs a partial run that names it, never the whole sync: values a database
refuses, JSON or YAML nested too deeply, device attribute shapes no driver writes, a device
published twice (reported on every sync while it lasts), typed Lists whose items carry no kind.
"""

from __future__ import annotations

import codecs
import copy
import json

import pytest
import yaml

from inventory.models import Cluster, Device, KubeObject, ResourceSlice, SourceKind
from inventory.snapshot import load_path
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from tests.conftest import H100_SLICES, write_list

pytestmark = pytest.mark.django_db


def _slices():
    return load_path(H100_SLICES).objects


def _config_map(name: str, data: dict) -> dict:
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "gpu-operator", "uid": f"uid-{name}", "resourceVersion": "1"},
        "data": data,
    }  # fmt: skip


def _sync(path, name="odd"):
    cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"source_kind": SourceKind.SNAPSHOT})
    return sync_cluster(cluster, SnapshotSource(path))


def test_a_nul_character_in_a_value_is_stored_as_a_replacement_character(tmp_path):
    # PostgreSQL's jsonb and text refuse NUL; a ConfigMap value may hold one.
    run = _sync(write_list(tmp_path / "s.json", [*_slices(), _config_map("nul", {"k": "a\u0000b"})]))
    assert run.status == "ok", run.errors
    stored = KubeObject.objects.get(kind="ConfigMap", name="nul").raw["data"]["k"]
    assert stored in ("a\u0000b", "a\ufffdb")  # SQLite keeps it; PostgreSQL replaces it
    assert ResourceSlice.objects.count() == len(_slices())


def test_a_value_the_database_cannot_encode_fails_only_its_object(tmp_path):
    # A YAML escape can produce a lone surrogate, which no UTF-8 text can hold.
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all([*_slices(), _config_map("bad", {"k": "x"})]).replace("k: x", 'k: "a\\ud800b"'))
    run = _sync(path)
    assert run.status == "partial"
    assert any("ConfigMap gpu-operator/bad" in e and "cannot be stored" in e for e in run.errors)
    assert ResourceSlice.objects.count() == len(_slices())
    assert not KubeObject.objects.filter(name="bad").exists()


def test_a_device_memory_beyond_any_real_size_is_read_as_unknown(tmp_path):
    slices = copy.deepcopy(_slices())
    gpu = next(d for s in slices for d in s["spec"]["devices"] if "memory" in (d.get("capacity") or {}))
    gpu["capacity"]["memory"] = {"value": "99999999999999999999999999Ei"}
    run = _sync(write_list(tmp_path / "s.json", slices))
    assert run.status == "ok", run.errors
    dev = Device.objects.get(name=gpu["name"], pool=next(s for s in slices if gpu in s["spec"]["devices"])["spec"]["pool"]["name"])
    assert dev.memory_bytes is None
    assert dev.capacity["gpu.nvidia.com/memory"] == "99999999999999999999999999Ei"


@pytest.mark.parametrize("field", ["attributes", "capacity"])
def test_device_attributes_that_are_not_a_map_name_the_device(tmp_path, field):
    slices = copy.deepcopy(_slices())
    bad_slice = slices[1]
    bad_slice["spec"]["devices"][0][field] = ["x"]
    run = _sync(write_list(tmp_path / "s.json", slices))
    assert run.status == "partial"
    assert any(f"{field} is not a map" in e and bad_slice["spec"]["devices"][0]["name"] in e for e in run.errors)
    assert ResourceSlice.objects.count() == len(slices) - 1


def test_json_nested_too_deeply_is_one_problem_of_its_file(tmp_path):
    folder = tmp_path / "snap"
    folder.mkdir()
    write_list(folder / "a-slices.json", _slices())
    (folder / "b-deep.json").write_text('{"apiVersion":"v1","kind":"List","items":[{"kind":"ConfigMap","metadata":{"name":"d"},"data":'
                                       + "[" * 5000 + "]" * 5000 + "}]}")
    run = _sync(folder)
    assert run.status == "partial"
    assert any("b-deep.json" in e and "nested too deeply" in e for e in run.errors)
    assert ResourceSlice.objects.count() == len(_slices())


def test_yaml_nested_too_deeply_is_one_problem_of_its_file(tmp_path):
    folder = tmp_path / "snap"
    folder.mkdir()
    write_list(folder / "a-slices.json", _slices())
    (folder / "b-deep.yaml").write_text("kind: ConfigMap\nmetadata: {name: d}\ndata: " + "[" * 5000 + "]" * 5000 + "\n")
    run = _sync(folder)
    assert run.status == "partial"
    assert any("b-deep.yaml" in e and "nested too deeply" in e for e in run.errors)
    assert ResourceSlice.objects.count() == len(_slices())


def test_a_device_published_twice_is_reported_on_every_sync_while_it_lasts(tmp_path):
    slices = copy.deepcopy(_slices())
    twin = copy.deepcopy(slices[1])
    twin["metadata"].update(name=twin["metadata"]["name"] + "-twin", uid="0f0f0f0f-0000-4000-8000-00000000abcd")
    path = write_list(tmp_path / "s.json", [*slices, twin])
    cluster = Cluster.objects.create(name="twice", source_kind=SourceKind.SNAPSHOT)
    for _ in range(3):
        run = sync_cluster(cluster, SnapshotSource(path))
        assert run.status == "partial"
        assert any("published twice" in e or "also published by another slice" in e for e in run.errors), run.errors
    # Fixed in the source: the next sync is clean again.
    run = sync_cluster(cluster, SnapshotSource(write_list(tmp_path / "fixed.json", slices)))
    assert run.status == "ok", run.errors


def test_a_device_published_again_in_a_later_batch_of_a_first_sync_is_kept_once(tmp_path, monkeypatch):
    # One slice per batch, into an empty cluster: the twin's devices are found among those the
    # same sync stored from an earlier batch.
    from inventory import reconcile

    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 1)
    slices = copy.deepcopy(_slices())
    twin = copy.deepcopy(slices[1])
    twin["metadata"].update(name=twin["metadata"]["name"] + "-twin", uid="0f0f0f0f-0000-4000-8000-00000000abce")
    cluster = Cluster.objects.create(name="twice-later", source_kind=SourceKind.SNAPSHOT)
    run = sync_cluster(cluster, SnapshotSource(write_list(tmp_path / "s.json", [*slices, twin])))
    assert run.status == "partial"
    reported = [e for e in run.errors if "also published by another slice" in e]
    assert len(reported) == len(twin["spec"]["devices"]), run.errors
    total = sum(len(s["spec"].get("devices") or []) for s in slices)
    assert Device.objects.filter(cluster=cluster).count() == total
    assert not Device.objects.filter(cluster=cluster, slice__name=twin["metadata"]["name"]).exists()


def test_a_bom_before_a_json_file_is_accepted(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps({"apiVersion": "v1", "kind": "List", "items": _slices()}).encode())
    run = _sync(path)
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.count() == len(_slices())


def test_nan_in_a_json_file_is_named_as_the_reason(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"apiVersion":"v1","kind":"List","items":[{"kind":"ConfigMap","metadata":{"name":"n"},"data":{"x":NaN}}]}')
    cluster = Cluster.objects.create(name="nan", source_kind=SourceKind.SNAPSHOT)
    run = sync_cluster(cluster, SnapshotSource(path))
    assert run.status == "failed"
    assert "s.json: invalid JSON: " in run.error and run.error.rstrip() != "s.json: invalid JSON:"


def test_items_of_a_typed_list_without_kind_take_it_from_the_list(tmp_path):
    # What `kubectl get --raw /apis/resource.k8s.io/v1/resourceslices` writes.
    items = []
    for s in _slices():
        s = copy.deepcopy(s)
        del s["kind"], s["apiVersion"]
        items.append(s)
    path = tmp_path / "raw.json"
    path.write_text(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "metadata": {}, "items": items}))
    run = _sync(path)
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.count() == len(items)
    assert all(r["kind"] == "ResourceSlice" and r["apiVersion"] == "resource.k8s.io/v1"
               for r in ResourceSlice.objects.values_list("raw", flat=True))


def test_an_impossible_creation_date_is_read_as_unknown(tmp_path):
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "uid-p", "resourceVersion": "1",
                     "creationTimestamp": "2026-02-30T00:00:00Z"},
        # A pod the dashboard keeps (it uses a claim): pods that use no GPU are not read.
        "spec": {"nodeName": "n", "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
        "status": {"phase": "Running"},
    }  # fmt: skip
    run = _sync(write_list(tmp_path / "s.json", [*_slices(), pod]))
    assert run.status == "ok", run.errors
    from inventory.models import Pod

    assert Pod.objects.get(name="p").created is None
