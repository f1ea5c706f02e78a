"""Node.plugin_gpu_count: the nvidia.com/gpu a node's status.allocatable holds (the NVIDIA
device plugin's GPUs), which the overview counts beside the GPUs ResourceSlices publish. Rows
stored before it are counted here once, from their stored objects."""

from django.db import migrations, models


def count_plugin_gpus(apps, schema_editor):
    Node = apps.get_model("inventory", "Node")
    for pk, raw in Node.objects.filter(from_slices=False).values_list("pk", "raw").iterator(chunk_size=500):
        status = raw.get("status") if isinstance(raw, dict) else None
        allocatable = status.get("allocatable") if isinstance(status, dict) else None
        value = str((allocatable or {}).get("nvidia.com/gpu", "")) if isinstance(allocatable, dict) else ""
        if value.isdecimal() and len(value) < 7 and int(value):
            Node.objects.filter(pk=pk).update(plugin_gpu_count=int(value))


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0015_node_free_gpu_count"),
    ]

    operations = [
        migrations.AddField(
            model_name="node",
            name="plugin_gpu_count",
            field=models.PositiveIntegerField(
                default=0, help_text="nvidia.com/gpu the NVIDIA device plugin advertises (status.allocatable)"),
        ),
        migrations.RunPython(count_plugin_gpus, migrations.RunPython.noop),
    ]
