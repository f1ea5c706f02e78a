"""A yes/no filter of the node and device lists takes empty, true or false; anything else
("maybe", a typo) is a form error and the list is empty, as the API refuses it, instead of
every row shown as if "Any" had been chosen. A download with it is a 400."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import CASES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("url_name", "param"), [("inventory:devices", "allocated"), ("inventory:nodes", "problems")])
def test_a_value_other_than_true_or_false_shows_nothing_and_says_why(client_in, sync_snapshot, url_name, param):
    sync_snapshot(CASES / "healthy-cluster-h100/snapshot", name="h100")
    counts = {}
    for value in ("", "true", "false", "1", "0"):  # 1 and 0 as links and scripts have always written them
        resp = client_in.get(reverse(url_name), {param: value})
        assert resp.context["filter"].is_valid()
        counts[value] = resp.context["table"].page.paginator.count
    assert counts[""] > 0 and counts["1"] == counts["true"] and counts["0"] == counts["false"]
    assert counts["true"] + counts["false"] == counts[""] or url_name == "inventory:nodes"
    resp = client_in.get(reverse(url_name), {param: "maybe"})
    assert resp.status_code == 200
    assert resp.context["table"].page.paginator.count == 0
    assert "One of true, false" in resp.content.decode()
    download = client_in.get(reverse(url_name), {param: "maybe", "format": "csv"})
    assert download.status_code == 400 and param in download.content.decode()
