"""A command that reads a snapshot (``sync_cluster``, ``diagnose``, ``plan_migration``) starts
without importing the URLconf and the dashboard's views: Django's system checks would import
them all before the command runs. ``sync_cluster`` on a snapshot imports neither Celery nor the
kubernetes client. Each command runs in a fresh interpreter, as from a shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import CASES, FIXTURES

ROOT = Path(__file__).resolve().parents[2]
# Runs the command as ``manage.py`` would (ManagementUtility, so system checks run unless the
# command opts out), then prints the product modules the process imported.
PROBE = """
import json, os, sys
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from django.core.management import ManagementUtility
code = 0
try:
    ManagementUtility(["manage.py", *sys.argv[1:]]).execute()
except SystemExit as exc:
    code = exc.code
product = ("config", "inventory", "claims", "migration", "celery", "kombu", "kubernetes")
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.split(".")[0] in product)}))
"""


def _modules(*argv: str) -> tuple[object, set[str]]:
    # Our own interpreter and arguments: nothing untrusted.
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["code"], set(result["modules"])


def _views(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "config.urls" or m.rsplit(".", 1)[-1].endswith("views")}


def test_diagnose_on_a_snapshot_imports_no_view():
    code, modules = _modules("diagnose", "--snapshot", str(CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"))
    assert code in (0, None) and "claims.diagnosis.engine" in modules
    assert _views(modules) == set()


def test_plan_migration_on_a_snapshot_imports_no_view(tmp_path):
    code, modules = _modules("plan_migration", "--snapshot", str(FIXTURES / "migration" / "workloads"), "--out", str(tmp_path))
    assert code in (0, None) and (tmp_path / "summary.json").exists()
    assert _views(modules) == set()


def test_sync_cluster_starts_without_the_views(tmp_path):
    # A missing path is refused in handle(), after the checks would have run, before any
    # database access: the test's own database is never touched from the child.
    code, modules = _modules("sync_cluster", "--snapshot", str(tmp_path / "missing"))
    assert code == 1 and "inventory.management.commands.sync_cluster" in modules
    assert _views(modules) == set()


def test_a_snapshot_sync_imports_neither_celery_nor_the_kubernetes_client(tmp_path):
    code, modules = _modules("sync_cluster", "--snapshot", str(tmp_path / "missing"))
    assert code == 1 and "inventory.runs" in modules and "inventory.sync" in modules
    assert {m.split(".")[0] for m in modules} & {"celery", "kombu", "kubernetes"} == set()
    assert "inventory.tasks" not in modules and "config.celery" not in modules


def test_the_tasks_bind_to_the_project_celery_app():
    # Without config/__init__ loading it, the tasks module loads the app its tasks are sent by.
    probe = ("import os, sys; sys.path.insert(0, os.getcwd()); "
             "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); import django; django.setup(); "
             "from inventory.tasks import sync_cluster_task; print(sync_cluster_task.app.main)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "claimscope"


def test_the_same_probe_sees_the_views_a_checked_command_imports():
    # ``check`` runs the system checks: the probe must see the URLconf it imports.
    _code, modules = _modules("check")
    assert "config.urls" in _views(modules)
