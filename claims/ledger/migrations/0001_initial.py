# Written for the chargeback ledger (checked with makemigrations --check).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("inventory", "0009_watch_cursor_sync_lease"),
    ]

    operations = [
        migrations.CreateModel(
            name="ChargebackHolding",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("claim_uid", models.TextField()),
                ("namespace", models.TextField()),
                ("claim_name", models.TextField()),
                ("driver", models.TextField()),
                ("pool", models.TextField()),
                ("device_name", models.TextField()),
                ("product", models.TextField(blank=True)),
                ("kind", models.CharField(max_length=16)),
                ("share", models.FloatField()),
                ("start", models.DateTimeField(blank=True, null=True)),
                ("last_seen", models.DateTimeField()),
                ("end", models.DateTimeField(blank=True, null=True)),
                ("cluster", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="chargeback_holdings", to="inventory.cluster")),
            ],
            options={
                "indexes": [
                    models.Index(fields=["cluster", "end"], name="chargeback_cluster_end"),
                    models.Index(fields=["cluster", "start"], name="chargeback_cluster_start"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("end__isnull", True)),
                        fields=("cluster", "claim_uid", "driver", "pool", "device_name"),
                        name="chargeback_open_holding_unique",
                    ),
                ],
            },
        ),
    ]
