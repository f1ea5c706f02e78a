# Written for issue 13 (live clusters): per-list watch cursors and the one-sync-per-cluster lease.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0008_cluster_text_columns'),
    ]

    operations = [
        migrations.CreateModel(
            name='SyncLease',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('holder', models.CharField(blank=True, max_length=300)),
                ('expires_at', models.DateTimeField(blank=True, null=True)),
                ('cluster', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='sync_lease', to='inventory.cluster')),
            ],
        ),
        migrations.CreateModel(
            name='WatchCursor',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('target', models.TextField()),
                ('resource_version', models.TextField(blank=True)),
                ('listed_at', models.DateTimeField(blank=True, null=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='watch_cursors', to='inventory.cluster')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('cluster', 'target'), name='watchcursor_cluster_target')],
            },
        ),
    ]
