"""What one sync changed: created, updated and deleted uids per kind.

Pure: no Django. The reconcile fills a ``ChangeSet`` as it writes; the analyses after it ask
``touches(kinds)`` to decide whether what they derive can have moved, so an unchanged
dependency costs nothing. A read with errors reports them in the change set too
(``incomplete``): what such a read did not see may have changed without a trace.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class ChangeSet:
    created: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    updated: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    deleted: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    incomplete: bool = False  # the read had errors: not every change may be listed

    def add(self, what: str, kind: str, uids: Iterable[str]) -> None:
        getattr(self, what)[kind].update(uids)

    def kinds(self) -> set[str]:
        return {k for part in (self.created, self.updated, self.deleted) for k, uids in part.items() if uids}

    def uids(self, kind: str) -> set[str]:
        """Every uid of ``kind`` created, updated or deleted."""
        return self.created.get(kind, set()) | self.updated.get(kind, set()) | self.deleted.get(kind, set())

    def touches(self, kinds: Iterable[str]) -> bool:
        """Did anything of ``kinds`` change (or may it have, after a read with errors)?"""
        return self.incomplete or not self.kinds().isdisjoint(kinds)

    def __bool__(self) -> bool:
        return self.incomplete or bool(self.kinds())

    def summary(self) -> dict[str, dict[str, int]]:
        """kind -> {created, updated, deleted} counts, for logs and run details."""
        out: dict[str, dict[str, int]] = {}
        for kind in sorted(self.kinds()):
            out[kind] = {w: len(getattr(self, w).get(kind, ())) for w in ("created", "updated", "deleted")}
        return out
