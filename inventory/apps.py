from django.apps import AppConfig


class InventoryConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "inventory"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from .fields import text_json_loader

        connection_created.connect(text_json_loader, dispatch_uid="inventory.text_json_loader")

    def after_sync(self, cluster, read) -> None:
        """Store DCGM values from snapshot scrapes (``*.prom``) on the devices, dated at the
        snapshot's own moment when the samples carry no time, and the recorded history of its
        range files (``*.range.json``; a snapshot read without them, and without problems,
        clears what an earlier one recorded)."""
        from .models import SourceKind

        changes = getattr(read, "changes", None)
        complete = not read.errors and not (changes is not None and changes.incomplete)
        if read.ranges or (cluster.source_kind == SourceKind.SNAPSHOT and complete):
            from .telemetry import store_ranges

            store_ranges(cluster, read.ranges, complete=complete)
        if read.prom:
            from .telemetry import store_scrapes

            # A scrape file carries no time of its own: dated at the sync, one taken with a
            # months-old snapshot would read as fresh, and a claim allocated at the snapshot's
            # moment as held until today. (Scrapes come with snapshots alone.)
            model_of = getattr(read, "model", None)
            moment = cluster.snapshot_moment(model_of()) if model_of is not None else None
            stored = store_scrapes(cluster, read.prom, observed_at=moment)
            if stored.get("skipped_lines"):  # counted on the run (counts["skipped"])
                read.skipped["malformed scrape lines"] = stored["skipped_lines"]

