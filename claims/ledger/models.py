"""The chargeback ledger: one row per device a claim held, with when (see ``ChargebackHolding``)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from inventory.models import Cluster


class ChargebackHolding(models.Model):
    """One device one claim held, as the syncs saw it (``claims.chargeback_data.record_holdings``).

    ``start``: ``status.allocation.allocationTimestamp`` (else the claim's creation, else the
    first sync that saw it).
    ``end``: None while held: an open row is held until the cluster's latest ledger sighting
    (``LedgerSighting.at``), which the syncs move once per cluster, not once per row. When a
    sync no longer sees it (claim deleted or deallocated, another device) ``end`` and
    ``last_seen`` become that sighting's time before this sync: the last time it was seen
    allocated. ``last_seen`` of an open row is the sync that opened it (not kept current);
    read ``seen_until`` for the time a row was last seen held.
    ``share``: whole-GPU equivalents (``claims.chargeback.device_share``), ``kind``
    gpu/mig/shared. Rows outlive the claim.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="chargeback_holdings")
    claim_uid = models.TextField()
    namespace = models.TextField()
    claim_name = models.TextField()
    driver = models.TextField()
    pool = models.TextField()
    device_name = models.TextField()
    product = models.TextField(blank=True)
    kind = models.CharField(max_length=16)
    share = models.FloatField()
    start = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField()
    end = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["cluster", "end"], name="chargeback_cluster_end"),
            models.Index(fields=["cluster", "start"], name="chargeback_cluster_start"),
            # The open rows on the devices of a changed ResourceSlice's pool.
            models.Index(fields=["cluster", "pool"], condition=Q(end__isnull=True), name="chargeback_open_pool"),
            # A changed claim's open rows (the planner prefers it to (cluster, end), which reads them all).
            models.Index(fields=["cluster", "claim_uid", "end"], name="chargeback_cluster_claim"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "claim_uid", "driver", "pool", "device_name"], condition=Q(end__isnull=True),
                name="chargeback_open_holding_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.claim_name} {self.driver}/{self.pool}/{self.device_name}"


class LedgerSighting(models.Model):
    """The latest sync that recorded a cluster's ledger (``at``: its ``ledger_now``): every
    open ``ChargebackHolding`` of the cluster was seen held then. One row per cluster, moved
    by each sync that runs the ledger hook; no row: nothing recorded yet (the next sync
    recomputes the ledger from every claim)."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="chargeback_sighting")
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.cluster_id} seen {self.at.isoformat()}"


def seen_until(row_end, row_last_seen, sighting):
    """When a ledger row was last seen held: ``last_seen`` of a closed row (``end`` set), the
    cluster's sighting (``LedgerSighting.at``, None: none recorded) of an open one, else its
    own ``last_seen``."""
    if row_end is not None or sighting is None:
        return row_last_seen
    return sighting
