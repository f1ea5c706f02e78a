"""Fixtures for the migration pages: clusters synced from the migration fixtures, operators."""

from __future__ import annotations

import pytest
from migration_fixtures import WORKLOADS

from tests.conftest import H100_SLICES


@pytest.fixture
def legacy(sync_snapshot):
    """A device-plugin cluster synced (with the after-sync hooks) from tests/fixtures/migration/workloads."""
    from inventory.models import Cluster

    run = sync_snapshot(WORKLOADS, name="legacy")
    assert run.status == "ok", run.error
    return Cluster.objects.get(name="legacy")


@pytest.fixture
def dra_only(sync_snapshot):
    """A cluster with DRA slices and no device-plugin workloads (real aicr H100 slices)."""
    from inventory.models import Cluster

    sync_snapshot(H100_SLICES, name="aicr")
    return Cluster.objects.get(name="aicr")


@pytest.fixture
def operator(django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("oper", password="pw-oper-1")
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


@pytest.fixture
def client_operator(client, operator):
    client.force_login(operator)
    return client
