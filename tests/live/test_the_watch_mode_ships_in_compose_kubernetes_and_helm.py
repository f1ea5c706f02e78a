"""The watch mode ships as a compose service, a Kubernetes Deployment (in the kustomization) and
an optional Helm watcher: each runs ``manage.py watch_clusters`` with its heartbeat probed."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.ops.helm_chart import rendered

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
COMMAND = ["python", "manage.py", "watch_clusters", "--interval=1", "--heartbeat=/tmp/claimscope-watch-heartbeat"]


def _probe_reads_the_heartbeat(cmd):
    return "/tmp/claimscope-watch-heartbeat" in " ".join(cmd)


def test_compose_runs_the_watcher_from_the_app_image_with_a_health_check():
    s = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["watcher"]
    assert s["command"] == COMMAND
    assert s["image"] == "claimscope:latest" and s["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert _probe_reads_the_heartbeat(s["healthcheck"]["test"])


def test_the_kubernetes_watcher_is_deployed_by_the_kustomization_and_probed():
    assert "watcher.yaml" in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    (dep,) = [d for d in yaml.safe_load_all((K8S / "watcher.yaml").read_text()) if d]
    kubernetes_validate.validate(dep, "1.34", strict=True)
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    assert c["command"] == COMMAND
    assert _probe_reads_the_heartbeat(c["livenessProbe"]["exec"]["command"])
    assert dep["spec"]["template"]["spec"]["serviceAccountName"] == "claimscope"  # the read-only ClusterRole's


@pytest.mark.parametrize("enabled", [True, False])
def test_the_helm_watcher_renders_only_when_enabled_and_is_valid(enabled):
    docs = rendered(f"watcher.enabled={str(enabled).lower()}")
    watchers = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-watcher")]
    assert len(watchers) == (1 if enabled else 0)
    for d in watchers:
        kubernetes_validate.validate(d, "1.34", strict=True)
        (c,) = d["spec"]["template"]["spec"]["containers"]
        assert c["command"] == COMMAND
        assert _probe_reads_the_heartbeat(c["livenessProbe"]["exec"]["command"])
