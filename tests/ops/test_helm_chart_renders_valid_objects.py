"""The Helm chart (deploy/helm/claimscope) lints, renders objects every Kubernetes from 1.34 to
1.37 accepts (kubernetes-validate, strict), runs web, worker, beat, the migrate Job and an
optional Redis, ServiceMonitor and PrometheusRule, reads secrets from existing Secrets as files,
and refuses to render without a database or a secret key."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from tests.ops.helm_chart import CHART, CI_VALUES, ROOT, rendered, run_helm

VERSIONS = ["1.34.0", "1.35.0", "1.36.0", "1.37.0"]
MINIMAL = ("secrets.secretKey.value=x" + "y" * 50, "secrets.databaseUrl.value=postgres://u:p@db:5432/claimscope")


def _by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def test_the_chart_lints_with_the_ci_values():
    done = run_helm("lint", str(CHART), "-f", str(CI_VALUES))
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_a_database_or_secret_key_it_refuses_to_render():
    done = run_helm("template", "rel", str(CHART))
    assert done.returncode != 0 and "secrets.secretKey" in done.stderr
    done = run_helm("template", "rel", str(CHART), "--set", MINIMAL[0])
    assert done.returncode != 0 and "secrets.databaseUrl" in done.stderr


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("variant", ["ci-values", "minimal"])
def test_every_rendered_object_is_valid_for_kubernetes(version, variant):
    docs = rendered() if variant == "ci-values" else rendered(*MINIMAL, values="")
    checked = 0
    for d in docs:
        if d["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # Prometheus Operator CRDs: not in kubernetes-validate's schemas (checked below)
        kubernetes_validate.validate(d, version, strict=True)
        checked += 1
    assert checked >= 10


def test_it_runs_web_worker_beat_and_a_migrate_job_per_revision():
    docs = rendered()
    deployments = {d["metadata"]["name"]: d for d in _by_kind(docs, "Deployment")}
    assert set(deployments) == {"rel-claimscope-web", "rel-claimscope-worker", "rel-claimscope-beat", "rel-claimscope-redis"}
    assert deployments["rel-claimscope-beat"]["spec"]["replicas"] == 1
    assert deployments["rel-claimscope-beat"]["spec"]["strategy"]["type"] == "Recreate"
    (job,) = _by_kind(docs, "Job")
    assert job["metadata"]["name"] == "rel-claimscope-migrate-1"
    assert "migrate --noinput" in job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    for name in ("rel-claimscope-web", "rel-claimscope-worker", "rel-claimscope-beat"):
        init = deployments[name]["spec"]["template"]["spec"]["initContainers"]
        assert [c["name"] for c in init] == ["wait-for-migrations"]
    web = deployments["rel-claimscope-web"]["spec"]["template"]["spec"]["containers"][0]
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz" and web["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_secrets_come_from_the_existing_secrets_as_files_and_the_chart_makes_none():
    docs = rendered()
    assert not _by_kind(docs, "Secret")
    for d in _by_kind(docs, "Deployment") + _by_kind(docs, "Job"):
        if d["metadata"]["name"].endswith("-redis"):
            continue
        spec = d["spec"]["template"]["spec"]
        (secrets,) = [v for v in spec["volumes"] if v["name"] == "secrets"]
        sources = {s["secret"]["name"]: s["secret"]["items"] for s in secrets["projected"]["sources"]}
        assert sources == {
            "claimscope-app": [{"key": "secret-key", "path": "secret-key"}],
            "claimscope-db": [{"key": "url", "path": "database-url"}],
            "claimscope-oidc": [{"key": "client-secret", "path": "oidc-client-secret"}],
            "claimscope-metrics": [{"key": "token", "path": "metrics-token"}],
        }
        for c in spec.get("initContainers", []) + spec["containers"]:
            env = {e["name"]: e.get("value") for e in c["env"]}
            assert not any("secretKeyRef" in e.get("valueFrom", {}) for e in c["env"])
            assert env["DATABASE_URL_FILE"] == "/run/secrets/claimscope/database-url"
            assert env["METRICS_TOKEN_FILE"] == "/run/secrets/claimscope/metrics-token"
            assert env["OIDC_RP_CLIENT_SECRET_FILE"] == "/run/secrets/claimscope/oidc-client-secret"
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
    (cm,) = _by_kind(docs, "ConfigMap")
    assert not {"SECRET_KEY", "DATABASE_URL", "OIDC_RP_CLIENT_SECRET", "METRICS_TOKEN"} & set(cm["data"])
    assert cm["data"]["OIDC_RP_CLIENT_ID"] == "claimscope" and cm["data"]["METRICS_ALLOWED_NETWORKS"] == "10.42.0.0/16"


def test_values_given_inline_go_into_one_chart_secret():
    docs = rendered(*MINIMAL, "redis.bundled=false", "redis.url=redis://cache.example:6379/", values="")
    (secret,) = _by_kind(docs, "Secret")
    assert set(secret["stringData"]) == {"secret-key", "database-url"}
    (cm,) = _by_kind(docs, "ConfigMap")
    assert cm["data"]["CELERY_BROKER_URL"] == "redis://cache.example:6379/0" and cm["data"]["CACHE_URL"] == "redis://cache.example:6379/1"
    assert not [d for d in _by_kind(docs, "Deployment") if d["metadata"]["name"].endswith("-redis")]
    assert not _by_kind(docs, "ServiceMonitor") and not _by_kind(docs, "PrometheusRule")


def test_the_servicemonitor_sends_the_token_and_the_rules_are_the_shipped_ones():
    docs = rendered()
    (sm,) = _by_kind(docs, "ServiceMonitor")
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics" and endpoint["authorization"]["credentials"] == {"name": "claimscope-metrics", "key": "token"}
    (rule,) = _by_kind(docs, "PrometheusRule")
    shipped = yaml.safe_load((ROOT / "deploy" / "prometheus" / "claimscope-rules.yml").read_text())
    assert rule["spec"] == shipped
    assert (CHART / "files" / "claimscope-rules.yml").read_bytes() == (ROOT / "deploy" / "prometheus" / "claimscope-rules.yml").read_bytes()
