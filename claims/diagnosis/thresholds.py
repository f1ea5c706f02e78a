"""How long a condition must last before it is a finding (seconds)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    """``pending_seconds``: a pod's claim unallocated this long; ``allocated_not_reserved_seconds``:
    allocated without consumer this long; ``deleting_seconds``: ``deletionTimestamp`` this old."""

    pending_seconds: int = 300
    allocated_not_reserved_seconds: int = 300
    deleting_seconds: int = 300
