"""The chargeback page needs a login, renders for a logged-in user (window picker, table,
trend chart, downloads); the API section gives the same numbers as the command."""

from __future__ import annotations

import csv
import io
import json

import pytest
from chargeback_helpers import CASES
from django.core.management import call_command
from django.urls import reverse

WINDOW = {"cluster": "h100", "since": "2026-11-20T00:00:00Z", "until": "2026-11-20T15:00:00Z"}


@pytest.fixture
def h100(sync_snapshot):
    sync_snapshot(CASES / "healthy-cluster-h100" / "snapshot", "h100")


def _command() -> dict:
    out = io.StringIO()
    call_command("chargeback", "--cluster", "h100", "--since", WINDOW["since"], "--until", WINDOW["until"], stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_the_page_needs_a_login(client, h100):
    resp = client.get(reverse("claims:chargeback"), WINDOW)
    assert resp.status_code == 302 and reverse("login") in resp["Location"]


@pytest.mark.django_db
def test_the_page_shows_each_namespace_product_and_the_trend(client_in, h100):
    resp = client_in.get(reverse("claims:chargeback"), WINDOW)
    assert resp.status_code == 200
    html = resp.content.decode()
    want = _command()
    for n in want["namespaces"]:
        assert f">{n['namespace']}</a>" in html
        for p in n["products"]:
            assert p["product"] in html
            assert f"{p['gpu_hours']:.2f}" in html
    assert 'id="chargeback-fig"' in html and 'data-figure="chargeback-fig"' in html
    assert 'name="window"' in html and 'name="since"' in html and 'name="until"' in html
    assert '<table class="stack">' in html  # rows fold into cards on a phone
    assert reverse("claims:chargeback") in client_in.get(reverse("claims:list")).content.decode()  # nav link


@pytest.mark.django_db
def test_the_page_downloads_as_csv_and_json(client_in, h100):
    want = {n["namespace"]: n["gpu_hours"] for n in _command()["namespaces"]}
    resp = client_in.get(reverse("claims:chargeback"), {**WINDOW, "format": "csv"})
    assert resp.status_code == 200 and resp["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(resp.content.decode())))
    got: dict[str, float] = {}
    for r in rows:
        got[r["namespace"]] = got.get(r["namespace"], 0.0) + float(r["gpu_hours"])
    assert got == pytest.approx(want, abs=1e-3)
    doc = json.loads(client_in.get(reverse("claims:chargeback"), {**WINDOW, "format": "json"}).content)
    assert {n["namespace"]: n["gpu_hours"] for n in doc["namespaces"]} == want


@pytest.mark.django_db
def test_a_window_it_cannot_read_is_a_400_with_the_reason(client_in, h100):
    resp = client_in.get(reverse("claims:chargeback"), {"since": "last tuesday"})
    assert resp.status_code == 400 and "Window not understood" in resp.content.decode()


@pytest.mark.django_db
def test_the_api_section_gives_the_commands_numbers(client_in, h100):
    resp = client_in.get(reverse("claims-api:chargeback"), WINDOW)
    assert resp.status_code == 200
    body = resp.json()
    want = _command()
    assert body["clusters"] == ["h100"]
    assert [(n["namespace"], n["gpu_hours"]) for n in body["namespaces"]] == [(n["namespace"], n["gpu_hours"]) for n in want["namespaces"]]
    assert "chargeback" in client_in.get("/api/").json()


@pytest.mark.django_db
def test_the_api_refuses_anonymous_callers(client, h100):
    assert client.get(reverse("claims-api:chargeback"), WINDOW).status_code in (401, 403)


@pytest.mark.django_db
def test_the_api_refuses_unknown_clusters_and_windows(client_in, h100):
    assert client_in.get(reverse("claims-api:chargeback"), {"cluster": "nope"}).status_code == 400
    assert client_in.get(reverse("claims-api:chargeback"), {"cluster": "h100", "window": "1y"}).status_code == 400
    assert client_in.get(reverse("claims-api:chargeback"), {"cluster": "h100", "since": "soon"}).status_code == 400


@pytest.mark.django_db
def test_the_page_has_a_team_table_when_teams_are_configured(client_in, h100, settings):
    html = client_in.get(reverse("claims:chargeback"), WINDOW).content.decode()
    assert "By team" not in html
    settings.CLAIMSCOPE_CHARGEBACK_TEAMS = {n["namespace"]: f"team of {n['namespace']}" for n in _command()["namespaces"]}
    html = client_in.get(reverse("claims:chargeback"), WINDOW).content.decode()
    assert "By team" in html
    for team in settings.CLAIMSCOPE_CHARGEBACK_TEAMS.values():
        assert team in html
