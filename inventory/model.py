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
    # Bumped by every change: what is derived from the model (a diagnosis state) names the
    # version it was made from, so the next change can patch it instead of rebuilding it.
    version: int = field(default=0, compare=False)
    # The newest timestamp, kept as changes come (None: to be found again by a scan).
    _newest_max: str | None = field(default=None, compare=False, repr=False)
    _newest_known: bool = field(default=False, compare=False, repr=False)

    def put(self, uid: str, record: KubeRecord, newest: str | None = None) -> None:
        """Store ``record`` under ``uid`` (the stored row's uid, which a record of an object
        without ``metadata.uid`` shares: both come from ``inventory.kube.identity``)."""
        self.records.setdefault(record.kind, {})[uid] = record
        self._newest_gone(uid)
        if newest:
            self.newest[uid] = newest
            if self._newest_known and (self._newest_max is None or newest[:19] > self._newest_max[:19]):
                self._newest_max = newest
        else:
            self.newest.pop(uid, None)
        self.version += 1

    def delete(self, kind: str, uids: Iterable[str]) -> None:
        of_kind = self.records.get(kind, {})
        for uid in uids:
            of_kind.pop(uid, None)
            self._newest_gone(uid)
            self.newest.pop(uid, None)
        self.version += 1

    def _newest_gone(self, uid: str) -> None:
        old = self.newest.get(uid)
        if old is not None and self._newest_known and self._newest_max is not None and old[:19] >= self._newest_max[:19]:
            self._newest_known = False  # the newest may have gone: scan on the next question

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
        if not self._newest_known:
            self._newest_max = max(self.newest.values(), key=lambda v: v[:19], default=None)
            self._newest_known = True
        return self._newest_max
