"""The stored model's and the kept overview's chunks (msgpack, up to a few MB each) compressed
with lz4 on PostgreSQL servers built with it: pglz took most of the 2 s a full sync of 1,000
nodes spent writing its model (70 MB), and reading them back is faster too. Other servers
and SQLite keep their default."""

from django.db import migrations

TABLES = ("inventory_modelchunk", "inventory_keptchunk")


def _lz4_available(cursor) -> bool:
    cursor.execute("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
    return cursor.fetchone() is not None


def _set(method: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            if method == "lz4" and not _lz4_available(cursor):
                return
            for table in TABLES:
                cursor.execute(f"ALTER TABLE {table} ALTER COLUMN data SET COMPRESSION {method}")  # noqa: S608 - constants
    return run


class Migration(migrations.Migration):
    dependencies = [("inventory", "0012_kept_chunk")]

    operations = [migrations.RunPython(_set("lz4"), _set("pglz"))]
