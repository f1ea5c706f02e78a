"""A target Kubernetes version the plan does not know (a typo in a link) is named in an error
and nothing is planned, as the API refuses it, instead of a plan for the default version
passing for the link's; a bundle download with it is a 400."""

from __future__ import annotations

import pytest
from django.urls import reverse

from migration.views import TARGETS

pytestmark = pytest.mark.django_db
URL = reverse("migration:plan")


def test_a_known_target_is_planned(client_in, legacy):
    resp = client_in.get(URL, {"cluster": "legacy", "target": TARGETS[1]})
    assert resp.context["plan"].target_version == TARGETS[1] and not resp.context["target_error"]


@pytest.mark.parametrize("htmx", [{}, {"HTTP_HX_REQUEST": "true"}])
def test_an_unknown_target_is_named_and_nothing_is_planned(client_in, legacy, htmx):
    resp = client_in.get(URL, {"cluster": "legacy", "target": "9.99"}, **htmx)
    assert resp.status_code == 200
    if not htmx:  # (a partial's response carries no context)
        assert "plan" not in resp.context and "rows" not in resp.context
    html = resp.content.decode()
    assert "&#x27;9.99&#x27; is not one we plan for" in html and "Nothing is planned" in html
    assert "No GPU workloads on the device plugin" not in html
    assert client_in.get(reverse("migration-api:plan"), {"cluster": "legacy", "target": "9.99"}).status_code == 400


@pytest.mark.parametrize(("name", "args"), [("migration:bundle", ["legacy", "team-a"]), ("migration:bundle_all", ["legacy"]),
                                            ("migration:bundle_zip", ["legacy"])])
def test_a_download_for_an_unknown_target_is_a_400(client_in, legacy, name, args):
    assert client_in.get(reverse(name, args=args)).status_code == 200
    resp = client_in.get(reverse(name, args=args), {"target": "9.99"})
    assert resp.status_code == 400 and "target: Target Kubernetes '9.99'" in resp.content.decode()
