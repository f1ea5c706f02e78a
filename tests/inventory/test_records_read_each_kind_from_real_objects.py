"""Every real object in the fixtures becomes the record of its kind, carrying what the raw
object says: identity, node taints and readiness, a pod's claims and containers, both Event
shapes, DeviceClass selectors, DeviceTaintRules, GPU Operator resources, mig-parted layouts.

Each expectation is read from the raw object here, independently of the parse layer.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from inventory import records
from inventory.kinds import BY_KIND
from inventory.records import (
    ClusterPolicy,
    ConfigMap,
    DeviceClass,
    DeviceTaintRule,
    Event,
    GPUCluster,
    Node,
    NVIDIADriver,
    Pod,
    parse_object,
)
from inventory.records.config import mig_config_names
from inventory.snapshot import SnapshotError, load_path
from tests.conftest import CASES, FIXTURES

MIGRATION = FIXTURES / "migration"


def _files() -> list[Path]:
    out = []
    for path in sorted(FIXTURES.rglob("*.yaml")):
        if path.name == "expected.yaml":
            continue  # a case's expected findings, not objects
        try:
            load = load_path(path)
        except SnapshotError:
            continue  # published not valid YAML (k8s issue 134789)
        if load.objects and not load.errors:
            out.append(path)
    return out


FILES = _files()


def _all(kind: str) -> list[dict]:
    return [o for p in FILES for o in load_path(p).objects if o.get("kind") == kind]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_object_read_becomes_the_record_of_its_kind_with_its_identity(path):
    for raw in load_path(path).objects:
        kind = raw["kind"]
        if kind not in records.PARSERS:
            assert parse_object(raw) is None
            continue
        meta = raw["metadata"]
        if kind == "ResourceClaim" and "namespace" not in meta:
            continue  # refused (ValueError) until the source's prepare step gives it a namespace
        rec = parse_object(raw)
        assert rec is not None and rec.kind == kind and type(rec).__name__ == kind
        assert rec.name == meta["name"]
        assert rec.uid == meta.get("uid", f"{kind}/{meta.get('namespace', '')}/{meta['name']}")
        assert rec.labels == {k: str(v) for k, v in (meta.get("labels") or {}).items()}
        scope = BY_KIND[kind].namespaced if kind in BY_KIND else type(rec).NAMESPACED
        assert rec.namespace == ((meta.get("namespace") or "default") if scope else None)


def test_nodes_carry_their_taints_readiness_kubelet_and_allocatable():
    nodes = _all("Node")
    assert len(nodes) >= 10
    for raw in nodes:
        n = parse_object(raw)
        assert isinstance(n, Node)
        assert [t.to_dict() for t in n.taints] == raw.get("spec", {}).get("taints", [])
        ready = [c["status"] == "True" for c in raw.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
        assert n.ready == (ready[0] if ready else None)
        assert n.kubelet_version == raw.get("status", {}).get("nodeInfo", {}).get("kubeletVersion")
        assert n.allocatable == {k: str(v) for k, v in raw.get("status", {}).get("allocatable", {}).items()}
        assert n.unschedulable == bool(raw.get("spec", {}).get("unschedulable"))
    assert any(parse_object(raw).taints for raw in nodes)


def test_pods_carry_their_claims_containers_tolerations_and_state():
    pods = _all("Pod")
    assert len(pods) >= 20
    for raw in pods:
        p = parse_object(raw)
        assert isinstance(p, Pod)
        spec, status = raw.get("spec", {}), raw.get("status", {})
        statuses = {s["name"]: s.get("resourceClaimName") for s in status.get("resourceClaimStatuses", [])}
        assert [(r.name, r.claim_name, r.template_name, r.status_claim_name) for r in p.resource_claims] == [
            (r["name"], r.get("resourceClaimName"), r.get("resourceClaimTemplateName"), statuses.get(r["name"]))
            for r in spec.get("resourceClaims", [])
        ]
        assert [c.name for c in p.pod_spec.all_containers()] == [
            c["name"] for key in ("initContainers", "containers") for c in spec.get(key, [])
        ]
        assert p.images == tuple(c["image"] for c in spec.get("containers", []) if c.get("image"))
        assert len(p.tolerations) == len(spec.get("tolerations", []))
        assert p.node_name == spec.get("nodeName") and p.phase == status.get("phase")
        assert [(c.type, c.status) for c in p.conditions] == [(c["type"], c["status"]) for c in status.get("conditions", [])]
        assert [c.restart_count for c in p.container_states] == [c.get("restartCount", 0) for c in status.get("containerStatuses", [])]
        owner = next((o for o in raw["metadata"].get("ownerReferences", []) if o.get("controller")), None)
        assert (p.controller.kind, p.controller.name) == (owner["kind"], owner["name"]) if owner else p.controller is None
    assert any(p.resource_claims for p in map(parse_object, pods))


def _as_events_v1(core: dict) -> dict:
    """The same Event as events.k8s.io/v1 serves it (field names from the events/v1 API)."""
    first = core.get("firstTimestamp") or core.get("eventTime")
    out = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": copy.deepcopy(core["metadata"]),
        "regarding": core["involvedObject"], "reason": core.get("reason"), "note": core.get("message"),
        "type": core.get("type"), "eventTime": first,
        "reportingController": (core.get("source") or {}).get("component") or core.get("reportingComponent"),
        "deprecatedSource": {"host": core["source"]["host"]} if (core.get("source") or {}).get("host") else {},
    }
    if core.get("series"):
        out["series"] = core["series"]
    elif (core.get("count") or 1) > 1:
        out["series"] = {"count": core["count"], "lastObservedTime": core.get("lastTimestamp")}
    else:
        out["deprecatedLastTimestamp"] = core.get("lastTimestamp")
    return out


def test_both_event_shapes_give_the_same_event_record():
    events = _all("Event")
    assert len(events) >= 10
    for raw in events:
        e = parse_object(raw)
        assert isinstance(e, Event)
        inv = raw["involvedObject"]
        series = raw.get("series") or {}
        first = raw.get("firstTimestamp") or raw.get("eventTime")
        assert (e.involved_kind, e.involved_name, e.involved_namespace) == (inv.get("kind"), inv.get("name"), inv.get("namespace"))
        assert (e.reason, e.message) == (raw.get("reason", ""), raw.get("message", ""))
        assert e.count == (series.get("count") or raw.get("count") or 1)
        assert e.first == first and e.last == (series.get("lastObservedTime") or raw.get("lastTimestamp") or first)
        other = parse_object(_as_events_v1(raw))
        assert dataclass_fields(other, skip={"api_version"}) == dataclass_fields(e, skip={"api_version"})


def dataclass_fields(rec, skip):
    return {f: getattr(rec, f) for f in rec.__dataclass_fields__ if f not in skip}


def test_device_classes_and_taint_rules_carry_their_selectors_and_taints():
    classes = _all("DeviceClass")
    assert classes
    for raw in classes:
        dc = parse_object(raw)
        assert isinstance(dc, DeviceClass)
        assert dc.selectors == tuple(s["cel"]["expression"] for s in raw["spec"].get("selectors", []))
        assert dc.extended_resource_name == raw["spec"].get("extendedResourceName")
    rules = _all("DeviceTaintRule")
    assert rules
    for raw in rules:
        r = parse_object(raw)
        sel = raw["spec"].get("deviceSelector", {})
        assert isinstance(r, DeviceTaintRule)
        assert (r.driver, r.pool, r.device) == (sel.get("driver"), sel.get("pool"), sel.get("device"))
        assert r.taint.to_dict() == raw["spec"]["taint"]


def _pins(spec, path="spec"):
    """Every (path, version or image) of a GPU Operator spec, walked here on its own."""
    if isinstance(spec, dict):
        if "version" in spec or "image" in spec:
            yield path, spec.get("version") or spec.get("image")
        for k, v in spec.items():
            yield from _pins(v, f"{path}.{k}")
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            yield from _pins(v, f"{path}[{i}]")


def test_gpu_operator_resources_carry_every_component_pin():
    pinned = 0
    for name in ("v1_clusterpolicy.yaml", "nvidia_v1alpha1_gpucluster.yaml", "nvidia_v1alpha1_nvidiadriver.yaml"):
        (raw,) = load_path(MIGRATION / name).objects
        rec = parse_object(raw)
        assert isinstance(rec, ClusterPolicy | GPUCluster | NVIDIADriver)
        want = list(_pins(raw["spec"]))
        assert [where for where, _ in rec.pins] == [where for where, _ in want], name
        for (_, tag), (_, written) in zip(rec.pins, want, strict=True):
            assert tag is None or str(written).endswith(tag), name
        pinned += bool(want)
        if isinstance(rec, ClusterPolicy):
            assert rec.mig_strategy == raw["spec"].get("mig", {}).get("strategy")
            assert rec.device_plugin_config == (raw["spec"].get("devicePlugin", {}).get("config", {}).get("name") or None)
    assert pinned >= 2  # the samples do name component versions


def test_a_mig_parted_config_map_names_its_layouts():
    (raw,) = load_path(MIGRATION / "default-mig-parted-config.configmap.yaml").objects
    cm = parse_object(raw)
    assert isinstance(cm, ConfigMap) and cm.data == raw["data"]
    layouts = {k for text in raw["data"].values() for k in (yaml.safe_load(text).get("mig-configs") or {})}
    assert layouts and mig_config_names(cm) == layouts


def test_case_snapshots_parse_without_errors():
    for path in sorted(CASES.glob("*/snapshot")):
        errors: list[str] = []
        list(records.as_records(load_path(path).objects, errors))
        assert errors == [], path.parent.name
