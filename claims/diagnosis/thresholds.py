"""How long a condition must last before it is a finding (seconds)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    """``pending_seconds``: a pod's claim unallocated this long; ``allocated_not_reserved_seconds``:
    allocated without consumer this long; ``deleting_seconds``: ``deletionTimestamp`` this old;
    ``binding_timeout_seconds``: how long the scheduler waits for a device's binding conditions
    (the DynamicResources plugin's ``bindingTimeout``, 600 s by default) before it gives up."""

    pending_seconds: int = 300
    allocated_not_reserved_seconds: int = 300
    deleting_seconds: int = 300
    binding_timeout_seconds: int = 600
