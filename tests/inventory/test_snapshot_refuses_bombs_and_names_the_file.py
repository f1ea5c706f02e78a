"""A hostile or broken snapshot file is one named problem of that file, never a crash, a hang or
a gigabyte: YAML aliases (the 422-byte bomb), nesting past the bound in JSON and YAML, objects
and files over their size limits. The other files of the folder load as if it were not there."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from inventory import jsonlist, snapshot
from inventory.snapshot import SnapshotError, load_path
from tests.conftest import H100_SLICES

# The alias bomb of the issue: nine levels of nine aliases, 9**9 strings once expanded.
BOMB = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: default}\ndata:\n" + "".join(
    f"  {c}: &{c} [{','.join([f'*{p}'] * 9) if p else ','.join(['lol'] * 9)}]\n"
    for p, c in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


def _folder(tmp_path, name: str, text: str | bytes):
    shutil.copy(H100_SLICES, tmp_path / "a-slices.yaml")
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return tmp_path


def _good():
    return load_path(H100_SLICES).objects


def test_the_alias_bomb_is_refused_at_once_and_the_other_file_loads(tmp_path):
    assert len(BOMB) < 600
    started = time.monotonic()
    load = load_path(_folder(tmp_path, "b-bomb.yaml", BOMB))
    assert time.monotonic() - started < 2
    assert load.objects == _good()
    assert len(load.errors) == 1
    assert load.errors[0].startswith("b-bomb.yaml: invalid YAML at line ") and "alias" in load.errors[0]


def test_a_merge_key_is_an_alias_too(tmp_path):
    text = "kind: List\nitems:\n- &b {kind: ConfigMap, apiVersion: v1, metadata: {name: a, namespace: default}}\n- <<: *b\n  metadata: {name: x}\n"
    load = load_path(_folder(tmp_path, "b-merge.yaml", text))
    assert load.objects == _good()
    assert len(load.errors) == 1 and load.errors[0].startswith("b-merge.yaml: invalid YAML at line 3: an alias")


def test_an_anchor_without_an_alias_is_plain_yaml(tmp_path):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: anchored, namespace: default}\n"
    load = load_path(_folder(tmp_path, "b-anchor.yaml", text))
    assert load.errors == []
    assert load.objects[-1]["metadata"]["name"] == "anchored"


def test_a_100000_deep_json_array_is_a_named_problem(tmp_path):
    load = load_path(_folder(tmp_path, "b-deep.json", "[" * 100_000 + "]" * 100_000))
    assert load.objects == _good()
    assert len(load.errors) == 1 and load.errors[0].startswith("b-deep.json: ") and "nested too deeply" in load.errors[0]


def test_a_100000_deep_json_array_alone_is_a_snapshot_error_naming_the_file(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SnapshotError, match=r"deep\.json: .*nested too deeply"):
        load_path(tmp_path)


@pytest.mark.parametrize("depth", [jsonlist.MAX_DEPTH - 3, jsonlist.MAX_DEPTH + 1, 900])
def test_a_list_item_past_the_depth_bound_is_refused_by_file_and_item(tmp_path, depth):
    # Within msgspec's own limit (about 1,000), so only the product's bound can refuse it.
    deep = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "deep", "namespace": "default"},
            "data": json.loads("[" * depth + "]" * depth)}
    text = json.dumps({"kind": "List", "apiVersion": "v1", "items": [deep, *_good()]})
    load = load_path(_folder(tmp_path, "b-list.json", text))
    # The item is one level, ``data`` holds the arrays: depth + 1 levels in all.
    within = depth + 1 <= jsonlist.MAX_DEPTH
    assert [o["metadata"]["name"] for o in load.objects].count("deep") == (1 if within else 0)
    assert len(load.objects) == len(_good()) + within  # the other file's copies are repeats
    assert len([e for e in load.errors if "appears again" in e]) == len(_good())
    if within:
        assert all("appears again" in e for e in load.errors)
    else:
        assert [e for e in load.errors if "nested" in e] == [
            f"ConfigMap default/deep: b-list.json item 0: JSON is nested too deeply (more than {jsonlist.MAX_DEPTH} levels)"
        ]


def test_a_string_with_brackets_does_not_hide_or_fake_depth(tmp_path):
    # Strings full of brackets (CEL selectors have them) fall back to a walk of the object.
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "brackets", "namespace": "default"},
           "data": {"a": "]]]]}}}}" * 50, "b": "[[[[{{{{" * 50, "c": "\\\"[\\\\"}}
    load = load_path(_folder(tmp_path, "b-ok.json", json.dumps({"kind": "List", "items": [obj]})))
    assert load.errors == [] and load.objects[-1]["data"] == obj["data"]
    hidden = {**obj, "metadata": {"name": "hidden", "namespace": "default"},
              "data": json.loads("[" * 150 + json.dumps("]" * 200) + "]" * 150)}
    load = load_path(_folder(tmp_path, "b-ok.json", json.dumps({"kind": "List", "items": [hidden]})))
    assert "hidden" not in [o["metadata"]["name"] for o in load.objects]
    assert [e for e in load.errors if "nested" in e] == [
        f"ConfigMap default/hidden: b-ok.json item 0: JSON is nested too deeply (more than {jsonlist.MAX_DEPTH} levels)"
    ]


@pytest.mark.parametrize("depth", [jsonlist.MAX_DEPTH + 1, 990])
def test_a_yaml_object_past_the_depth_bound_is_refused_by_document(tmp_path, depth):
    text = ("kind: ConfigMap\napiVersion: v1\nmetadata: {name: deep, namespace: default}\ndata: "
            + "[" * depth + "]" * depth + "\n")
    load = load_path(_folder(tmp_path, "b-deep.yaml", text))
    assert load.objects == _good()
    assert load.errors == [f"b-deep.yaml document 1: nested too deeply (more than {jsonlist.MAX_DEPTH} levels)"]


def test_yaml_past_libyaml_nesting_is_one_problem_and_does_not_recurse(tmp_path):
    load = load_path(_folder(tmp_path, "b-deep.yaml", "- " * 100_000 + "x\n"))
    assert load.objects == _good()
    assert len(load.errors) == 1 and load.errors[0].startswith("b-deep.yaml: invalid YAML") and "nested too deeply" in load.errors[0]


def test_an_object_over_the_size_limit_is_refused_and_its_neighbours_load(tmp_path, monkeypatch):
    big = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "big", "namespace": "default"},
           "data": {"blob": "x" * 5000}}
    monkeypatch.setattr(jsonlist, "MAX_OBJECT_BYTES", 4000)
    good = _good()
    assert max(len(json.dumps(o)) for o in good) < 4000
    (tmp_path / "list.json").write_text(json.dumps({"kind": "List", "items": [good[0], big, good[1]]}))
    (tmp_path / "one.json").write_text(json.dumps(big))
    (tmp_path / "one.yaml").write_text(json.dumps(big))  # JSON is YAML: measured on the parser's marks
    (tmp_path / "list.yaml").write_text(json.dumps({"kind": "List", "items": [big]}))
    load = load_path(tmp_path)
    assert [o["metadata"]["name"] for o in load.objects] == [good[0]["metadata"]["name"], good[1]["metadata"]["name"]]
    assert sorted(e.split(": object is ")[0] for e in load.errors) == [
        "ConfigMap default/big: list.json item 1", "list.yaml document 1 item 0", "one.json", "one.yaml document 1",
    ]
    assert all(e.endswith("bytes of text, over the 4,000-byte limit") for e in load.errors)


def test_a_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    first = _good()[0]
    (tmp_path / "small.json").write_text(json.dumps(first))
    (tmp_path / "huge.yaml").write_text("a: " + "x" * 2000)
    monkeypatch.setattr(snapshot, "MAX_FILE_BYTES", max(1000, (tmp_path / "small.json").stat().st_size))
    load = load_path(tmp_path)
    assert [o["metadata"]["name"] for o in load.objects] == [first["metadata"]["name"]]
    assert len(load.errors) == 1 and load.errors[0].startswith("huge.yaml: file is ") and "not read" in load.errors[0]


def test_a_lone_surrogate_is_left_to_the_object_that_holds_it(tmp_path):
    # libyaml refuses the escape; the file is read again with the pure parser, which keeps it.
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: default}\ndata: {k: "a\\ud800b"}\n'
    load = load_path(_folder(tmp_path, "b-surrogate.yaml", text))
    assert load.errors == []
    assert load.objects[-1]["data"]["k"] == "a\ud800b"


def test_documents_before_a_broken_one_are_kept(tmp_path):
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, namespace: default}\n---\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [broken\n")
    load = load_path(_folder(tmp_path, "b-broken.yaml", text))
    assert [o["metadata"]["name"] for o in load.objects][-1] == "first"
    assert len(load.errors) == 1 and load.errors[0].startswith("b-broken.yaml: invalid YAML at line ")
