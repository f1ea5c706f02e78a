"""The reconcile's writer: the one place that knows how its rows reach the database.

The reconcile decides which rows to create, update and delete (``inventory.decide``); a
``Writer`` stores them. It alone knows that a batch is stored in a savepoint and, when the
database refuses it, row by row with each refused row reported by name (``errors``); that on
PostgreSQL a batch is sent in a COPY left open while the next one is prepared
(``bulk.DeferredInserts``); and that parents whose children are built at once take their keys
from the table's sequence there (``bulk.next_ids``), elsewhere are looked up by uid once stored.
``inventory.bulk`` stays the low-level row writer underneath.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

from .bulk import STORE_ERRORS, DeferredInserts, delete_pks, next_ids, save_rows

Describe = Callable[[Any], str]


class Writer:
    def __init__(self, later: DeferredInserts | None = None, errors: list[str] | None = None) -> None:
        # Batches without child rows are stored while the next ones are prepared (PostgreSQL).
        self.later = later or DeferredInserts()
        self.errors = [] if errors is None else errors  # one line per row the database refused
        self._unstored: dict[str, set[int]] = defaultdict(set)  # kind -> keys given to rows not stored

    def store(self, model: type, rows: list[Any], describe: Describe, update: list[str] | None = None) -> set[int]:
        """Insert (or, with ``update`` columns, update ``(pk, row)`` pairs) ``rows`` in a
        savepoint. When the batch cannot be stored (a value the database refuses: a number out
        of range, text it cannot encode), store it row by row and report each row that cannot
        be, named by ``describe(row)``, instead of failing the sync. Returns their indexes."""
        if not rows:
            return set()
        try:
            save_rows(model, rows, update)
            return set()
        except STORE_ERRORS:
            return self._one_by_one(model, rows, describe, update)

    def store_later(self, model: type, rows: list[dict[str, Any]], describe: Describe, then: Callable[[set[int]], None]) -> None:
        """Insert ``rows`` as ``store`` does, its end awaited only when the connection is next
        needed (``bulk.DeferredInserts``); ``then(indexes of rows not stored)`` runs after."""

        def done(exc: Exception | None) -> None:
            then(set() if exc is None else self._one_by_one(model, rows, describe))

        self.later.insert(model, rows, done)

    def create_parents(self, kind: str, among: QuerySet, rows: list[dict[str, Any]], describe: Describe,
                       keyed: Callable[[dict[int, int]], None], then: Callable[[set[int]], None]) -> None:
        """Insert new ``rows`` (each with its ``uid``) of a kind whose child rows are built
        next: ``keyed({index: pk})`` gets the keys of the rows stored or being stored as soon
        as they are known, then ``then(indexes of rows not stored)`` runs once they are.

        PostgreSQL: the keys come from the sequence, so the children are built while the
        server stores the rows; a refused row's key is ``refused(kind)``, for its children to
        be skipped. Elsewhere the rows are stored first and their keys looked up in ``among``
        (0 for one not found)."""
        if self.later.deferring and rows:
            pks = next_ids(among.model, len(rows))
            for row, pk in zip(rows, pks, strict=True):
                row["id"] = pk
            keyed(dict(enumerate(pks)))

            def stored(failed: set[int]) -> None:
                self._unstored[kind].update(pks[n] for n in failed)
                then(failed)

            self.store_later(among.model, rows, describe, stored)
            return
        failed = self.store(among.model, rows, describe)
        kept = [n for n in range(len(rows)) if n not in failed]
        pk_of: dict[str, int] = {}
        # Chunks of 400: SQLite caps the parameters of one statement (999 before 3.32).
        uids = [rows[n]["uid"] for n in kept]
        for i in range(0, len(uids), 400):
            pk_of.update(among.filter(uid__in=uids[i : i + 400]).values_list("uid", "pk"))
        keyed({n: pk_of.get(rows[n]["uid"], 0) for n in kept})
        then(failed)

    def refused(self, kind: str) -> set[int]:
        """Keys given to new rows of ``kind`` the database refused (``create_parents``), once
        every insert under way has ended: their children must not be stored."""
        self.later.settle()
        return self._unstored[kind]

    def delete(self, model: type, pks: list[int]) -> None:
        delete_pks(model, pks)

    def settle(self) -> None:
        """End the insert under way, if any, and run what waits on it."""
        self.later.settle()

    def _one_by_one(self, model: type, rows: list[Any], describe: Describe, update: list[str] | None = None) -> set[int]:
        failed: set[int] = set()
        for i, row in enumerate(rows):
            try:
                save_rows(model, [row], update)
            except STORE_ERRORS as exc:
                failed.add(i)
                reason = (str(exc).splitlines() or [""])[0][:200]
                self.errors.append(f"{describe(row)}: cannot be stored ({type(exc).__name__}: {reason})")
        return failed
