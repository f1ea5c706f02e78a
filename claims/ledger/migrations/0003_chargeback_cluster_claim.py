# Written for the chargeback ledger (checked with makemigrations --check).
# A changed claim's open rows, for the sync hook that follows the change set.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("chargeback", "0002_ledgersighting"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="chargebackholding",
            index=models.Index(fields=["cluster", "claim_uid", "end"], name="chargeback_cluster_claim"),
        ),
    ]
