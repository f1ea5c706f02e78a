"""A search term longer than any name (60,000 characters pasted by mistake, or sent on
purpose) is refused as a form error on every list, and the search page says so: no query
runs (SQLite refuses a LIKE pattern that long, which was a server error)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.filters import MAX_TERM
from tests.conftest import CASES, VKS_CLAIM, VKS_SLICES

pytestmark = pytest.mark.django_db

LONG = "a" * 60_000


@pytest.fixture
def loaded(sync_snapshot):
    sync_snapshot(CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml", name="mig")
    sync_snapshot(VKS_SLICES, name="vks")
    sync_snapshot(VKS_CLAIM, name="vks")


@pytest.mark.parametrize(("url", "param"), [
    ("inventory:devices", "q"), ("inventory:devices", "slice"), ("inventory:nodes", "q"), ("inventory:nodes", "product"),
    ("claims:list", "q"), ("claims:list", "node"), ("claims:list", "namespace"), ("claims:stuck", "q"),
])  # fmt: skip
def test_the_lists_answer_with_a_form_error(client_in, loaded, url, param):
    resp = client_in.get(reverse(url), {param: LONG})
    assert resp.status_code == 200
    assert f"at most {MAX_TERM} characters" in resp.content.decode()
    # A term of the longest length allowed is looked up as usual.
    assert client_in.get(reverse(url), {param: "a" * MAX_TERM}).status_code == 200


def test_the_slice_list_refuses_a_node_filter_that_long(client_in, loaded):
    resp = client_in.get(reverse("inventory:resourceslices", args=["vks"]), {"node": LONG})
    assert resp.status_code == 200 and not resp.context["slices"]
    assert f"Node: at most {MAX_TERM} characters" in resp.content.decode() and len(resp.content) < 100_000
    assert resp.context["node"] == "a" * MAX_TERM


def test_the_search_page_says_the_term_is_too_long(client_in, loaded):
    resp = client_in.get(reverse("inventory:search"), {"q": LONG})
    assert resp.status_code == 200
    body = resp.content.decode()
    assert "a search term is at most" in body and "Nothing was looked up" in body
    assert len(body) < 100_000  # the term is not echoed whole in the title and the header box


@pytest.mark.parametrize(("url", "params"), [
    ("claims:list", {"state": "bogus"}), ("claims:stuck", {"severity": "bogus"}),
    ("inventory:devices", {"q": LONG}), ("inventory:nodes", {"cluster": "no-such-cluster"}),
])  # fmt: skip
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_download_with_an_invalid_filter_is_refused_not_empty(client_in, loaded, url, params, fmt):
    resp = client_in.get(reverse(url), {**params, "format": fmt})
    assert resp.status_code == 400
    body = resp.content.decode()
    assert body.startswith("Invalid filter; nothing exported.") and next(iter(params)) in body
    # The same download with a valid filter is the file.
    assert client_in.get(reverse(url), {"format": fmt}).status_code == 200
