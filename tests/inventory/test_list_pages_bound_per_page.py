"""``?per_page=`` on the node and device lists is clamped to 1..500 (a number that is not
one is ignored): django-tables2 obeyed any value, so -1 answered 500 and a huge one rendered
every device of the fleet."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("page", ["inventory:nodes", "inventory:devices"])
@pytest.mark.parametrize("per_page", ["-1", "0", "abc", "100000"])
def test_any_per_page_gives_a_bounded_page(demo_clusters, client, django_user_model, page, per_page):
    from django.urls import reverse

    from inventory.tables import MAX_PER_PAGE

    client.force_login(django_user_model.objects.create_user("viewer"))
    resp = client.get(reverse(page), {"per_page": per_page})
    assert resp.status_code == 200
    table = resp.context["table"]
    assert 1 <= table.paginator.per_page <= MAX_PER_PAGE
