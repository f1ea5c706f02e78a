"""``manage.py sync_cluster``: load a snapshot or read a live cluster into the database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from inventory.models import Cluster, SourceKind, SyncStatus
from inventory.runs import run_sync
from inventory.sources import SourceError
from inventory.sync import one_sync


class Command(BaseCommand):
    # No system checks: they import the URLconf and with it every view (about 350 modules, a
    # third of a second) that a command reading a snapshot never uses; `manage.py check` and
    # `migrate` still run them.
    requires_system_checks: list[str] = []

    help = "Sync one cluster from a snapshot (file or folder) or a live API server; prints counts."

    def add_arguments(self, parser):
        src = parser.add_mutually_exclusive_group()
        src.add_argument("--snapshot", metavar="PATH", help="file or folder of kubectl -o yaml/json output (+ *.prom)")
        src.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig of a live cluster")
        src.add_argument("--in-cluster", action="store_true", help="use the pod's service account")
        parser.add_argument("--context", default="", help="kubeconfig context")
        parser.add_argument("--cluster", default="", help="cluster name (default: derived from the source)")

    def handle(self, *args, **opts):
        name = opts["cluster"]
        given_source = bool(opts["snapshot"] or opts["kubeconfig"] or opts["in_cluster"])
        if opts["snapshot"]:
            path = Path(opts["snapshot"])
            # Checked before a cluster is created: a mistyped path must not leave a failed cluster.
            if not path.exists():
                raise CommandError(f"snapshot path does not exist: {path}")
            # Kept absolute: Sync now and the schedule read it from other working directories.
            kind, fields = SourceKind.SNAPSHOT, {"snapshot_path": str(path.absolute())}
            # The folder's (or file's) own name: demo/vks-a100 -> vks-a100.
            name = name or (path.resolve().stem if path.is_file() else path.resolve().name) or "snapshot"
        elif opts["kubeconfig"]:
            kubeconfig = str(Path(opts["kubeconfig"]).expanduser().absolute())
            kind, fields = SourceKind.KUBECONFIG, {"kubeconfig_path": kubeconfig, "kube_context": opts["context"]}
            name = name or (opts["context"] or "default")
        elif opts["in_cluster"]:
            kind, fields = SourceKind.IN_CLUSTER, {}
            name = name or "in-cluster"
        elif name:
            try:
                cluster = Cluster.objects.get(name=name)
            except Cluster.DoesNotExist:
                raise CommandError(f"no cluster named {name!r}; give --snapshot, --kubeconfig or --in-cluster") from None
            kind, fields = cluster.source_kind, {}
        else:
            raise CommandError("give --snapshot PATH, --kubeconfig PATH, --in-cluster or --cluster NAME")
        from django.utils.text import slugify

        slug = slugify(name)[:63]
        if not slug:
            raise CommandError(f"cluster name {name!r} has no usable characters")
        if opts["cluster"] and slug != opts["cluster"]:
            # Two names that slug alike ("a/b", "A.B") would sync into one cluster, the second
            # deleting what only the first holds.
            raise CommandError(f"cluster name {opts['cluster']!r} is not a cluster name (lower-case letters, digits, "
                               f"'-' and '_', at most 63); did you mean --cluster {slug}?")
        existing = Cluster.objects.filter(name=slug).first()
        if existing is not None and not opts["cluster"] and _other_source(existing, kind, fields):
            # A name made from the path (".../a/snapshot" and ".../b/snapshot" are both
            # "snapshot"): syncing another source into it would delete the first one's objects.
            raise CommandError(f"cluster {slug!r} already syncs from {existing.source_kind} "
                               f"{existing.snapshot_path or existing.kubeconfig_path or ''}".rstrip()
                               + f"; give --cluster NAME for a cluster of its own (or --cluster {slug} to replace its source)")
        cluster, created = Cluster.objects.get_or_create(name=slug, defaults={"source_kind": kind, **fields})
        # The source this run reads (given one: --cluster NAME alone re-reads the cluster's own),
        # kept as the cluster's (what Sync now and the schedule read) only once a run read it
        # cleanly, or read objects from it: a mistyped or broken file must not replace a working
        # source.
        fields = {"source_kind": kind, **fields} if given_source else {}
        for k, v in fields.items():
            setattr(cluster, k, v)
        try:
            with one_sync():  # this process ends after it: nothing is kept for a next sync
                run = run_sync(cluster)
        except SourceError as exc:
            if created:
                cluster.delete()
            raise CommandError(str(exc)) from exc
        read_objects = any(k != "skipped" and (c.get("seen") or c.get("deleted")) for k, c in run.counts.items())
        if created and (run.status == SyncStatus.FAILED or (run.status == SyncStatus.PARTIAL and not read_objects)):
            cluster.delete()  # nothing stored: no empty cluster left behind in every list
        elif fields and (run.status == SyncStatus.OK or read_objects):
            Cluster.objects.filter(pk=cluster.pk).update(**fields)
        self.stdout.write(f"cluster {cluster.name}: {run.status} in {run.duration_ms} ms from {run.source}")
        for kind_name, c in sorted(run.counts.items()):
            if kind_name == "skipped":
                # Not stored: kinds the dashboard does not read, Pods without a GPU or claim, bad scrape lines.
                self.stdout.write(f"  skipped (not used): {', '.join(f'{k}={v}' for k, v in sorted(c.items()))}")
            elif any(c.values()):
                self.stdout.write(
                    f"  {kind_name:<22} seen={c['seen']} created={c['created']} updated={c['updated']} "
                    f"deleted={c['deleted']} unchanged={c['unchanged']}"
                )
        if run.status != SyncStatus.FAILED and not read_objects:
            self.stdout.write("  no Kubernetes objects were read: the stored inventory is unchanged"
                              + ("" if run.status == SyncStatus.OK or not fields else ", and the cluster keeps its source"))
        for e in run.errors[:20]:
            self.stderr.write(f"  problem: {e}")
        if run.status == SyncStatus.FAILED:
            raise CommandError(run.error)
        if run.status == SyncStatus.PARTIAL:
            raise CommandError(run.error)


def _other_source(cluster: Cluster, kind: str, fields: dict) -> bool:
    """Is the source the command was given another than the one ``cluster`` syncs from?"""
    if not fields:
        return False
    if cluster.source_kind != kind:
        return True
    if kind == SourceKind.SNAPSHOT:
        return Path(cluster.snapshot_path).resolve() != Path(fields["snapshot_path"]).resolve()
    # Paths as files, not text: one stored as typed ("~/.kube/config") names the same file.
    return (_same_file(cluster.kubeconfig_path) != _same_file(fields["kubeconfig_path"])
            or cluster.kube_context != fields["kube_context"])


def _same_file(path: str) -> Path:
    return Path(path).expanduser().resolve()
