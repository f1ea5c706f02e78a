"""An Event's subject as columns (``KubeObject.subject_kind`` / ``subject_name``), so pages
find a node's or a claim's Events by index. Stored Events are filled in from their records
(the parse layer's ``parse_event``), in batches."""

import inventory.fields
from django.db import migrations, models


def _fill(apps, schema_editor):
    from inventory.fields import clip_text
    from inventory.records import parse_event

    KubeObject = apps.get_model("inventory", "KubeObject")
    events = KubeObject.objects.filter(kind="Event").order_by("pk")
    last = 0
    while True:
        batch = list(events.filter(pk__gt=last).only("pk", "raw")[:2000])
        if not batch:
            return
        for row in batch:
            try:
                e = parse_event(row.raw if isinstance(row.raw, dict) else {})
            except (TypeError, ValueError, AttributeError):
                continue  # stored, so read once; without a subject it is found by no page
            row.subject_kind = e.involved_kind or ""
            row.subject_name = clip_text(e.involved_name or "", inventory.fields.INDEX_CLIP)
        KubeObject.objects.bulk_update(batch, ["subject_kind", "subject_name"])
        last = batch[-1].pk


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0013_chunk_lz4'),
    ]

    operations = [
        migrations.AddField(
            model_name='kubeobject',
            name='subject_kind',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='kubeobject',
            name='subject_name',
            field=inventory.fields.ClusterTextField(blank=True, default=''),
        ),
        migrations.AddIndex(
            model_name='kubeobject',
            index=models.Index(condition=models.Q(('kind', 'Event')), fields=['cluster', 'subject_name'], name='kubeobject_event_subject'),
        ),
        migrations.RunPython(_fill, migrations.RunPython.noop),
    ]
