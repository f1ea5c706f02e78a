"""Node.plugin_mig_count: the nvidia.com/mig-* a node's status.allocatable holds (the NVIDIA
device plugin's MIG instances under the mixed strategy, whose GPUs are no nvidia.com/gpu), so
such a node reads as served by the device plugin. Rows stored before it are counted here once."""

from django.db import migrations, models


def plugin_migs(allocatable: dict) -> int:  # inventory.rows.plugin_migs as of this migration
    return sum(int(v) for k, v in allocatable.items()
               if k.startswith("nvidia.com/mig-") and str(v).isdecimal() and len(str(v)) < 7)


def count_plugin_migs(apps, schema_editor):
    Node = apps.get_model("inventory", "Node")
    for pk, raw in Node.objects.filter(from_slices=False).values_list("pk", "raw").iterator(chunk_size=500):
        status = raw.get("status") if isinstance(raw, dict) else None
        allocatable = status.get("allocatable") if isinstance(status, dict) else None
        if isinstance(allocatable, dict) and (n := plugin_migs(allocatable)):
            Node.objects.filter(pk=pk).update(plugin_mig_count=n)


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0017_cluster_source_paths_absolute"),
    ]

    operations = [
        migrations.AddField(
            model_name="node",
            name="plugin_mig_count",
            field=models.PositiveIntegerField(
                default=0, help_text="nvidia.com/mig-* the NVIDIA device plugin advertises (status.allocatable, mixed MIG strategy)"),
        ),
        migrations.RunPython(count_plugin_migs, migrations.RunPython.noop),
    ]
