"""The chargeback ledger: one row per device a claim held, with when (see ``ChargebackHolding``)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from inventory.models import Cluster


class ChargebackHolding(models.Model):
    """One device one claim held, as the syncs saw it (``claims.chargeback_data.record_holdings``).

    ``start``: ``status.allocation.allocationTimestamp`` (else the claim's creation, else the
    first sync that saw it).
    ``last_seen``: the latest sync that saw the claim hold the device. ``end``: None while
    held; when a sync no longer sees it (claim deleted or deallocated, another device) it is
    ``last_seen``: the last time it was seen allocated. ``share``: whole-GPU equivalents
    (``claims.chargeback.device_share``), ``kind`` gpu/mig/shared. Rows outlive the claim.
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
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "claim_uid", "driver", "pool", "device_name"], condition=Q(end__isnull=True),
                name="chargeback_open_holding_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.claim_name} {self.driver}/{self.pool}/{self.device_name}"
