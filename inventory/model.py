"""One cluster model: every record of one cluster, by kind and uid, kept current by changes.

Pure: no Django. A sync parses each object it reads once (``inventory.records``); the
records of what it created or updated and the uids it deleted are applied here, and the
analyses (diagnosis, readiness, the migration plan) read the model instead of reading and
parsing the stored cluster again. ``newest`` keeps each object's newest timestamp, the clock
of a snapshot (``inventory.snapshot.newest_timestamp``), so it too follows the changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from inventory.records import KubeRecord


@dataclass
class ClusterModel:
    records: dict[str, dict[str, KubeRecord]] = field(default_factory=dict)  # kind -> uid -> record
    newest: dict[str, str] = field(default_factory=dict)  # uid -> newest RFC 3339 timestamp in it

    def put(self, uid: str, record: KubeRecord, newest: str | None = None) -> None:
        """Store ``record`` under ``uid`` (the stored row's uid, which a record of an object
        without ``metadata.uid`` shares: both come from ``inventory.kube.identity``)."""
        self.records.setdefault(record.kind, {})[uid] = record
        if newest:
            self.newest[uid] = newest
        else:
            self.newest.pop(uid, None)

    def delete(self, kind: str, uids: Iterable[str]) -> None:
        of_kind = self.records.get(kind, {})
        for uid in uids:
            of_kind.pop(uid, None)
            self.newest.pop(uid, None)

    def apply(self, upserts: Iterable[tuple[str, KubeRecord, str | None]], deleted: Mapping[str, Iterable[str]]) -> None:
        """Apply one sync's changes: (uid, record, newest timestamp) of what it created or
        updated, then the uids it deleted per kind."""
        for uid, record, newest in upserts:
            self.put(uid, record, newest)
        for kind, uids in deleted.items():
            self.delete(kind, uids)

    def of_kinds(self, kinds: Iterable[str]) -> Iterator[KubeRecord]:
        for kind in sorted(set(kinds)):
            yield from self.records.get(kind, {}).values()

    def all(self) -> Iterator[KubeRecord]:
        for kind in sorted(self.records):
            yield from self.records[kind].values()

    def count(self) -> int:
        return sum(len(v) for v in self.records.values())

    def newest_timestamp(self) -> str | None:
        """The newest timestamp any object holds, compared on the second as
        ``inventory.snapshot.newest_timestamp`` does (UTC ``...Z`` text sorts in time order)."""
        return max(self.newest.values(), key=lambda v: v[:19], default=None)
