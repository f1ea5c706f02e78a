"""Fast INSERT and UPDATE of many rows for the sync, below the ORM's per-object cost.

A full sync of a large fleet writes tens of thousands of rows. ``bulk_create`` and
``bulk_update`` spent most of that sync building model instances, preparing every field of
every row and, for updates, compiling one ``CASE WHEN`` per row and field. Here rows are
plain dicts keyed by attribute name (``cluster_id``, ``raw`` ...), values are converted once
per column type, and the statement is sent with ``executemany`` (SQLite) or ``COPY``
(PostgreSQL).

JSON columns take a Python value (encoded here) or a ``RawJSON`` string (text already in
JSON form, e.g. an object's exact text from the API response), stored as is.
"""

from __future__ import annotations

import itertools
import operator
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

import msgspec
from django.db import DataError, IntegrityError, connection, models, transaction

from .fields import clip_text

BATCH = 2000
# What storing a batch can raise for a value a row holds (not for a broken database).
STORE_ERRORS = (DataError, IntegrityError, ValueError, UnicodeError, OverflowError)


class RawJSON(str):
    """JSON text to store unchanged in a JSON column (must be a valid JSON document)."""

    __slots__ = ()


_encode = msgspec.json.Encoder().encode  # C encoder: several times json.dumps's speed


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, RawJSON):
        return str(value)
    if not value and isinstance(value, (dict, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return _encode(value).decode("utf-8")


def _without_nul(value: Any) -> Any:
    """``value`` with every NUL character in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def _json_pg(value: Any) -> str | None:
    # PostgreSQL's jsonb and text refuse NUL, which JSON strings may hold (a ConfigMap value,
    # an annotation): store U+FFFD in its place rather than lose the object or the sync.
    text = _json(value)
    if text is not None and "\\u0000" in text:
        text = _encode(_without_nul(msgspec.json.decode(text))).decode("utf-8")
    return text


def _text_pg(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _same(value: Any) -> Any:
    return value


def _converter(field: models.Field) -> Callable[[Any], Any]:
    """Python value -> value for the database driver, the cheapest way that is still exact."""
    pg = connection.vendor == "postgresql"
    if isinstance(field, models.JSONField):
        return _json_pg if pg else _json
    if isinstance(field, (models.DateTimeField, models.DateField, models.DecimalField, models.UUIDField)):
        return lambda v, f=field: None if v is None else f.get_db_prep_save(v, connection)
    clip = getattr(field, "clip", None)  # fields.ClusterTextField: cut long values to fit an index
    if clip:
        return (lambda v, n=clip: _text_pg(clip_text(v, n))) if pg else (lambda v, n=clip: clip_text(v, n))
    if pg and isinstance(field, (models.CharField, models.TextField)):
        return _text_pg
    return _same  # str, int, bool, None and foreign-key ids go to the driver as they are


def _columns(model: type[models.Model], names: Sequence[str] | None = None) -> list[models.Field]:
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    if names is None:
        return fields
    by_name = {f.attname: f for f in fields} | {f.name: f for f in fields}
    return [by_name[n] for n in names]


def insert_rows(model: type[models.Model], rows: Iterable[dict[str, Any]]) -> int:
    """INSERT ``rows`` (dicts of attribute name -> value) into ``model``'s table.

    Columns missing from a row take the field's default. Returns the number of rows written.
    Raises ``ValueError`` for a key that is no column (before sending that batch), and
    Django's ``IntegrityError`` like the ORM would (e.g. a duplicate natural key).
    """
    rows = list(rows)
    if not rows:
        return 0
    if connection.vendor == "postgresql":
        return _copy(model, *_insert_plan(model, rows))
    sql, _, _, values, _ = _insert_plan(model, rows, copy=False)
    return _executemany(sql, map(values, rows))


def _insert_plan(model: type[models.Model], rows: list[dict[str, Any]], copy: bool = True) -> tuple[str, list[dict[str, Any]], set[str], Callable[[dict[str, Any]], tuple[Any, ...]], list[str] | None]:
    """(COPY or INSERT statement, rows, column attnames, row -> values in statement order,
    the column types of a binary COPY, else None)."""
    first = rows[0]
    fields = _columns(model)
    if model._meta.pk.attname in first:  # keys given by the caller (``next_ids``)
        fields = [model._meta.pk, *fields]
    # Columns the first row names, then the others with their defaults converted once: rows
    # built by one function share their keys, so each row costs one pass over its own values.
    given = [f for f in fields if f.attname in first]
    rest = [f for f in fields if f.attname not in first]
    conv = [(f.attname, _converter(f)) for f in given]
    tail = tuple(_converter(f)(f.get_default()) for f in rest)
    width = len(given)
    pick = operator.itemgetter(*[name for name, _ in conv]) if width > 1 else (lambda row: (row[conv[0][0]],))
    # Only JSON and date columns need converting; the rest go to the driver as picked.
    convert = [(i, to_db) for i, (_, to_db) in enumerate(conv) if to_db is not _same]

    def values(row: dict[str, Any]) -> tuple[Any, ...]:
        if len(row) == width:
            try:
                picked = list(pick(row))
            except KeyError:
                pass
            else:
                for i, to_db in convert:
                    picked[i] = to_db(picked[i])
                return (*picked, *tail)
        full = {f.attname: f.get_default() for f in fields} | row
        extra = set(full) - {f.attname for f in fields}
        if extra:
            raise ValueError(f"{model.__name__} has no column(s) {sorted(extra)}")
        return (*[to_db(full[name]) for name, to_db in conv], *[_converter(f)(full[f.attname]) for f in rest])

    order = [*given, *rest]
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(f.column) for f in order)
    if copy and _binary(order):
        sql = f"COPY {table} ({cols}) FROM STDIN WITH (FORMAT BINARY)"  # names from model metadata
        return sql, rows, {f.attname for f in fields}, values, [_pg_type(f) for f in order]
    if copy:
        sql = f"COPY {table} ({cols}) FROM STDIN"  # names from model metadata
    else:
        sql = f"INSERT INTO {table} ({cols}) VALUES ({', '.join(['%s'] * len(order))})"  # noqa: S608
    return sql, rows, {f.attname for f in fields}, values, None


def _binary(fields: Sequence[models.Field]) -> bool:
    """COPY in binary format: tables holding bytes (the stored model's msgpack chunks), whose
    text COPY would hex-escape every byte (4x slower for 70 MB). Only for plain column types
    (no JSON, whose binary form the driver would need told apart from text)."""
    return any(isinstance(f, models.BinaryField) for f in fields) and not any(
        isinstance(f, (models.JSONField, models.DecimalField, models.UUIDField)) for f in fields
    )


def _pg_type(field: models.Field) -> str:
    """The column's type name as the driver knows it ("varchar(100)" -> "varchar")."""
    return field.db_type(connection).split("(")[0].strip()


def _executemany(sql: str, params: Iterable[tuple[Any, ...]]) -> int:
    """Send ``sql`` for every parameter tuple, ``BATCH`` at a time; returns the count sent.
    Each batch is built (converted) in full before it is sent: a bad row raises with that
    batch unsent."""
    written = 0
    with connection.cursor() as cur:
        for batch in _batches(params):
            cur.executemany(sql, batch)
            written += len(batch)
    return written


def _batches(params: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    # itertools.batched arrives with Python 3.12; the project runs on 3.11.
    it = iter(params)
    while batch := list(itertools.islice(it, BATCH)):
        yield batch


def _copy(model: type[models.Model], sql: str, rows: list[dict[str, Any]], columns: set[str],
          values: Callable[[dict[str, Any]], tuple[Any, ...]], types: list[str] | None) -> int:
    """COPY ``rows`` in one stream and wait for the server to store them (``_open_copy``)."""
    with _open_copy(model, sql, rows, columns, values, types):  # closing it ends the COPY
        pass
    return len(rows)


def _open_copy(model: type[models.Model], sql: str, rows: list[dict[str, Any]], columns: set[str],
               values: Callable[[dict[str, Any]], tuple[Any, ...]], types: list[str] | None = None) -> ExitStack:
    """Send ``rows`` in one COPY stream and return it still open: closing the returned stack
    ends the COPY and raises what the server refused. COPY is several times faster than
    INSERTs, and the server stores rows while the next ones are converted. Unknown keys are
    refused before anything is sent; a savepoint keeps the caller's transaction usable if a row
    fails, and driver errors become Django's (``IntegrityError``...), as from the ORM."""
    for row in rows:
        if not row.keys() <= columns:
            raise ValueError(f"{model.__name__} has no column(s) {sorted(set(row) - columns)}")
    stack = ExitStack()
    try:
        stack.enter_context(transaction.atomic())
        stack.enter_context(connection.wrap_database_errors)
        cur = stack.enter_context(connection.cursor())
        copy = stack.enter_context(cur.cursor.copy(sql))
        if types is not None:  # a binary COPY declares its columns' types
            copy.set_types(types)
        for row in rows:
            copy.write_row(values(row))
    except BaseException:
        # End the COPY (CopyFail) and roll the savepoint back, raising Django's error if the
        # driver's was converted on the way out.
        if not stack.__exit__(*sys.exc_info()):
            raise
    return stack


class DeferredInserts:
    """Inserts whose end is awaited only when the connection is next needed.

    On PostgreSQL, ``insert`` sends a batch's rows in a COPY and returns without waiting for
    the server to store them; the COPY is ended just before the next query on the connection
    (an ``execute_wrapper``), or by ``settle``, or when the block ends. The server (its own
    process) stores one batch while this one prepares the next. Elsewhere ``insert`` writes at
    once. Use as a context manager inside the caller's transaction; outside one, inserts are
    not deferred, nor are those made from an atomic block opened inside the block's own
    transaction (that block could end, or roll back, with the COPY still open). At most one
    insert is open at a time.
    """

    def __init__(self) -> None:
        self._open: tuple[ExitStack, Callable[[Exception | None], None]] | None = None
        self._hook: Any = None
        self._depth = 0  # atomic blocks open when the block was entered

    def __enter__(self) -> DeferredInserts:
        if connection.vendor == "postgresql" and connection.in_atomic_block:
            self._depth = len(connection.atomic_blocks)
            self._hook = connection.execute_wrapper(self._before_query)
            self._hook.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.settle()
            elif self._open is not None:
                stack, _ = self._open
                self._open = None
                stack.__exit__(exc_type, exc, tb)  # CopyFail and savepoint rollback
        finally:
            if self._hook is not None:
                self._hook.__exit__(exc_type, exc, tb)
                self._hook = None

    def _before_query(self, execute, sql, params, many, context):
        self.settle()
        return execute(sql, params, many, context)

    def insert(self, model: type[models.Model], rows: list[dict[str, Any]], done: Callable[[Exception | None], None]) -> None:
        """Insert ``rows`` (as ``insert_rows``) in a savepoint; ``done(None)`` runs once they
        are stored, ``done(error)`` when the batch could not be (nothing of it is stored):
        one of ``STORE_ERRORS``. Other errors propagate (from ``insert``, ``settle`` or any
        later query)."""
        self.settle()
        if self._hook is None or not rows or len(connection.atomic_blocks) != self._depth:
            _report(done, lambda: save_rows(model, rows))
            return
        try:
            stack = _open_copy(model, *_insert_plan(model, rows))
        except STORE_ERRORS as exc:
            done(exc)
            return
        self._open = (stack, done)

    @property
    def deferring(self) -> bool:
        """True when ``insert`` returns before the rows are stored (PostgreSQL, in the block)."""
        return self._hook is not None

    def settle(self) -> None:
        """End the open insert, if any, and run its ``done``."""
        if self._open is None:
            return
        stack, done = self._open
        self._open = None  # done() may query: this hook must let those through
        _report(done, stack.close)


def _report(done: Callable[[Exception | None], None], write: Callable[[], object]) -> None:
    """Run ``write``; tell ``done`` what it raised of ``STORE_ERRORS``, or None."""
    try:
        write()
    except STORE_ERRORS as exc:
        done(exc)
    else:
        done(None)


def save_rows(model: type[models.Model], rows: list[Any], update: Sequence[str] | None = None) -> None:
    """``insert_rows(model, rows)`` (or, with ``update`` columns, ``update_rows`` of its
    ``(pk, row)`` pairs) in a savepoint: a refused batch leaves the caller's transaction usable."""
    with transaction.atomic():
        if update is None:
            insert_rows(model, rows)
        else:
            update_rows(model, update, rows)


def next_ids(model: type[models.Model], n: int) -> list[int]:
    """``n`` new primary keys of ``model`` taken from its table's sequence (PostgreSQL only):
    rows inserted with them can get child rows before the server has stored them."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, n],
        )
        return [row[0] for row in cur.fetchall()]


def update_rows(model: type[models.Model], names: Sequence[str], rows: Iterable[tuple[int, dict[str, Any]]]) -> int:
    """UPDATE columns ``names`` of the rows given as ``(pk, values dict)``; returns rows sent."""
    fields = _columns(model, names)
    if not fields:
        return 0
    conv = [(f.attname, _converter(f)) for f in fields]
    table = connection.ops.quote_name(model._meta.db_table)
    sets = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in fields)
    pk = connection.ops.quote_name(model._meta.pk.column)
    sql = f"UPDATE {table} SET {sets} WHERE {pk} = %s"  # noqa: S608 - names from model metadata
    return _executemany(sql, ((*(to_db(row[name]) for name, to_db in conv), key) for key, row in rows))


def delete_pks(model: type[models.Model], pks: Sequence[int]) -> int:
    """DELETE rows by primary key through the ORM (so cascades and signals still apply)."""
    deleted = 0
    for i in range(0, len(pks), BATCH // 2):
        deleted += model.objects.filter(pk__in=pks[i : i + BATCH // 2]).delete()[1].get(model._meta.label, 0)
    return deleted
