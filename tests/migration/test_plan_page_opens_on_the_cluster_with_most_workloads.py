"""Without ``?cluster=`` the plan page opens on the cluster with the most workload
controllers, not on the first name (a slices-only cluster has nothing to plan)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Cluster, KubeObject

pytestmark = pytest.mark.django_db
URL = reverse("migration:plan")


def test_plan_without_cluster_opens_on_the_cluster_with_most_workloads(client_in, legacy, dra_only):
    # "aicr" sorts before "legacy" but stores no workload.
    assert min(Cluster.objects.values_list("name", flat=True)) == dra_only.name
    assert not KubeObject.objects.filter(cluster=dra_only, kind__in=["Deployment", "Job"]).exists()
    resp = client_in.get(URL)
    assert resp.status_code == 200
    assert resp.context["cluster"].name == legacy.name
    assert resp.context["device_plugin_total"] > 0


def test_plan_with_a_cluster_parameter_still_opens_that_cluster(client_in, legacy, dra_only):
    assert client_in.get(URL, {"cluster": dra_only.name}).context["cluster"].name == dra_only.name


def test_plan_without_any_workload_falls_back_to_the_first_cluster(client_in, dra_only):
    assert client_in.get(URL).context["cluster"].name == dra_only.name


def test_choosing_the_default_cluster_is_one_query(legacy, dra_only, django_assert_num_queries):
    from migration.views import _busiest_cluster_id

    with django_assert_num_queries(1):
        assert _busiest_cluster_id() == legacy.pk
