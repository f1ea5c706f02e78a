"""Model fields of the inventory."""

from __future__ import annotations

from django.db import models


class JSONTextField(models.JSONField):
    """JSON read whole and never searched by key: PostgreSQL ``json`` (the text, checked to be
    JSON) instead of ``jsonb``. Other databases store JSON as text anyway.

    ``jsonb`` parses every value into a binary tree on write, which bought nothing for these
    columns and was half the server's cost of a full sync (a 1,000-node fleet's slices
    measured 0.23 s as jsonb, 0.10 s as json). An object's ``raw`` also stays byte for byte
    what the API sent. Values come back through Django's own JSON decoding: psycopg hands
    ``json`` over as text (``text_json_loader``), as Django has it do for ``jsonb``.
    """

    def db_type(self, connection):
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)


def text_json_loader(sender, connection, **kwargs) -> None:
    """``connection_created`` receiver: psycopg returns ``json`` columns as text.

    Left to psycopg, a ``json`` value arrives decoded, and a JSON string value would then be
    decoded a second time by ``JSONField.from_db_value``."""
    if connection.vendor != "postgresql":
        return
    from psycopg.types.string import TextLoader

    connection.connection.adapters.register_loader("json", TextLoader)


# PostgreSQL refuses a btree index entry over about 2,700 bytes: 512 characters are at most
# 2,048 bytes of UTF-8, leaving room for the other columns of the index.
INDEX_CLIP = 512


def clip_text(value, limit: int):
    """``value`` cut to ``limit`` characters, the last one "…" so the cut shows (non-strings
    and shorter strings unchanged)."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


class ClusterTextField(models.TextField):
    """Text read from a cluster in an indexed column (a node name, a GPU product, a UUID).

    A text column, so no length refuses the row; values longer than ``clip`` characters are
    stored cut, ending in "…", because an index entry is bounded (``INDEX_CLIP``). ``bulk``
    writes apply the same cut (``clip_text``)."""

    def __init__(self, *args, clip: int = INDEX_CLIP, **kwargs) -> None:
        self.clip = clip
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.clip != INDEX_CLIP:
            kwargs["clip"] = self.clip
        return name, path, args, kwargs

    def get_prep_value(self, value):
        return clip_text(super().get_prep_value(value), self.clip)
