"""YAML the product writes for kubectl (plan bundles, the plan page, the raw-object view):
every string comes back as the same string, both to PyYAML (YAML 1.1) and to kubectl's
go-yaml (YAML 1.2), which reads ``1e3``, ``+1e3``, ``.5e3`` and ``0o17`` as numbers. Such
a value written plain made an annotation fail to apply."""

from __future__ import annotations

import re

import pytest
import yaml
from migration_fixtures import find, load

from inventory import yamltext
from migration.planner import plan_migration

# Numbers by the YAML 1.2 core schema (and go-yaml's octal/hex/binary forms).
YAML12_NUMBER = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^0o[0-7]+$|^0x[0-9a-fA-F]+$|^0b[01]+$"
                           r"|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$")

SAMPLES = ["1e3", "1.0e3", "+1e3", ".5e3", "0o17", "1E3", "-1e-3", "0x1F", "0b101", "123", "-0", "0.5", ".inf",
           "yes", "no", "on", "off", "null", "~", "true", "False", "1_000", "12:30", "10Gi", "v1.36", "1.2.3",
           "e3", "1e", "*alias", "&anchor", "- item", "a: b", "#x", "line\nbreak", "tab\there", "é\u202eü", ""]


@pytest.mark.parametrize("unicode", [True, False])
def test_every_string_comes_back_and_yaml_1_2_numbers_are_quoted(unicode):
    doc = {"metadata": {"annotations": {f"k{i}": v for i, v in enumerate(SAMPLES)}}}
    text = yamltext.dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=unicode)
    assert yaml.safe_load(text) == doc
    for i, v in enumerate(SAMPLES):
        if YAML12_NUMBER.match(v):
            line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"k{i}:"))
            assert line.split(":", 1)[1].strip()[0] in "'\"", line


def test_a_plan_bundle_quotes_an_annotation_kubectl_would_read_as_a_number():
    objects = load("workloads/workloads.yaml")
    embedder = find(objects, "Deployment", "embedder")
    embedder["spec"]["template"]["metadata"].setdefault("annotations", {}).update({"replicas-hint": "1e3", "mode": "0o17"})
    plan = plan_migration(objects, "1.36.1", "1.36")
    text = plan.bundles[embedder["metadata"]["namespace"]]
    assert "replicas-hint: '1e3'" in text and "mode: '0o17'" in text
    assert "replicas-hint: 1e3" not in text
