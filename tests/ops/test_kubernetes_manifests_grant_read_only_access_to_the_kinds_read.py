"""The shipped ClusterRole (deploy/kubernetes and the Helm chart's, as rendered) grants
get/list/watch on exactly the resources in inventory.kinds.KINDS and nothing else; the workloads
run non-root on a read-only root filesystem with probes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.urls import resolve

from inventory.kinds import KINDS
from tests.ops.helm_chart import rendered

K8S = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"


def _docs() -> list[dict]:
    out = []
    for f in sorted(K8S.glob("*.yaml")):
        out += [d for d in yaml.safe_load_all(f.read_text()) if d]
    return out


def _of(kind: str) -> list[dict]:
    return [d for d in _docs() if d["kind"] == kind]


@pytest.mark.parametrize("source", ["manifests", "helm chart"])
def test_clusterrole_covers_exactly_the_kinds_read(source):
    docs = _docs() if source == "manifests" else list(rendered())
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    assert not [d for d in docs if d["kind"] in ("Role", "RoleBinding")]
    if source == "helm chart":
        (binding,) = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
        (sa,) = [d for d in docs if d["kind"] == "ServiceAccount"]
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": "gpu-tools"}]
    granted = set()
    for rule in role["rules"]:
        assert sorted(rule) == ["apiGroups", "resources", "verbs"], rule  # no resourceNames, no nonResourceURLs
        assert sorted(rule["verbs"]) == ["get", "list", "watch"]
        assert "*" not in rule["apiGroups"] + rule["resources"]
        assert not any("/" in r for r in rule["resources"]), "no subresources (pods/log, ...)"
        granted |= {(g, r) for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {(k.group, k.plural) for k in KINDS}


def test_no_other_role_grants_anything():
    assert not _of("Role") and not _of("RoleBinding")
    assert len(_of("ClusterRole")) == 1


def test_the_binding_gives_the_role_to_the_pods_service_account():
    (binding,) = _of("ClusterRoleBinding")
    (role,) = _of("ClusterRole")
    (sa,) = _of("ServiceAccount")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}]
    for dep in _of("Deployment"):
        if dep["metadata"]["name"].startswith("claimscope-"):
            assert dep["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]


def _pod_specs():
    for d in _of("Deployment") + _of("Job"):
        yield d["metadata"]["name"], d["spec"]["template"]["spec"]


def test_every_container_runs_non_root_on_a_read_only_root_filesystem():
    for name, spec in _pod_specs():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False, (name, c["name"])
            assert sc["capabilities"]["drop"] == ["ALL"]


def test_secrets_come_from_mounted_files_not_env_values():
    for name, spec in _pod_specs():
        if not name.startswith("claimscope-"):
            continue
        secret_vols = {v["name"]: v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v}
        assert set(secret_vols.values()) == {"claimscope-secrets"}, name
        for c in spec.get("initContainers", []) + spec["containers"]:
            env = {e["name"]: e for e in c["env"]}
            mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
            for var in ("SECRET_KEY", "DATABASE_URL"):
                assert var not in env
                path = env[f"{var}_FILE"]["value"]
                assert any(path.startswith(mounts[v] + "/") for v in secret_vols), (name, var, path)
            assert not any("secretKeyRef" in e.get("valueFrom", {}) for e in c["env"])
    (cm,) = _of("ConfigMap")
    assert not any(k in cm["data"] for k in ("SECRET_KEY", "DATABASE_URL", "OIDC_RP_CLIENT_SECRET"))


def test_web_probes_hit_the_health_endpoints():
    (web,) = [d for d in _of("Deployment") if d["metadata"]["name"] == "claimscope-web"]
    (c,) = web["spec"]["template"]["spec"]["containers"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert resolve(c[probe]["httpGet"]["path"]).url_name in {"healthz", "readyz"}
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert "$(POD_IP)" in env["ALLOWED_HOSTS"], "kubelet probes send the pod IP as Host"


def test_worker_and_beat_have_liveness_probes_and_one_beat():
    deps = {d["metadata"]["name"]: d for d in _of("Deployment")}
    for name in ("claimscope-worker", "claimscope-beat"):
        (c,) = deps[name]["spec"]["template"]["spec"]["containers"]
        assert "exec" in c["livenessProbe"], name
    assert deps["claimscope-beat"]["spec"]["replicas"] == 1
    assert deps["claimscope-beat"]["spec"]["strategy"]["type"] == "Recreate"


def test_kustomization_lists_every_manifest_except_the_optional_ones():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {f.name for f in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    optional = {"secret.example.yaml", "prometheusrule.yaml", "servicemonitor.yaml"}
    assert set(kust["resources"]) == files - optional
