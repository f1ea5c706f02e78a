"""One sync per cluster at a time: a lease row in the database (``SyncLease``).

Taking the lease is ONE conditional UPDATE (``holder`` empty, or expired, or the queued marker
this sync was handed), so on PostgreSQL and SQLite alike two workers never both hold it,
without a transaction held for the length of a sync. The lease expires ``ttl`` seconds after
it was taken (the Celery task's hard time limit and a margin): a worker killed while holding
it blocks its cluster at most that long; a holder on this host whose process is gone frees
it at once.

Beat's dispatcher marks a lease ``queued:<token>`` when it enqueues a sync and hands the task
the token, so no second sync is queued while one waits in the queue or runs; the task takes
the lease over from its own marker.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from .models import Cluster, SyncLease
from .sources import SourceError

QUEUED = "queued:"


class SyncBusy(SourceError):
    """Another sync of the cluster holds the lease; this one did not start."""


def _setting(name: str, default: float) -> float:
    # Django's setting (config/settings.py), else ``default``.
    return float(getattr(settings, name, default))


def _ttl() -> float:
    return _setting("SYNC_LEASE_SECONDS", getattr(settings, "CELERY_TASK_TIME_LIMIT", 300) + 60)


def new_holder() -> str:
    """``host:pid:thread:random``: unique per acquisition, and says which process holds it."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


def _holder_gone(holder: str) -> bool:
    """Is ``holder`` a process of this host that has ended?"""
    parts = holder.split(":")
    if holder.startswith(QUEUED) or len(parts) < 2 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _row(cluster_id: int) -> None:
    if not SyncLease.objects.filter(cluster_id=cluster_id).exists():
        try:
            with transaction.atomic():
                SyncLease.objects.create(cluster_id=cluster_id)
        except IntegrityError:
            pass  # another worker made it first


def try_acquire(cluster_id: int, holder: str, *, ttl: float | None = None, take_over: str = "") -> bool:
    """Take the lease of one cluster for ``holder`` if it is free, expired, held by a dead
    process of this host, or held by ``take_over`` (this sync's queued marker). A database
    too busy to answer (SQLite while another sync writes) counts as "not now"."""
    try:
        return _try_acquire(cluster_id, holder, ttl, take_over)
    except OperationalError as exc:
        if "locked" in str(exc):
            return False
        raise


def _try_acquire(cluster_id: int, holder: str, ttl: float | None, take_over: str) -> bool:
    _row(cluster_id)
    now = timezone.now()
    free = Q(holder="") | Q(expires_at__lt=now)
    if take_over:
        free |= Q(holder=take_over)
    until = now + timedelta(seconds=ttl if ttl is not None else _ttl())
    if SyncLease.objects.filter(free, cluster_id=cluster_id).update(holder=holder, expires_at=until):
        return True
    current = SyncLease.objects.filter(cluster_id=cluster_id).values_list("holder", flat=True).first() or ""
    if current and _holder_gone(current):
        return bool(SyncLease.objects.filter(cluster_id=cluster_id, holder=current).update(holder=holder, expires_at=until))
    return False


def release(cluster_id: int, holder: str) -> None:
    SyncLease.objects.filter(cluster_id=cluster_id, holder=holder).update(holder="", expires_at=None)


def renew(cluster_id: int, holder: str, ttl: float | None = None) -> bool:
    """Extend a lease this holder has (the long-running watch mode); False if it lost it."""
    until = timezone.now() + timedelta(seconds=ttl if ttl is not None else _ttl())
    return bool(SyncLease.objects.filter(cluster_id=cluster_id, holder=holder).update(expires_at=until))


def holder_of(cluster_id: int) -> str:
    """Who holds the lease now ("" when free or expired)."""
    row = SyncLease.objects.filter(cluster_id=cluster_id).values_list("holder", "expires_at").first()
    if not row or not row[0] or (row[1] is not None and row[1] < timezone.now()):
        return ""
    return row[0]


@contextmanager
def sync_lease(cluster: Cluster, *, wait: float | None = None, take_over: str = "") -> Iterator[str]:
    """Hold the lease of ``cluster`` for the block. Waits up to ``wait`` seconds (default
    ``SYNC_LOCK_WAIT_SECONDS``) for another sync to end, then raises ``SyncBusy`` naming who
    holds it. Yields the holder name."""
    holder = new_holder()
    wait = _setting("SYNC_LOCK_WAIT_SECONDS", 5.0) if wait is None else wait
    end = time.monotonic() + wait
    while not try_acquire(cluster.pk, holder, take_over=take_over):
        if time.monotonic() >= end:
            other = holder_of(cluster.pk)
            who = "beat's queue (a queued sync)" if other.startswith(QUEUED) else (other.rsplit(":", 2)[0] or "another worker")
            raise SyncBusy(f"cluster {cluster.name} is already being synced by {who}; this sync was not started "
                           f"(waited {wait:g} s)")
        time.sleep(min(0.2, max(0.01, end - time.monotonic())))
    try:
        yield holder
    finally:
        release(cluster.pk, holder)


def mark_queued(cluster_id: int, ttl: float | None = None) -> str:
    """For beat's dispatcher: take the lease as ``queued:<token>`` (returns the token, which
    the queued task takes over), or "" when a sync is queued or running already."""
    token = QUEUED + uuid.uuid4().hex
    return token if try_acquire(cluster_id, token, ttl=ttl) else ""
