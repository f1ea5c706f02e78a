# Written for the chargeback ledger (checked with makemigrations --check).
# Open rows stop carrying their own last_seen: one sighting per cluster says until when they
# were held. Existing ledgers get theirs from the rows: every open row's last_seen was the
# latest sync's time (each sync updated them all), and the latest of all rows is that time.

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Max


def sightings_from_rows(apps, schema_editor):
    holding = apps.get_model("chargeback", "ChargebackHolding")
    sighting = apps.get_model("chargeback", "LedgerSighting")
    latest = holding.objects.values("cluster_id").annotate(at=Max("last_seen"))
    sighting.objects.bulk_create([sighting(cluster_id=r["cluster_id"], at=r["at"]) for r in latest if r["at"]])


class Migration(migrations.Migration):

    dependencies = [
        ("chargeback", "0001_initial"),
        ("inventory", "0009_watch_cursor_sync_lease"),
    ]

    operations = [
        migrations.CreateModel(
            name="LedgerSighting",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField()),
                ("cluster", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="chargeback_sighting", to="inventory.cluster")),
            ],
        ),
        migrations.AddIndex(
            model_name="chargebackholding",
            index=models.Index(condition=models.Q(("end__isnull", True)), fields=["cluster", "pool"], name="chargeback_open_pool"),
        ),
        migrations.RunPython(sightings_from_rows, migrations.RunPython.noop),
    ]
