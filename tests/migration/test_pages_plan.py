"""The migration plan page and its downloads, on clusters synced from the migration fixtures."""

from __future__ import annotations

import io
import zipfile

import kubernetes_validate
import pytest
import yaml
from django.urls import reverse

from migration.generate import schema_version_for

pytestmark = pytest.mark.django_db
URL = reverse("migration:plan")
SCHEMA = schema_version_for("1.36")[0]


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_plan_pages_need_login(client, legacy):
    for url in (URL, reverse("migration:bundle", args=["legacy", "team-a"]),
                reverse("migration:bundle_zip", args=["legacy"]), reverse("migration:bundle_all", args=["legacy"])):
        resp = client.get(url)
        assert resp.status_code == 302 and resp["Location"].startswith(reverse("login")), url


def test_plan_lists_workloads_findings_steps_and_yaml(client_in, legacy, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        resp = client_in.get(URL, {"cluster": "legacy"})
    assert resp.status_code == 200
    body = resp.content.decode()
    plan = resp.context["plan"]
    rows = resp.context["rows"]
    assert len(rows) == len(plan.workloads) > 0
    translated = [r for r in rows if r["plan"] and r["plan"].template]
    assert translated and all(r["template_yaml"] and r["patched_yaml"] for r in translated)
    for r in translated:
        assert r["plan"].template.ref.name in body
        assert yaml.safe_load(r["template_yaml"])["kind"] == "ResourceClaimTemplate"
    assert [s["s"].number for s in resp.context["steps"]] == [1, 2, 3, 4, 5]
    for f in plan.findings:
        assert f.code in body
    assert plan.blockers  # the fixtures carry preemption, time-slicing, old Kubernetes...
    assert "DRAExtendedResource" in body and "Selectors for mixed GPU models" in body
    for ns in plan.bundles:
        assert reverse("migration:bundle", args=["legacy", ns]) in body


def test_server_version_comes_from_the_kubelets_of_a_snapshot(client_in, legacy):
    plan = client_in.get(URL, {"cluster": "legacy"}).context["plan"]
    assert plan.server_version == "v1.33.5"
    assert any(f.code == "kubernetes_too_old" for f in plan.blockers)


def test_filters_by_namespace_and_kind_return_the_partial(client_in, legacy):
    resp = client_in.get(URL, {"cluster": "legacy", "namespace": "team-a", "kind": "Deployment"}, HTTP_HX_REQUEST="true")
    body = resp.content.decode()
    assert body.lstrip().startswith('<div id="workloads"') and "<html" not in body
    full = client_in.get(URL, {"cluster": "legacy", "namespace": "team-a", "kind": "Deployment"})
    rows = full.context["rows"]
    assert rows and all(r["w"].ref.namespace == "team-a" and r["w"].ref.kind == "Deployment" for r in rows)
    assert len(rows) < full.context["row_total"]


def test_cluster_without_device_plugin_workloads_shows_an_empty_state(client_in, dra_only, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        resp = client_in.get(URL, {"cluster": dra_only.name})
    assert resp.status_code == 200
    body = resp.content.decode()
    assert 'id="no-device-plugin"' in body and "No GPU workloads on the device plugin" in body
    assert resp.context["bundles"] == []
    # Its all-namespaces download says why it holds no object instead of being empty.
    text = client_in.get(reverse("migration:bundle_all", args=[dra_only.name])).content.decode()
    assert text.startswith("# No workload of cluster") and "none asks for a GPU" in text
    assert yaml.safe_load(text) is None


def test_namespace_bundle_is_an_attachment_that_passes_the_schema(client_in, legacy):
    resp = client_in.get(reverse("migration:bundle", args=["legacy", "team-a"]))
    assert resp.status_code == 200
    assert resp["Content-Disposition"] == 'attachment; filename="legacy-team-a.yaml"'
    assert resp["Content-Type"].startswith("application/yaml")
    docs = _docs(resp.content.decode())
    kinds = [d["kind"] for d in docs]
    assert "ResourceClaimTemplate" in kinds and kinds.index("ResourceClaimTemplate") == 0
    for d in docs:
        kubernetes_validate.validate(d, SCHEMA, strict=True)
        assert d["metadata"]["namespace"] == "team-a"
    assert client_in.get(reverse("migration:bundle", args=["legacy", "no-such-ns"])).status_code == 404


def test_all_and_zip_downloads_hold_every_namespace(client_in, legacy):
    plan = client_in.get(URL, {"cluster": "legacy"}).context["plan"]
    multi = client_in.get(reverse("migration:bundle_all", args=["legacy"]))
    assert "attachment" in multi["Content-Disposition"]
    docs = _docs(multi.content.decode())
    assert len(docs) == sum(len(_docs(t)) for t in plan.bundles.values())
    for d in docs:
        kubernetes_validate.validate(d, SCHEMA, strict=True)
    resp = client_in.get(reverse("migration:bundle_zip", args=["legacy"]))
    assert resp["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(resp.content)).namelist()
    assert {f"{ns}.yaml" for ns in plan.bundles} | {"summary.json", "summary.txt"} <= set(names)
    assert any(n.startswith("stopgap/") for n in names)


HOSTILE_NS = 'ns"><script>alert(1)</script>\nkind: Secret'
HOSTILE_NAME = "web</pre><img src=x onerror=alert(2)>"


def test_hostile_names_are_escaped_in_the_page_and_in_the_yaml(client_in, sync_snapshot, tmp_path):
    from migration_fixtures import WORKLOADS

    docs = list(yaml.safe_load_all((WORKLOADS / "workloads.yaml").read_text()))
    dep = next(d for d in docs if d and d["kind"] == "Deployment")
    dep["metadata"]["namespace"] = HOSTILE_NS
    dep["metadata"]["name"] = HOSTILE_NAME
    (tmp_path / "nodes.yaml").write_bytes((WORKLOADS / "nodes-mixed.yaml").read_bytes())
    assert sync_snapshot(tmp_path, name="hostile").status == "ok"
    # The sync refuses names an API server would reject; the page must still be safe if such
    # an object reaches the database another way (an older version, the admin, a restore).
    from inventory.models import Cluster, KubeObject
    from migration.models import StoredPlan

    KubeObject.objects.create(
        cluster=Cluster.objects.get(name="hostile"), kind="Deployment", api_version="apps/v1",
        uid="hostile-dep", namespace=HOSTILE_NS, name=HOSTILE_NAME, raw=dep,
    )
    StoredPlan.objects.filter(cluster__name="hostile").delete()  # the sync did not see it: plan again

    resp = client_in.get(URL, {"cluster": "hostile"})
    body = resp.content.decode()
    assert "<script>alert(1)</script>" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    plan = resp.context["plan"]
    # Names the API server refuses are never offered as manifests: the workload is a plan error.
    assert plan.bundles == {}
    assert any("not a valid Kubernetes" in e for e in plan.errors), plan.errors
    assert "not a valid Kubernetes" in body

    names = zipfile.ZipFile(io.BytesIO(client_in.get(reverse("migration:bundle_zip", args=["hostile"])).content)).namelist()
    assert all("/" not in n.removeprefix("stopgap/") and "<" not in n and "\n" not in n for n in names)
