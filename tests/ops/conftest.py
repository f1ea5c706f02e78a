"""Fixtures for the operations tests: role groups, users per role, synced real fixtures, a scraper."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES

MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


@pytest.fixture
def roles(db):
    call_command("ensure_roles", stdout=io.StringIO())


@pytest.fixture
def user_with_role(django_user_model, roles):
    def make(role: str):
        user = django_user_model.objects.create_user(f"{role}-user", password="pw-role-1")
        user.groups.add(Group.objects.get(name=role))
        return user

    return make


@pytest.fixture
def synced(sync_snapshot):
    """Three clusters from real fixtures through the real sync path (with after-sync hooks)."""
    sync_snapshot(MIG_CASE, name="mig")
    sync_snapshot(H100_SLICES, name="aicr")
    sync_snapshot(VKS_SLICES, name="vks")
    sync_snapshot(VKS_CLAIM, name="vks")


def scrape(client) -> dict[str, list]:
    """GET /metrics; metric family name -> samples."""
    resp = client.get("/metrics")
    assert resp.status_code == 200, resp.content[:300]
    assert resp["Content-Type"].startswith("text/plain")
    out: dict[str, list] = {}
    for fam in text_string_to_metric_families(resp.content.decode()):
        out.setdefault(fam.name, []).extend(fam.samples)
    return out
