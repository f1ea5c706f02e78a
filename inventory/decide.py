"""What a reconcile writes, decided on plain data: no Django, no database.

The reconcile (``inventory.reconcile``) reads what is stored, asks these functions what to
create, update and delete, and hands the rows to its writer (``inventory.writer``). Objects are
named by uid, stored rows by pk; a device by its key (driver, pool, device name), as an
allocation result names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .parse import Device, ResourceClaim, ResourceSlice

Key = tuple[str, str, str]  # (driver, pool, device name)
Pool = tuple[str, str]  # (driver, pool)
Row = dict[str, Any]
# No API server serves a longer name in an allocation result (drivers and devices <= 63, pools <= 253).
MAX_RESULT_NAME = 253


def split(existing: Mapping[str, tuple[int, str]], uids: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """(indexes of ``uids`` not stored: creates, (pk, index) of those stored: updates), from
    ``existing`` uid -> (pk, resourceVersion). The objects are new or changed already: one whose
    resourceVersion is the stored one never gets here."""
    creates: list[int] = []
    updates: list[tuple[int, int]] = []
    for i, uid in enumerate(uids):
        have = existing.get(uid)
        if have is None:
            creates.append(i)
        else:
            updates.append((have[0], i))
    return creates, updates


def vanished(stored: Mapping[str, tuple[int, str]], seen: Set[str], reported: Iterable[str] | None = None) -> dict[int, str]:
    """pk -> uid of the ``stored`` objects (uid -> (pk, resourceVersion)) a read removes.

    A kind listed completely (``reported`` None): every stored uid the read did not see. A kind
    read as a delta (a watch) is never complete: only the uids the API server reported deleted
    (``reported``) that are stored and were not seen again since."""
    if reported is None:
        return {stored[uid][0]: uid for uid in sorted(stored.keys() - seen)}
    return {stored[uid][0]: uid for uid in reported if uid in stored and uid not in seen}


@dataclass(frozen=True)
class PoolConflict:
    """A problem confined to one pool: it keeps that pool's slices from being deleted."""

    pool: Pool
    message: str


@dataclass(frozen=True)
class WantedDevices:
    """The device rows a batch of changed ResourceSlices publishes: key -> (slice pk, row)."""

    rows: dict[Key, tuple[int, Row]]
    conflicts: tuple[PoolConflict, ...] = ()
    incomplete: frozenset[int] = frozenset()  # slices not stored with all their devices


def wanted_devices(slices: Sequence[tuple[int, ResourceSlice]], row_of: Callable[[Device], Row]) -> WantedDevices:
    """The devices of ``slices`` ((pk, parsed slice) pairs) as rows (``row_of(device)``, its key
    and ``slice_id`` added). Pools as the scheduler sees them: of a key published twice, the
    slice of the newer pool generation wins, an older one is ignored; the same generation twice
    is a conflict of that pool alone (the first kept, the other slice incomplete)."""
    wanted: dict[Key, tuple[int, Row]] = {}
    generation = {pk: s.pool_generation for pk, s in slices}
    conflicts: list[PoolConflict] = []
    incomplete: set[int] = set()
    for slice_pk, s in slices:
        for d in s.devices:
            if d.key in wanted:
                held_by = wanted[d.key][0]
                if generation[held_by] > s.pool_generation:
                    continue
                if generation[held_by] == s.pool_generation:
                    conflicts.append(PoolConflict(d.key[:2], f"device {'/'.join(d.key)} published twice in pool generation {s.pool_generation} (slice {s.name}); kept the first"))
                    incomplete.add(slice_pk)
                    continue
            row = row_of(d)
            row.update(slice_id=slice_pk, driver=d.driver, pool=d.pool, name=d.name)  # key: ignored by updates
            wanted[d.key] = (slice_pk, row)
    return WantedDevices(wanted, tuple(conflicts), frozenset(incomplete))


def pools_to_search(wanted: Iterable[Key], stored: Mapping[Key, int], written: Set[Pool] | None = None) -> set[Pool]:
    """The pools where another slice may already hold one of the ``wanted`` devices: those of
    devices not ``stored`` under the changed slices. ``written``: when the cluster held no
    devices before the sync, only the pools it has written since can hold one."""
    pools = {k[:2] for k in wanted if k not in stored}
    return pools if written is None else pools & written


@dataclass(frozen=True)
class DeviceChanges:
    create: list[Row]
    update: list[tuple[int, Row]]  # (device pk, row); a device taken over moves to the row's slice_id
    delete: list[int]  # device pks
    conflicts: tuple[PoolConflict, ...] = ()
    incomplete: frozenset[int] = frozenset()  # slices not stored with all their devices
    # Wanted devices a slice of a newer generation holds: (key, device pk, holder slice pk, row).
    # Ignored while the holder lasts; ``take_over`` decides them once the read shows it gone.
    older: tuple[tuple[Key, int, int, Row], ...] = ()


def device_changes(wanted: Mapping[Key, tuple[int, Row]], stored: Mapping[Key, int],
                   elsewhere: Mapping[Key, tuple[int, int]], generation: Mapping[int, int]) -> DeviceChanges:
    """What to write for the ``wanted`` devices of changed slices (key -> (slice pk, row)).

    ``stored``: key -> pk of the devices the changed slices held; ``elsewhere``: key -> (device
    pk, its slice's pk) of wanted devices another slice holds; ``generation``: slice pk -> pool
    generation, of the changed slices and of those holders. Devices keep their pks (metrics and
    allocations stay): a stored one is updated, one no longer published deleted. Of a device
    held elsewhere, only the newest generation publishes: a re-created slice (new name, higher
    generation) takes it over, an older one waits while the holder lasts (``older``), the same
    generation is a conflict of that pool alone."""
    create: list[Row] = []
    update: list[tuple[int, Row]] = []
    left = dict(stored)
    conflicts: list[PoolConflict] = []
    incomplete: set[int] = set()
    older: list[tuple[Key, int, int, Row]] = []
    for key, (slice_pk, row) in wanted.items():
        if key in elsewhere:
            device_pk, holder = elsewhere[key]
            if generation.get(slice_pk, 0) > generation.get(holder, 0):
                update.append((device_pk, row))
            elif generation.get(slice_pk, 0) < generation.get(holder, 0):
                older.append((key, device_pk, holder, row))
            else:
                conflicts.append(PoolConflict(key[:2], f"device {'/'.join(key)} is also published by another slice of pool generation {generation.get(slice_pk, 0)}; kept the first"))
                incomplete.add(slice_pk)
            continue
        pk = left.pop(key, None)
        if pk is None:
            create.append(row)
        else:
            update.append((pk, row))
    return DeviceChanges(create, update, list(left.values()), tuple(conflicts), frozenset(incomplete), tuple(older))


@dataclass(frozen=True)
class TakeOver:
    update: list[tuple[int, Row]]  # (device pk, row): the device moves to the row's slice_id
    create: list[Row]  # devices whose holder no longer had them
    conflicts: tuple[PoolConflict, ...] = ()
    incomplete: frozenset[int] = frozenset()


def take_over(older: Iterable[tuple[Key, int, int, Row]], gone: Set[int], generation: Mapping[int, int],
              devices: Set[int]) -> TakeOver:
    """The ``older`` devices (``DeviceChanges.older``, of slice pk -> pool ``generation``) whose
    holder slice is ``gone`` from a complete read: the pool's newest slice is then theirs, so
    they publish, as the scheduler would see the pool after the holder's deletion. Of one key
    offered twice the newer generation wins, the same generation is a conflict of that pool.
    ``devices``: pks of the holders' devices still stored (a holder may have dropped one)."""
    best: dict[Key, tuple[int, Row]] = {}
    conflicts: list[PoolConflict] = []
    incomplete: set[int] = set()
    for key, device_pk, holder, row in older:
        if holder not in gone:
            continue
        have = best.get(key)
        gen = generation.get(row["slice_id"], 0)
        if have is not None:
            had = generation.get(have[1]["slice_id"], 0)
            if had > gen:
                continue
            if had == gen:
                conflicts.append(PoolConflict(key[:2], f"device {'/'.join(key)} published twice in pool generation {gen}; kept the first"))
                incomplete.add(row["slice_id"])
                continue
        best[key] = (device_pk, row)
    update = [(pk, row) for pk, row in best.values() if pk in devices]
    create = [row for pk, row in best.values() if pk not in devices]
    return TakeOver(update, create, tuple(conflicts), frozenset(incomplete))


@dataclass(frozen=True)
class ClaimChildren:
    """The allocation result and reservation rows of new and changed ResourceClaims."""

    results: list[Row]
    reservations: list[Row]
    errors: tuple[str, ...] = ()
    unread: frozenset[int] = frozenset()  # claims stored without one of their results
    nodes: frozenset[str] = frozenset()  # nodes of the devices allocated


def claim_children(claims: Sequence[tuple[int, ResourceClaim]], devices: Mapping[Key, tuple[int, str]], cluster_pk: int) -> ClaimChildren:
    """Rows of the results and consumers (``reservedFor``) of ``claims`` ((pk, parsed claim)
    pairs). ``devices``: key -> (pk, node name) of the stored devices they may name; a result
    whose device is not stored yet points at none (``finish`` resolves it later)."""
    results: list[Row] = []
    reservations: list[Row] = []
    errors: list[str] = []
    unread: set[int] = set()
    nodes: set[str] = set()
    for pk, c in claims:
        for r in c.results:
            if max(len(r.driver), len(r.pool), len(r.device)) > MAX_RESULT_NAME:
                errors.append(f"allocation result {r.driver[:63]}/{r.pool[:63]}/{r.device[:63]}: names longer than {MAX_RESULT_NAME} characters")
                unread.add(pk)
                continue
            device = devices.get((r.driver, r.pool, r.device))
            if device is not None:
                nodes.add(device[1])
            results.append({
                "claim_id": pk, "cluster_id": cluster_pk, "request": r.request, "driver": r.driver,
                "pool": r.pool, "device_name": r.device, "device_id": device[0] if device else None,
            })  # fmt: skip
        for ref in c.reserved_for:
            reservations.append({"claim_id": pk, "resource": ref.resource, "name": ref.name, "uid": ref.uid})
    return ClaimChildren(results, reservations, tuple(errors), frozenset(unread), frozenset(nodes))
