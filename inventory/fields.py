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
