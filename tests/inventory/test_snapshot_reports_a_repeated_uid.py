"""The same object twice in a snapshot (two exports merged, a file copied into the folder twice)
is reported, naming both files; the first copy is the one loaded, once."""

from __future__ import annotations

import json
import shutil

from inventory.snapshot import load_path
from tests.conftest import H100_SLICES, VKS_CLAIM


def test_a_uid_in_two_files_is_one_problem_per_repeat_and_loaded_once(tmp_path):
    shutil.copy(H100_SLICES, tmp_path / "a.yaml")
    slices = load_path(H100_SLICES).objects
    changed = json.loads(json.dumps(slices[0]))
    changed["metadata"]["resourceVersion"] = "later"
    (tmp_path / "b.json").write_text(json.dumps({"kind": "List", "items": [changed]}))
    load = load_path(tmp_path)
    assert load.objects == slices
    uid = slices[0]["metadata"]["uid"]
    assert load.errors == [
        f"b.json: ResourceSlice {slices[0]['metadata']['name']} (uid {uid}) appears again (first in a.yaml); the first copy is kept"
    ]


def test_a_uid_twice_in_one_file_is_reported_too(tmp_path):
    claim = load_path(VKS_CLAIM).objects[0]
    (tmp_path / "c.json").write_text(json.dumps({"kind": "List", "items": [claim, claim]}))
    load = load_path(tmp_path)
    assert load.objects == [claim]
    ns, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
    # No uid in the file: the object is known by kind, namespace and name.
    assert load.errors == [f"c.json: ResourceClaim {ns}/{name} appears again (first in c.json); the first copy is kept"]


def test_the_same_name_in_two_namespaces_is_not_a_repeat(tmp_path):
    claim = load_path(VKS_CLAIM).objects[0]
    other = json.loads(json.dumps(claim))
    other["metadata"]["namespace"] = "other"
    (tmp_path / "c.json").write_text(json.dumps({"kind": "List", "items": [claim, other]}))
    load = load_path(tmp_path)
    assert load.errors == [] and len(load.objects) == 2
