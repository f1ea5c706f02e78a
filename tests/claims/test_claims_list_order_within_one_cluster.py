"""The claims list's default order is cluster, namespace, name; filtered to one cluster it is
namespace then name (the cluster's name orders nothing there, and leaving it out lets the
database read the page from its index), and ``?sort=-cluster`` reverses it in both cases."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import CASES

pytestmark = pytest.mark.django_db


def _rows(client, **params) -> list[tuple[str, str, str]]:
    resp = client.get(reverse("claims:list"), params)
    assert resp.status_code == 200
    return [(c.cluster.name, c.namespace, c.name) for c in resp.context["claims"]]


def test_one_cluster_is_ordered_by_namespace_and_name_and_all_by_cluster_first(client_in, sync_snapshot):
    sync_snapshot(CASES / "claims-stuck-deleting-delete-protection/snapshot", name="b-real")
    sync_snapshot(CASES / "capacity-exhausted-all-gpus-allocated/snapshot", name="a-real")

    every = _rows(client_in)
    assert len({c for c, _, _ in every}) == 2
    assert every == sorted(every)
    assert _rows(client_in, sort="-cluster") == sorted(every, reverse=True)

    for name in ("a-real", "b-real"):
        one = _rows(client_in, cluster=name)
        assert one, name
        assert one == sorted(one) == [r for r in every if r[0] == name]
        assert _rows(client_in, cluster=name, sort="-cluster") == sorted(one, reverse=True)
