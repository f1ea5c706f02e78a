from django.apps import AppConfig


class InventoryConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "inventory"

    def after_sync(self, cluster, read) -> None:
        """Store DCGM values from snapshot scrapes (``*.prom``) on the devices."""
        if read.prom:
            from .telemetry import store_scrapes

            store_scrapes(cluster, read.prom)
