"""A node name and a GPU uuid carrying PromQL and HTML syntax stay data: the range query selects
the literal UUID with an escaped equality matcher (Prometheus accepts it and returns nothing),
and the pages print both escaped."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from inventory import prometheus
from inventory.models import Cluster
from tests.telemetry.pagedata import h200_slice_folder

pytestmark = pytest.mark.django_db
NODE = 'n"} or vector(1) <img src=x onerror=alert(1)>'  # no "/": node names are URL segments
UUID = 'GPU-x"} or vector(1) or {__name__=~".+'


@pytest.fixture
def evil(sync_snapshot, tmp_path, prometheus_url):
    folder = h200_slice_folder(tmp_path / "evil")
    path = folder / "h200-slice.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["spec"]["nodeName"] = NODE
    raw["spec"]["devices"][0]["attributes"]["uuid"]["string"] = UUID
    path.write_text(yaml.safe_dump(raw))
    sync_snapshot(folder, name="evil")
    Cluster.objects.filter(name="evil").update(prometheus_url=prometheus_url)


@pytest.fixture
def answers(monkeypatch):
    """(promql, series) of every range query the views send to the real Prometheus."""
    got: list[tuple[str, list]] = []
    real = prometheus.range_series

    def spy(url, promql, *args, **kwargs):
        got.append((promql, real(url, promql, *args, **kwargs)))
        return got[-1][1]

    monkeypatch.setattr(prometheus, "range_series", spy)
    return got


def test_the_uuid_is_one_escaped_equality_matcher_and_prometheus_returns_no_series(client_in, evil, answers):
    resp = client_in.get(reverse("inventory:telemetry-node-chart", args=["evil", NODE]), {"window": "7d"})
    html = resp.content.decode()
    assert resp.status_code == 200 and "No chart" not in html
    ((promql, series),) = answers
    assert 'UUID="GPU-x\\"} or vector(1) or {__name__=~\\".+"}' in promql
    assert series == []  # unescaped, vector(1) or {__name__=~".+"} would have answered
    assert "no utilization or power series" in html


def test_the_node_pages_print_the_name_escaped(client_in, evil):
    for url in (reverse("inventory:telemetry-node", args=["evil", NODE]), reverse("inventory:telemetry-node-chart", args=["evil", NODE])):
        html = client_in.get(url, {"window": "1h"}).content.decode()
        assert "<img src=x" not in html
    page = client_in.get(reverse("inventory:telemetry-node", args=["evil", NODE])).content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
