"""``python manage.py plan_migration --snapshot PATH --out DIR`` (or ``--cluster NAME``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from migration.plan_command import PlanInputError, run_plan_migration


def stored_cluster(name: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Raw objects of a synced cluster plus its Kubernetes version (stored, or from kubelets)."""
    from inventory.exports import cluster_objects, get_cluster
    from migration.evaluation import server_version_for

    cluster = get_cluster(name)
    objects, _prom = cluster_objects(name)
    version = server_version_for(cluster, objects)
    return objects, ({"server_version": version} if version else {})


class Command(BaseCommand):
    # No system checks: they import the URLconf and with it every view (about 350 modules, a
    # third of a second) that a command reading a snapshot never uses; `manage.py check` and
    # `migrate` still run them.
    requires_system_checks: list[str] = []

    help = (
        "Plan the move of device-plugin GPU workloads to DRA: one YAML bundle per namespace, "
        "the stop-gap, summary.json and summary.txt in --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--snapshot", help="file or folder of objects as kubectl get -o yaml|json writes them")
        source.add_argument("--cluster", help="name of a cluster already synced into the database")
        parser.add_argument("--out", required=True, help="folder to write bundles and summaries to")
        parser.add_argument("--server-version", default=None, help="Kubernetes version of the cluster, e.g. 1.33.5")
        parser.add_argument("--target-version", default="1.36", help="Kubernetes version of the DRA cluster")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            _plan, text = run_plan_migration(
                out=options["out"],
                snapshot=options.get("snapshot"),
                cluster=options.get("cluster"),
                server_version=options.get("server_version"),
                target_version=options["target_version"],
                cluster_loader=stored_cluster if options.get("cluster") else None,
            )
        except PlanInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(text)
