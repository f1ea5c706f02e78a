"""The chargeback page refuses what the API refuses: an unknown cluster in a link (or a
window it does not know) is named in an error and nothing is counted, instead of the whole
fleet billed under "all clusters". A download asked with one is a 400."""

from __future__ import annotations

import pytest
from chargeback_helpers import CASES
from django.urls import reverse

WINDOW = {"since": "2026-11-20T00:00:00Z", "until": "2026-11-20T15:00:00Z"}
pytestmark = pytest.mark.django_db


@pytest.fixture
def h100(sync_snapshot):
    sync_snapshot(CASES / "healthy-cluster-h100" / "snapshot", "h100")


@pytest.mark.parametrize(("params", "named"), [({"cluster": "nope"}, "nope"), ({"window": "1y"}, "1y")])
def test_a_value_the_api_refuses_is_an_error_and_counts_nothing(client_in, h100, params, named):
    assert "report" in client_in.get(reverse("claims:chargeback"), WINDOW).context
    resp = client_in.get(reverse("claims:chargeback"), {**WINDOW, **params})
    assert resp.status_code == 400
    assert "report" not in resp.context
    html = resp.content.decode()
    assert f"&#x27;{named}&#x27;" in html and "Nothing is counted" in html and "all clusters" not in html
    assert client_in.get(reverse("claims-api:chargeback"), {**WINDOW, **params}).status_code == 400


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_download_with_an_unknown_cluster_is_a_400(client_in, h100, fmt):
    resp = client_in.get(reverse("claims:chargeback"), {**WINDOW, "cluster": "nope", "format": fmt})
    assert resp.status_code == 400 and "cluster: No stored cluster named 'nope'" in resp.content.decode()
