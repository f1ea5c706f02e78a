"""``manage.py plan_migration`` checks its input as ``sync_cluster`` and ``diagnose`` do: each of
these inputs is one ``CommandError`` naming the problem (exit status 1, one line, no traceback),
and nothing is written. It used to plan silently from whatever part of a snapshot parsed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from migration_fixtures import WORKLOADS

from tests.inventory.test_snapshot_refuses_bombs_and_names_the_file import BOMB

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD_FILE = WORKLOADS / "workloads.yaml"


def _folder(tmp_path: Path, files: dict[str, str | bytes], with_workloads: bool = False) -> Path:
    folder = tmp_path / "snap"
    folder.mkdir()
    if with_workloads:
        shutil.copy(WORKLOAD_FILE, folder / WORKLOAD_FILE.name)
    for name, data in files.items():
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return folder


SNAPSHOTS = {
    "an empty folder": ({}, False, "no .yaml, .yml, .json or .prom files"),
    "only a text file": ({"notes.txt": "hello"}, False, "no .yaml, .yml, .json or .prom files"),
    "an empty YAML file": ({"a.yaml": ""}, False, "a.yaml: file is empty"),
    "a binary YAML file": ({"a.yaml": b"\x89PNG\r\n\x1a\n\x00\xff\xfe"}, False, "a.yaml: cannot read"),
    "a binary JSON file": ({"a.json": b"\x00\xff\x10{"}, False, "a.json: invalid JSON"),
    "malformed YAML": ({"a.yaml": "kind: Pod\nmetadata: {name: [\n"}, False, "a.yaml: invalid YAML at line"),
    "malformed JSON": ({"a.json": '{"kind": "Pod",'}, False, "a.json: invalid JSON"),
    "a YAML list, not an object": ({"a.yaml": "- a\n- b\n"}, False, "document is a list"),
    "an object without kind": ({"a.yaml": "metadata: {name: x}\n"}, False, "not a Kubernetes object"),
    "an unknown resource.k8s.io version": (
        {"c.yaml": "apiVersion: resource.k8s.io/v9\nkind: ResourceClaim\nmetadata: {name: a, namespace: b}\n"},
        False, "unsupported API version 'resource.k8s.io/v9' for ResourceClaim (b/a)"),
    "a YAML alias bomb": ({"bomb.yaml": BOMB}, False, "bomb.yaml: invalid YAML at line 5: an alias"),
    "JSON nested 100,000 deep": ({"deep.json": "[" * 100_000 + "]" * 100_000}, False, "deep.json: JSON is nested too deeply"),
    "only a scrape": ({"dcgm.prom": "DCGM_FI_DEV_GPU_UTIL 1\n"}, False, "no Kubernetes objects in"),
    "good workloads beside a broken file": ({"z.yaml": "kind: [\n"}, True, "cannot read snapshot: z.yaml: invalid YAML"),
    "a repeated object": ({"again.yaml": WORKLOAD_FILE.read_text()}, True, "appears again (first in"),
}


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_a_bad_snapshot_is_one_command_error_and_writes_nothing(tmp_path, name):
    files, with_workloads, message = SNAPSHOTS[name]
    folder = _folder(tmp_path, files, with_workloads)
    out = tmp_path / "out"
    with pytest.raises(CommandError) as err:
        call_command("plan_migration", "--snapshot", str(folder), "--out", str(out))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not out.exists()


def test_a_missing_snapshot_path_is_one_error(tmp_path):
    with pytest.raises(CommandError, match="snapshot path does not exist"):
        call_command("plan_migration", "--snapshot", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))


@pytest.mark.parametrize(("args", "message"), [
    (["--server-version", "banana"], "--server-version 'banana' is not a Kubernetes version"),
    (["--target-version", "newest"], "--target-version 'newest' is not a Kubernetes version"),
])
def test_a_version_that_is_not_a_version_is_one_error(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("plan_migration", "--snapshot", str(WORKLOADS), "--out", str(tmp_path / "out"), *args)
    assert not (tmp_path / "out").exists()


def test_an_output_path_that_is_a_file_or_under_one_is_one_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CommandError, match="is a file, not a folder"):
        call_command("plan_migration", "--snapshot", str(WORKLOADS), "--out", str(tmp_path / "file"))
    with pytest.raises(CommandError, match="cannot create output folder"):
        call_command("plan_migration", "--snapshot", str(WORKLOADS), "--out", str(tmp_path / "file" / "sub"))


def test_both_sources_or_none_is_refused_by_the_arguments(tmp_path):
    with pytest.raises(CommandError):
        call_command("plan_migration", "--snapshot", str(WORKLOADS), "--cluster", "x", "--out", str(tmp_path))
    with pytest.raises(CommandError):
        call_command("plan_migration", "--out", str(tmp_path))


@pytest.mark.django_db
def test_an_unknown_cluster_is_one_error(tmp_path):
    with pytest.raises(CommandError, match=r"unknown cluster .nope."):
        call_command("plan_migration", "--cluster", "nope", "--out", str(tmp_path / "out"))


def test_the_command_exits_non_zero_with_one_line_and_no_traceback(tmp_path):
    folder = _folder(tmp_path, {"bomb.yaml": BOMB})
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run([sys.executable, "manage.py", "plan_migration", "--snapshot", str(folder), "--out", str(tmp_path / "o")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and done.stderr.startswith("CommandError: ") and "bomb.yaml: invalid YAML" in done.stderr


def test_a_good_snapshot_still_plans(tmp_path):
    call_command("plan_migration", "--snapshot", str(WORKLOADS), "--out", str(tmp_path / "out"), "--server-version", "1.33.5")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["workloads_found"] > 0
