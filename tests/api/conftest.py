"""Fixtures for the API tests: real-shaped clusters synced with their after-sync hooks
(diagnosis, readiness), a token, and a client that sends it."""

from __future__ import annotations

import pytest

from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES

CAPACITY_CASE = CASES / "capacity-exhausted-all-gpus-allocated/snapshot"
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"
ORPHAN_CASE = CASES / "orphan-claim-reserved-for-deleted-pod/snapshot"


@pytest.fixture
def fleet(sync_snapshot):
    """Four clusters from real objects: whole GPUs held by claims, MIG instances, a vGPU claim
    reserved by its pod, and a claim reserved for a pod that is gone."""
    sync_snapshot(CAPACITY_CASE, name="capacity")
    sync_snapshot(MIG_CASE, name="mig")
    sync_snapshot(H100_SLICES, name="aicr")
    sync_snapshot(VKS_SLICES, name="vks")
    sync_snapshot(VKS_CLAIM, name="vks")
    sync_snapshot(ORPHAN_CASE, name="orphan")


@pytest.fixture
def token(viewer):
    from rest_framework.authtoken.models import Token

    return Token.objects.create(user=viewer)


@pytest.fixture
def api(token):
    """A DRF test client that authenticates with the viewer's token only (no session)."""
    from rest_framework.test import APIClient

    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return c
