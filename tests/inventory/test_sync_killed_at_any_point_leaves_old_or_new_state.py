"""A sync killed (SIGKILL) at any point leaves objects and findings that agree with a clean
sync of the input before it (killed before its commit) or of its own input (after), and the
next sync of the same input gives what a clean sync gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CASES, write_list

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("killed_sync.py")
CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"

# (where the process dies, whose state it must leave: "old" = before the sync, "new" = after)
POINTS = [
    ("inventory.reconcile:Reconcile.flush:3", "old"),  # in the middle of writing objects
    ("claims.store:_record_states:1", "old"),  # objects written, diagnosis under way
    ("claims.models:ClaimTransition.objects.bulk_create:1", "old"),  # findings half written
    ("migration.evaluation:evaluate_cluster:1", "old"),  # findings written, readiness next
    ("inventory.models:SyncRun.save:2", "old"),  # everything written, the run's outcome next
    ("inventory.queries:warm_overview:1", "new"),  # committed; warming the overview's cache
]

SIGNATURE = """
import json, os, sys
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django; django.setup()
from claims.models import Finding
from inventory.models import AllocationResult, Cluster, Device, KubeObject, Node, Pod, ResourceClaim, ResourceSlice, DeviceClass
out = {}
for name in sys.argv[1:]:
    c = Cluster.objects.filter(name=name).first()
    if c is None:
        out[name] = None
        continue
    sig = {m.__name__: sorted(m.objects.filter(cluster=c).values_list("uid", flat=True))
           for m in (Node, Pod, ResourceClaim, ResourceSlice, DeviceClass)}
    sig["KubeObject"] = sorted(map(list, KubeObject.objects.filter(cluster=c).values_list("kind", "uid")))
    sig["Device"] = sorted(map(list, Device.objects.filter(cluster=c).values_list("driver", "pool", "name", "device_classes")))
    sig["AllocationResult"] = sorted(map(list, AllocationResult.objects.filter(cluster=c).values_list("claim__uid", "driver", "pool", "device_name", "device__name")))
    sig["Finding"] = sorted(map(list, Finding.objects.filter(cluster=c, resolved_at__isnull=True).values_list("category", "kind", "namespace", "name", "summary")))
    sig["running"] = c.sync_runs.filter(status="running").count()
    out[name] = sig
print(json.dumps(out))
"""


def _env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["DATABASE_URL"] = f"sqlite:///{db}"
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return env


def _sync(db: Path, snapshot: Path, cluster: str, kill: str | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, str(DRIVER), str(snapshot), cluster, *([kill] if kill else [])]
    return subprocess.run(args, cwd=ROOT, env=_env(db), capture_output=True, text=True, timeout=120)


def _signature(db: Path, *clusters: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SIGNATURE, *clusters], cwd=ROOT, env=_env(db),
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def _same(sig: dict) -> dict:
    sig = dict(sig)
    sig.pop("running")
    return sig


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A migrated SQLite file, the two inputs and clean syncs of each as references."""
    from inventory.snapshot import load_path

    tmp = tmp_path_factory.mktemp("killed")
    db = tmp / "db.sqlite3"
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=_env(db),
                   check=True, timeout=300)
    old = CASE
    # The new input: the pending claim and its pod are gone (their finding resolves), one
    # allocated claim is released (its devices free up), one GPU slice is re-published.
    objs = load_path(CASE).objects
    pending = next(o for o in objs if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation"))
    gone = {pending["metadata"]["name"], *(r["name"] for r in pending["metadata"].get("ownerReferences", []))}
    new_objs = [o for o in objs if o["metadata"].get("name") not in gone]
    for o in new_objs:
        if o["kind"] == "ResourceClaim":
            o["status"] = {}
            o["metadata"]["resourceVersion"] = "999001"
            break
    new = write_list(tmp / "new.json", new_objs)
    for name, path in (("ref-old", old), ("ref-new", new), ("victim", old)):
        done = _sync(db, path, name)
        assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout + done.stderr
    refs = _signature(db, "ref-old", "ref-new")
    assert _same(refs["ref-old"]) != _same(refs["ref-new"])
    assert [f[0] for f in refs["ref-old"]["Finding"]] != [f[0] for f in refs["ref-new"]["Finding"]]
    return db, old, new, refs


@pytest.mark.parametrize(("point", "leaves"), POINTS, ids=[p for p, _ in POINTS])
def test_a_sync_killed_leaves_the_old_or_the_new_state_and_the_next_sync_repairs_it(world, point, leaves):
    db, old, new, refs = world
    reset = _sync(db, old, "victim")  # back to the old input, cleanly
    assert reset.returncode == 0, reset.stderr
    killed = _sync(db, new, "victim", kill=point)
    assert killed.returncode == -9, f"the process was not killed at {point}: {killed.stdout}{killed.stderr}"

    after_kill = _signature(db, "victim")["victim"]
    want = refs["ref-old"] if leaves == "old" else refs["ref-new"]
    assert _same(after_kill) == _same(want)

    again = _sync(db, new, "victim")
    assert again.returncode == 0 and again.stdout.startswith("ok"), again.stdout + again.stderr
    repaired = _signature(db, "victim")["victim"]
    assert _same(repaired) == _same(refs["ref-new"])
    assert repaired["running"] == 0  # the killed run was closed by the next one
