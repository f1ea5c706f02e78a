"""The pod page shows the open findings that involve the pod (severity, category linked to its
runbook with ``?finding=<pk>``, summary, next action) and the Events about the pod, in both
Event shapes, in a bounded number of queries, with cluster text escaped and clear empty states."""

from __future__ import annotations

import copy
import uuid

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from store_helpers import CASE_DIRS, cluster_name

from claims.models import Finding
from inventory.models import KubeObject, Pod
from inventory.records import parse_event

pytestmark = pytest.mark.django_db


def _url(pod: Pod) -> str:
    return reverse("claims:pod", args=[pod.cluster.name, pod.namespace, pod.name])


def _involves(finding: Finding, pod: Pod) -> bool:
    return any(o.get("kind") == "Pod" and o.get("namespace") == pod.namespace and o.get("name") == pod.name
               for o in finding.involved)


def _events_about(pod: Pod) -> list[dict]:
    out = []
    for raw in KubeObject.objects.filter(cluster=pod.cluster, kind="Event", namespace=pod.namespace).values_list("raw", flat=True):
        ref = raw.get("involvedObject") or raw.get("regarding") or {}
        if ref.get("kind") == "Pod" and ref.get("name") == pod.name:
            out.append(raw)
    return out


def _pods_named_by_open_findings() -> list[tuple[Pod, list[Finding]]]:
    out: dict[int, tuple[Pod, list[Finding]]] = {}
    for f in Finding.objects.open().select_related("cluster"):
        for o in f.involved:
            if o.get("kind") != "Pod":
                continue
            pod = Pod.objects.filter(cluster=f.cluster, namespace=o.get("namespace"), name=o.get("name")).select_related("cluster").first()
            if pod is not None:
                out.setdefault(pod.pk, (pod, []))[1].append(f)
    return list(out.values())


@pytest.fixture
def demo(db):
    call_command("load_demo", "--no-user")


def test_every_demo_pod_a_finding_involves_shows_that_finding_with_its_runbook_link(client_in, demo):
    pods = _pods_named_by_open_findings()
    assert pods  # the demo has findings about pods
    for pod, findings in pods:
        resp = client_in.get(_url(pod))
        assert resp.status_code == 200
        body = resp.content.decode()
        assert {f.pk for f in resp.context["open_findings"]} >= {f.pk for f in findings}
        for f in findings:
            assert f'href="{f.get_runbook_url()}?finding={f.pk}"' in body
            assert f.get_severity_display() in body
            assert str(escape_html(f.summary)) in body and str(escape_html(f.next_action)) in body


def escape_html(text: str) -> str:
    from django.utils.html import escape

    return escape(text)


def test_the_pod_page_lists_only_open_findings_involving_that_pod(client_in, demo):
    for pod, _ in _pods_named_by_open_findings():
        resp = client_in.get(_url(pod))
        shown = resp.context["open_findings"]
        assert shown and all(f.resolved_at is None and f.cluster_id == pod.cluster_id and _involves(f, pod) for f in shown)


def test_a_pod_whose_template_is_missing_shows_the_finding_and_the_failed_claim_creation_events(client_in, demo):
    f = Finding.objects.open().filter(category="template_claim_missing", kind="Pod").select_related("cluster").first()
    assert f is not None
    pod = Pod.objects.select_related("cluster").get(cluster=f.cluster, namespace=f.namespace, name=f.name)
    events = _events_about(pod)
    assert any(e.get("reason") == "FailedResourceClaimCreation" for e in events)
    resp = client_in.get(_url(pod))
    body = resp.content.decode()
    assert f"{f.get_runbook_url()}?finding={f.pk}" in body
    assert "FailedResourceClaimCreation" in body
    shown = resp.context["events"]
    assert {(e.reason, e.count) for e in shown} == {(parse_event(e).reason, parse_event(e).count) for e in events}
    assert any(e.count > 1 for e in shown)  # the count is shown as stored (x19 in the demo)
    for e in shown:
        assert f'data-label="Count">{e.count}</td>' in body


def test_every_event_about_a_stored_pod_shows_on_its_page_on_the_cases(client_in, sync_snapshot):
    for case in CASE_DIRS:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    checked = 0
    for pod in Pod.objects.select_related("cluster"):
        events = _events_about(pod)
        resp = client_in.get(_url(pod))
        assert resp.status_code == 200
        assert sorted(e.name for e in resp.context["events"]) == sorted(str(e["metadata"]["name"]) for e in events)
        checked += len(events)
    assert checked > 0


def _add_event(pod: Pod, *, shape: str, reason: str, message: str, count: int = 1) -> KubeObject:
    ref = {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid, "apiVersion": "v1"}
    name = f"{pod.name}.{uuid.uuid4().hex[:16]}"
    uid = str(uuid.uuid4())
    ts = timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    if shape == "core":
        raw = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": pod.namespace, "uid": uid},
               "involvedObject": ref, "reason": reason, "message": message, "type": "Warning", "count": count,
               "firstTimestamp": ts, "lastTimestamp": ts, "source": {"component": "kubelet"}}
    else:
        raw = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
               "metadata": {"name": name, "namespace": pod.namespace, "uid": uid}, "regarding": ref,
               "reason": reason, "note": message, "type": "Warning", "eventTime": ts.replace("Z", ".000000Z"),
               "reportingController": "kubelet", "reportingInstance": "kubelet-node",
               "action": "Preparing", "deprecatedCount": count}
    # The columns the sync writes for an Event (``rows.kubeobject_fields``: its subject too).
    event = parse_event(raw)
    return KubeObject.objects.create(cluster=pod.cluster, uid=uid, name=name, kind="Event", api_version=raw["apiVersion"],
                                     namespace=pod.namespace, raw=raw, subject_kind=event.involved_kind or "",
                                     subject_name=event.involved_name or "")


def _add_finding(pod: Pod, *, summary: str, next_action: str, main_kind: str = "ResourceClaim") -> Finding:
    now = timezone.now()
    main = {"kind": main_kind, "namespace": "" if main_kind == "Node" else pod.namespace,
            "name": f"{main_kind.lower()}-{uuid.uuid4().hex[:8]}"}
    return Finding.objects.create(
        cluster=pod.cluster, category="capacity_exhausted", severity="warning", severity_rank=1, summary=summary,
        next_action=next_action, involved=[main, {"kind": "Pod", "namespace": pod.namespace, "name": pod.name}],
        kind=main["kind"], namespace=main["namespace"], name=main["name"], first_seen=now, last_seen=now,
        fingerprint=f"capacity_exhausted/{main['kind']}/{main['namespace']}/{main['name']}")


def test_events_of_the_events_k8s_io_shape_show_beside_core_ones(client_in, demo):
    pod = Pod.objects.select_related("cluster").filter(cluster__name="demo").order_by("pk").first()
    _add_event(pod, shape="core", reason="CoreShapedReason", message="core shape")
    _add_event(pod, shape="events", reason="RegardingShapedReason", message="regarding shape", count=7)
    body = client_in.get(_url(pod)).content.decode()
    assert "CoreShapedReason" in body and "RegardingShapedReason" in body and "regarding shape" in body


def test_a_finding_whose_main_object_is_another_kind_shows_when_it_involves_the_pod(client_in, demo):
    pod = Pod.objects.select_related("cluster").filter(cluster__name="demo").order_by("pk").first()
    f = _add_finding(pod, summary="involves the pod second", next_action="look at the claim")
    resp = client_in.get(_url(pod))
    assert f in resp.context["open_findings"]
    f.resolved_at = timezone.now()
    f.save(update_fields=["resolved_at"])
    assert f not in client_in.get(_url(pod)).context["open_findings"]


def test_findings_about_a_same_named_pod_elsewhere_do_not_show(client_in, demo):
    pod = Pod.objects.select_related("cluster").filter(cluster__name="demo").order_by("pk").first()
    other_ns = _add_finding(pod, summary="other namespace", next_action="x")
    other_ns.involved = [dict(o, namespace=o["namespace"] + "-other") for o in other_ns.involved]
    other_ns.namespace += "-other"
    other_ns.save()
    longer = _add_finding(pod, summary="longer name", next_action="x")
    longer.involved = [longer.involved[0], {"kind": "Pod", "namespace": pod.namespace, "name": pod.name + "-1"}]
    longer.save()
    other_kind = _add_finding(pod, summary="same name, other kind", next_action="x")
    other_kind.involved = [other_kind.involved[0], {"kind": "ResourceClaim", "namespace": pod.namespace, "name": pod.name}]
    other_kind.save()
    shown = client_in.get(_url(pod)).context["open_findings"]
    assert other_ns not in shown and longer not in shown and other_kind not in shown


def test_hostile_finding_and_event_text_is_escaped(client_in, demo):
    pod = Pod.objects.select_related("cluster").filter(cluster__name="demo").order_by("pk").first()
    _add_finding(pod, summary="<script>alert('s')</script>", next_action="<img src=x onerror=alert(1)>")
    _add_event(pod, shape="core", reason="<b>Bold</b>", message="<script>alert('e')</script>")
    _add_event(pod, shape="events", reason="Ok", message="<iframe src=//evil></iframe>")
    body = client_in.get(_url(pod)).content.decode()
    for raw in ("<script>alert(", "<img src=x", "<b>Bold</b>", "<iframe"):
        assert raw not in body
    assert "&lt;script&gt;alert(" in body and "&lt;img src=x onerror=alert(1)&gt;" in body and "&lt;iframe" in body


def test_a_pod_without_findings_or_events_says_so(client_in, demo):
    with_something = {p.pk for p, _ in _pods_named_by_open_findings()}
    quiet = next(p for p in Pod.objects.select_related("cluster").order_by("pk")
                 if p.pk not in with_something and not _events_about(p))
    resp = client_in.get(_url(quiet))
    body = resp.content.decode()
    assert resp.context["open_findings"] == [] and resp.context["events"] == []
    assert "No open finding involves this pod." in body
    assert "No stored Event names this pod" in body


def test_the_pod_page_runs_the_same_queries_with_many_findings_and_events(client_in, demo, django_assert_max_num_queries):
    pod = Pod.objects.select_related("cluster").filter(cluster__name="demo").order_by("pk").first()
    _add_finding(pod, summary="one", next_action="x")
    _add_event(pod, shape="core", reason="One", message="one")
    with CaptureQueriesContext(connection) as small:
        client_in.get(_url(pod))
    for i in range(25):
        _add_finding(pod, summary=f"f{i}", next_action="x", main_kind=("ResourceClaim", "Pod", "Node")[i % 3])
        _add_event(pod, shape=("core", "events")[i % 2], reason=f"R{i}", message=f"m{i}", count=i + 1)
    with django_assert_max_num_queries(len(small.captured_queries)):
        resp = client_in.get(_url(pod))
    assert len(resp.context["open_findings"]) >= 26 and len(resp.context["events"]) >= 26
    with django_assert_max_num_queries(12):
        client_in.get(_url(pod))


def test_the_pod_page_keeps_its_claims_panel(client_in, demo):
    pod = next(p for p in Pod.objects.select_related("cluster").order_by("pk") if p.claim_names)
    resp = client_in.get(_url(pod))
    body = resp.content.decode()
    assert all(c.name in body for c in resp.context["claims"])
    assert copy.copy(resp.context["refs"]) == (pod.raw.get("spec") or {}).get("resourceClaims")
