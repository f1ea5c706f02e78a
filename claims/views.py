"""Claim pages: stuck queue, claims list, claim page, pod page, runbooks.

Thin views: rows adapted for templates; findings come from ``claims.models.Finding``,
written after each sync by ``claims.store``. Every page runs a fixed number of queries,
whatever the number of rows (tests guard it).
"""

from __future__ import annotations

import json
from datetime import datetime

from django.core.paginator import Paginator
from django.db.models import F, Prefetch, Q
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.vary import vary_on_headers
from django_tables2 import RequestConfig

from inventory import listexport
from inventory import queries as inventory_queries
from inventory.filters import filtered
from inventory.htmx import render_live
from inventory.lookup import by_name
from inventory.models import (
    AllocationResult,
    ClaimState,
    KubeObject,
    Pod,
    Reservation,
    ResourceClaim,
    SourceKind,
)
from inventory.object_views import TEMPLATE_KIND, extended_resources, stored_class_names
from inventory.parse import is_subdomain
from inventory.records import parse_event

from .context_processors import NAV_SEVERITIES
from .filters import ClaimFilter, StuckFilter
from .links import attach_object_links
from .models import ClaimTransition, Finding, TransitionField
from .runbooks import UnknownCategory, placeholder_values, render_runbook
from .tables import CLAIM_EXPORT, FINDING_EXPORT, ClaimTable, FindingTable, attach_claim_rows

PAGE_SIZE = 50
EVENT_LIMIT = 50
POD_FINDING_LIMIT = 50
# Open findings first, then the most recently resolved.
F_RESOLVED_LAST = F("resolved_at").desc(nulls_first=True)


def reference_times(clusters) -> dict[int, datetime]:
    """The one moment every age on a page is measured to, per cluster (pk -> time): a live
    cluster's is now; a snapshot's is its own clock, the newest diagnosis time stored for it
    (its findings' ``last_seen``, else its transitions' ``observed_at``), else a week-old
    snapshot would show every claim as a week stuck. One "now" per cluster, so a finding, the
    lifecycle panel and the list ages on one page agree. At most 2 queries, none for live
    clusters."""
    from django.db.models import Max

    now = timezone.now()
    by_pk = {c.pk: c for c in clusters}
    out = {pk: now for pk in by_pk}
    missing = {pk for pk, c in by_pk.items() if c.source_kind == SourceKind.SNAPSHOT}
    for model, field in ((Finding, "last_seen"), (ClaimTransition, "observed_at")):
        if not missing:
            break
        rows = model.objects.filter(cluster_id__in=missing).values_list("cluster_id").annotate(t=Max(field)).order_by()
        for pk, t in rows:
            if t is not None:
                out[pk] = t
                missing.discard(pk)
    return out


def attach_age_reference(findings: list[Finding], clock: dict[int, datetime] | None = None) -> None:
    """``f.age_at``: the moment ages are measured to (``reference_times`` of its cluster)."""
    clock = clock if clock is not None else reference_times({f.cluster for f in findings})
    for f in findings:
        f.age_at = clock.get(f.cluster_id) or timezone.now()


def _paginate(request, table):
    """Order ``table`` by ``?sort=`` (its columns decide how) and give its ``?page=`` (out of
    range: the last page, as ``Paginator.get_page`` does) of the ordered queryset's objects:
    one COUNT and one page of rows (the table's own rows would load every object to count them)."""
    RequestConfig(request, paginate=False).configure(table)
    return Paginator(table.data.data, PAGE_SIZE).get_page(request.GET.get("page"))


@vary_on_headers("HX-Request")
def stuck(request):
    """Open findings, most severe then oldest first; the table refreshes every 10 s."""
    qs = Finding.objects.open().select_related("cluster").defer("evidence")
    f = StuckFilter(request.GET, queryset=qs)
    if fmt := listexport.requested(request):
        return listexport.refused(f) or listexport.response(fmt, "stuck", filtered(f), FINDING_EXPORT)
    table = FindingTable(filtered(f))
    page = _paginate(request, table)
    findings = list(page.object_list)
    attach_age_reference(findings)
    attach_object_links(findings)
    params = request.GET.copy()
    params.pop("page", None)
    ctx = {"filter": f, "table": table, "page": page, "findings": findings, "params": params.urlencode(),
           # The navigation's number: the critical and warning ones (claims.context_processors).
           "actionable": filtered(f).filter(severity__in=NAV_SEVERITIES).count()}
    return render_live(request, "claims/stuck.html", "table", ctx)


@vary_on_headers("HX-Request")
def claim_list(request):
    qs = ResourceClaim.objects.select_related("cluster").defer("raw")
    # ``?sort=`` is the table's (ClaimTable's columns); the filter's own ordering is the API's.
    params = request.GET.copy()
    params.pop("sort", None)
    f = ClaimFilter(params, queryset=qs)
    f.filters.pop("sort", None)  # the column headers sort the page; no second "Sort" field
    if fmt := listexport.requested(request):
        return listexport.refused(f) or listexport.response(fmt, "claims", filtered(f), CLAIM_EXPORT, hook=attach_claim_rows)
    table = ClaimTable(filtered(f), one_cluster=bool(f.is_valid() and f.form.cleaned_data.get("cluster")))
    page = _paginate(request, table)
    claims = list(page.object_list)
    attach_claim_rows(claims)
    clock = reference_times({c.cluster for c in claims})
    for c in claims:
        c.age_at = clock.get(c.cluster_id)
    params = request.GET.copy()
    params.pop("page", None)
    ctx = {"filter": f, "table": table, "page": page, "claims": claims, "params": params.urlencode()}
    return render_live(request, "claims/claim_list.html", "table", ctx)


def _events(cluster, namespace: str, claim_names: set[str], pod_names: set[str]) -> list:
    """Events in ``namespace`` about the named ResourceClaims and Pods, both Event shapes
    (``involvedObject`` of core/v1, ``regarding`` of events.k8s.io/v1), newest first, at most
    ``EVENT_LIMIT``. One query."""
    names = claim_names | pod_names
    if not names:
        return []
    rows = KubeObject.objects.filter(cluster=cluster, kind="Event", namespace=namespace, subject_name__in=sorted(names),
                                     subject_kind__in=("ResourceClaim", "Pod")).values_list("raw", flat=True)  # fmt: skip
    events = []
    for raw in rows[: EVENT_LIMIT * 4]:
        e = parse_event(raw)
        if (e.involved_kind == "ResourceClaim" and e.involved_name in claim_names) or (
            e.involved_kind == "Pod" and e.involved_name in pod_names
        ):
            events.append(e)
    events.sort(key=lambda e: (e.last or e.first or ""), reverse=True)
    return events[:EVENT_LIMIT]


def _pod_findings(pod: Pod) -> list[Finding]:
    """Open findings whose ``involved`` names the pod (kind Pod, its namespace and name), most
    severe then oldest first, at most ``POD_FINDING_LIMIT``. One query: the JSON text is
    narrowed by the quoted pod name (a DNS subdomain, so JSON writes it verbatim on every
    backend), then the exact ``{kind, namespace, name}`` is checked here."""
    quoted = json.dumps(pod.name)
    candidates = (
        Finding.objects.open().filter(cluster=pod.cluster)
        .filter(Q(kind="Pod", namespace=pod.namespace, name=pod.name) | Q(involved__icontains=quoted))
        .select_related("cluster").defer("evidence").stuck_order()[: POD_FINDING_LIMIT * 4]
    )
    out = []
    for f in candidates:
        if any(isinstance(o, dict) and o.get("kind") == "Pod" and o.get("namespace") == pod.namespace
               and o.get("name") == pod.name for o in f.involved or []):
            out.append(f)
    return out[:POD_FINDING_LIMIT]


# States in which a claim holds an allocation (a deleting claim may still hold one).
_ALLOCATED_STATES = {ClaimState.ALLOCATED, ClaimState.IN_USE}


def _history(claim: ResourceClaim, transitions: list[ClaimTransition], reserved_now: bool,
             allocated_now: bool) -> dict:
    """Phase milestones of the claim page.

    - ``created``: ``metadata.creationTimestamp``; ``allocated_at``: ``status.allocation``'s
      ``allocationTimestamp`` (Kubernetes >= 1.34), else None.
    - ``first_seen`` / ``first_state``: the first state transition Claimscope recorded
      (``old == ""``): when and in which state the claim was first observed.
    - ``allocated_before_first_seen``: allocated (``allocated_now``: ``status.allocation``
      has results, or the state says so) without an ``allocationTimestamp``: the allocation
      time is unknown, not absent.
    - ``reserved``: the observed transition into ``in_use`` from another state (its time is
      when reservation was seen); ``reserved_before_first_seen``: first seen already in use,
      or ``status.reservedFor`` names a consumer now (``reserved_now``) and no reservation
      was ever observed happening (e.g. first seen deleting with reservedFor kept).
    """
    first = next((t for t in transitions if t.field == TransitionField.STATE and not t.old), None)
    first_state = first.new if first else ""
    reserved = next((t for t in transitions if t.field == TransitionField.STATE and t.new == ClaimState.IN_USE
                     and t.old), None)
    before = reserved is None and (first_state == ClaimState.IN_USE or reserved_now)
    held = allocated_now or reserved_now or claim.state in _ALLOCATED_STATES
    return {
        "created": claim.created,
        "allocated_at": claim.allocated_at,
        "time_to_allocation": (claim.allocated_at - claim.created) if claim.allocated_at and claim.created else None,
        "first_seen": first.observed_at if first else None,
        "first_state": first_state,
        "allocated_before_first_seen": claim.allocated_at is None and held,
        "reserved": reserved,
        "reserved_before_first_seen": before,
    }


def claim_detail(request, cluster_name: str, namespace: str, name: str):
    claim = by_name(
        ResourceClaim.objects.select_related("cluster").prefetch_related(
            Prefetch("results", queryset=AllocationResult.objects.select_related("device")),
            Prefetch("reservations", queryset=Reservation.objects.all()),
        ),
        cluster__name=cluster_name,
        namespace=namespace,
        name=name,
    )
    reservations = list(claim.reservations.all())
    pods = {p.uid: p for p in Pod.objects.filter(cluster=claim.cluster, uid__in=[r.uid for r in reservations]).only("uid", "namespace", "name", "phase", "node_name")}
    for r in reservations:
        r.pod = pods.get(r.uid)
    owner_uid = next((o.get("uid") for o in (claim.raw.get("metadata") or {}).get("ownerReferences") or [] if o.get("kind") == "Pod"), None)
    owner = Pod.objects.filter(cluster=claim.cluster, uid=owner_uid).only("namespace", "name", "phase").first() if owner_uid else None
    spec = (claim.raw.get("spec") or {}).get("devices") or {}
    findings = list(
        Finding.objects.filter(cluster=claim.cluster)
        .filter(Q(claim=claim) | Q(kind="ResourceClaim", namespace=claim.namespace, name=claim.name))
        .select_related("cluster").order_by(F_RESOLVED_LAST, "severity_rank", "-first_seen", "pk")[:30]
    )
    clock = reference_times([claim.cluster])
    attach_age_reference(findings, clock)
    seen_pods = [p for p in (*pods.values(), owner) if p is not None]
    attach_object_links(findings, known=[("ResourceClaim", claim.cluster_id, claim.namespace, claim.name)]
                        + [("Pod", claim.cluster_id, p.namespace, p.name) for p in seen_pods])
    pod_names = {r.name for r in reservations if r.resource == "pods"} | ({owner.name} if owner else set())
    pod_names |= {o["name"] for f in findings for o in f.involved if o.get("kind") == "Pod" and o.get("namespace") == claim.namespace}
    transitions = list(ClaimTransition.objects.filter(cluster=claim.cluster, claim_uid=claim.uid).order_by("observed_at", "pk")[:200])
    results = list(claim.results.all())
    ctx = {
        "claim": claim,
        "results": results,
        "reservations": reservations,
        "owner_uid": owner_uid,
        "owner": owner,
        "constraints": spec.get("constraints") or [],
        "config": spec.get("config") or [],
        "raw_requests": spec.get("requests") or [],
        "open_findings": [f for f in findings if f.resolved_at is None],
        "resolved_findings": [f for f in findings if f.resolved_at is not None],
        "events": _events(claim.cluster, claim.namespace, {claim.name}, pod_names),
        "transitions": transitions,
        "history": _history(claim, transitions, reserved_now=bool(reservations), allocated_now=bool(results)),
        "now": clock[claim.cluster_id],
        "dra": inventory_queries.claim_dra(claim.raw),
        "stored_classes": stored_class_names(claim.cluster),
    }
    return render(request, "claims/claim_detail.html", ctx)


def _template_urls(pod: Pod, refs: list) -> dict[str, str]:
    """Pages of the stored ResourceClaimTemplates the pod's ``spec.resourceClaims`` name, by
    name (one query). Names a template cannot have (cluster text) get no link."""
    names = {n for r in refs if isinstance(r, dict) and isinstance(n := r.get("resourceClaimTemplateName"), str)
             and is_subdomain(n)}
    if not names or not is_subdomain(pod.namespace):
        return {}
    stored = KubeObject.objects.filter(cluster=pod.cluster, kind=TEMPLATE_KIND, namespace=pod.namespace, name__in=names)
    return {n: reverse("inventory:claimtemplate", args=[pod.cluster.name, pod.namespace, n])
            for n in stored.values_list("name", flat=True)}


def pod_detail(request, cluster_name: str, namespace: str, name: str):
    """A pod: its claims, the open findings that involve it and the Events about it."""
    pod = by_name(Pod.objects.select_related("cluster"), cluster__name=cluster_name, namespace=namespace, name=name)
    claims = ResourceClaim.objects.filter(cluster=pod.cluster, namespace=pod.namespace, name__in=pod.claim_names).defer("raw")
    refs = (pod.raw.get("spec") or {}).get("resourceClaims") or []
    findings = _pod_findings(pod)
    clock = reference_times([pod.cluster])
    attach_age_reference(findings, clock)
    attach_object_links(findings, known=[("Pod", pod.cluster_id, pod.namespace, pod.name)])
    ctx = {
        "pod": pod, "claims": claims, "refs": refs, "template_urls": _template_urls(pod, refs), "conditions": (pod.raw.get("status") or {}).get("conditions") or [],
        "extended": sorted(extended_resources(pod).items()),
        "open_findings": findings,
        "events": _events(pod.cluster, pod.namespace, set(), {pod.name}),
        "now": clock[pod.cluster_id],
    }
    return render(request, "claims/pod_detail.html", ctx)


def runbook(request, category: str):
    """A category's runbook; with ``?finding=<id>`` also that finding's involved objects, its
    commands filled in, and the claims holding the devices of the ResourceSlices it names."""
    finding, values, held = None, {}, []
    fid = request.GET.get("finding", "")
    if fid.isdigit():
        finding = Finding.objects.select_related("cluster", "claim").filter(pk=int(fid), category=category).first()
        if finding is not None:
            attach_object_links([finding])
            attach_age_reference([finding])
            values = placeholder_values(finding.involved or [], finding.node_name,
                                        finding.claim.uid if finding.claim else "")
            held = _held_devices(finding)
    try:
        html = render_runbook(category, values)
    except (UnknownCategory, OSError):
        raise Http404("no such diagnosis category") from None
    ctx = {"category": category, "html": html, "finding": finding, "filled": values, "held": held,
           "now": getattr(finding, "age_at", None)}
    return render(request, "claims/runbook.html", ctx)


HELD_LIMIT = 100


def _held_devices(finding: Finding) -> list:
    """Allocated devices of the ResourceSlices a finding names, with their holders (e.g. who
    holds the GPUs a ``capacity_exhausted`` claim waits for), at most ``HELD_LIMIT``. 4 queries."""
    from inventory.models import Device
    from inventory.queries import attach_holders

    slices = [str(o.get("name")) for o in finding.involved or [] if isinstance(o, dict) and o.get("kind") == "ResourceSlice"]
    if not slices:
        return []
    devices = list(Device.objects.filter(cluster=finding.cluster, slice__name__in=slices, allocations__isnull=False)
                   .select_related("cluster").defer("capacity").distinct().order_by("node_name", "name", "pk")[:HELD_LIMIT])
    attach_holders(finding.cluster_id, devices)
    return devices
