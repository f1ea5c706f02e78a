# Written for issue 15 (pages): recorded DCGM history of snapshot clusters (*.range.json files).

import django.db.models.deletion
from django.db import migrations, models

import inventory.fields


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0009_watch_cursor_sync_lease'),
    ]

    operations = [
        migrations.CreateModel(
            name='RecordedSeries',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('field', models.TextField()),
                ('uuid', inventory.fields.ClusterTextField(blank=True)),
                ('labels', inventory.fields.JSONTextField(default=dict)),
                ('points', inventory.fields.JSONTextField(default=list)),
                ('start_s', models.FloatField()),
                ('end_s', models.FloatField()),
                ('source', models.TextField(blank=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='recorded_series', to='inventory.cluster')),
            ],
            options={
                'indexes': [models.Index(fields=['cluster', 'uuid'], name='inventory_r_cluster_5f501a_idx')],
            },
        ),
    ]
