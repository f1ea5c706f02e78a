"""Run one sync in this process and SIGKILL it at a chosen point (for the kill tests).

``python tests/inventory/killed_sync.py SNAPSHOT CLUSTER [module:function:N]``: with the last
argument, the Nth call of ``module.function`` kills the process before it runs. The database is
the one ``DATABASE_URL`` names (a file the test migrated).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from inventory.models import Cluster  # noqa: E402
from inventory.runs import after_read_hooks  # noqa: E402
from inventory.sources import SnapshotSource  # noqa: E402
from inventory.sync import sync_cluster  # noqa: E402


def kill_at(spec: str) -> None:
    module_name, attr, nth = spec.split(":")
    module = importlib.import_module(module_name)
    *path, name = attr.split(".")
    target = module
    for part in path:
        target = getattr(target, part)
    real = getattr(target, name)
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] >= int(nth):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(target, name, wrapper)


if __name__ == "__main__":
    snapshot, name = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        kill_at(sys.argv[3])
    cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"snapshot_path": snapshot})
    run = sync_cluster(cluster, SnapshotSource(snapshot), after_read=after_read_hooks)
    print(run.status, run.error)
