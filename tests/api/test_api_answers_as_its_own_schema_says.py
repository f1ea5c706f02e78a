"""The API keeps to its own OpenAPI schema (schemathesis): for generated parameters of every
operation, no 5xx, responses valid against the schema, status codes the schema declares, and
schema-violating parameters refused."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

pytestmark = pytest.mark.django_db


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


schema = schemathesis.openapi.from_dict(_schema())
schema.app = get_wsgi_application()


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """schemathesis calls the WSGI app itself, so each response's ``request_finished`` would
    run ``close_old_connections`` and close the test's connection inside its transaction (on
    PostgreSQL; SQLite's in-memory test database ignores it). Django's own test client
    disconnects it the same way."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def _loaded(django_db_setup, django_db_blocker):
    """The real-shaped fleet of conftest.fleet, loaded once for every generated case."""
    from inventory.models import Cluster
    from inventory.runs import after_read_hooks
    from inventory.sources import SnapshotSource
    from inventory.sync import sync_cluster
    from tests.api.conftest import CAPACITY_CASE, MIG_CASE, ORPHAN_CASE

    with django_db_blocker.unblock():
        for path, name in ((CAPACITY_CASE, "capacity"), (MIG_CASE, "mig"), (ORPHAN_CASE, "orphan")):
            cluster, _ = Cluster.objects.get_or_create(name=name)
            sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)
        yield
        Cluster.objects.all().delete()


@schema.parametrize()
@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_the_schema_says(case, _loaded, token):
    # A well-typed but unknown cluster name is a 400 by design (the schema cannot list the
    # clusters; an empty 200 would read as "nothing there"), hence no positive-data check.
    case.call_and_validate(headers={"Authorization": f"Token {token.key}"},
                           excluded_checks=[schemathesis.checks.positive_data_acceptance])
