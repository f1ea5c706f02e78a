"""The shipped alert rules load in Prometheus (promtool), fire as intended on sample series, and
the PrometheusRule carries the same groups as the plain rule file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy/prometheus/claimscope-rules.yml"
PROM_RULE = ROOT / "deploy/kubernetes/prometheusrule.yaml"
UNIT = Path(__file__).with_name("claimscope-rules.test.yml")


@pytest.fixture
def promtool() -> str:
    path = shutil.which("promtool") or ("/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None)
    if path is None:
        if os.environ.get("CLAIMSCOPE_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("promtool is required (CLAIMSCOPE_REQUIRE_PROMETHEUS=1) but not installed")
        pytest.skip("promtool not installed")
    return path


def test_promtool_accepts_the_rule_file(promtool):
    out = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_rules_fire_on_stuck_claims_and_stale_syncs_but_not_on_snapshots(promtool, tmp_path):
    """promtool's rule unit tests: inputs and expected alerts live in claimscope-rules.test.yml."""
    unit = yaml.safe_load(UNIT.read_text())
    unit["rule_files"] = [str(RULES)]
    path = tmp_path / "rules.test.yml"
    path.write_text(yaml.safe_dump(unit))
    out = subprocess.run([promtool, "test", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_prometheusrule_has_the_same_groups_as_the_rule_file():
    plain = yaml.safe_load(RULES.read_text())
    crd = yaml.safe_load(PROM_RULE.read_text())
    assert crd["apiVersion"] == "monitoring.coreos.com/v1" and crd["kind"] == "PrometheusRule"
    assert crd["spec"]["groups"] == plain["groups"]


def test_rules_only_use_metrics_that_claimscope_exports():
    import re



    source = "".join((ROOT / p).read_text() for p in ("inventory/metrics.py", "claims/metrics.py", "migration/metrics.py"))
    exported = set(re.findall(r'"(claimscope_[a-z_]+)"', source))
    for rule in yaml.safe_load(RULES.read_text())["groups"][0]["rules"]:
        for name in re.findall(r"claimscope_[a-z_]+", rule["expr"]):
            assert name in exported, (rule["alert"], name)
