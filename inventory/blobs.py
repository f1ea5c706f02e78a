"""Rows with large ``bytea`` columns (the stored model's and the overview's chunks), read as
PostgreSQL sends them in binary.

Through the ORM a ``bytea`` value comes back as hex text: twice the bytes on the wire, an
encode on the server and a decode here (1,000 nodes: 66 MiB of model chunks, 0.6 s; in
binary 0.2 s). The query is still the ORM's, run through Django's cursor wrapper (counted like any
other; logged as the cursor's DECLARE, with server-side placeholders); only the result format
differs. Other databases, and PostgreSQL behind a transaction pooler
(``DISABLE_SERVER_SIDE_CURSORS``): the ORM.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet

_names = itertools.count()


def rows(qs: QuerySet, fields: tuple[str, ...], batch: int) -> Iterator[tuple[Any, ...]]:
    """``qs.values_list(*fields)``, streamed ``batch`` rows at a time (a server-side cursor on
    PostgreSQL, in binary; ``iterator(chunk_size=batch)`` elsewhere)."""
    values = qs.values_list(*fields)
    conn = connections[qs.db]
    if conn.vendor != "postgresql" or conn.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"):
        yield from values.iterator(chunk_size=batch)
        return
    import psycopg
    from psycopg import pq

    try:
        sql, params = values.query.sql_with_params()
    except EmptyResultSet:  # ``__in=[]``: the ORM answers no rows without asking
        return
    conn.ensure_connection()
    raw = conn.connection
    # Outside a transaction a cursor must outlive the statement's own (as Django's are).
    cursor = psycopg.ServerCursor(raw, f"claimscope_blobs_{next(_names)}", withhold=raw.autocommit)
    cursor.format = pq.Format.BINARY
    cursor.itersize = batch
    wrapped = conn.make_debug_cursor(cursor) if conn.queries_logged else conn.make_cursor(cursor)
    with wrapped:
        wrapped.execute(sql, params)
        yield from wrapped  # its iteration turns a FETCH's errors into Django's, as the ORM's does
