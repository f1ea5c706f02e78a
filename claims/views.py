"""Claim pages: claims list, claim page, pod page.

Thin views: rows adapted for templates; findings come from ``claims.models.Finding``,
written after each sync by the diagnosis engine.
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, render
from django.views.decorators.vary import vary_on_headers

from inventory.models import AllocationResult, Pod, Reservation, ResourceClaim

from .filters import ClaimFilter

PAGE_SIZE = 50


def _template(request, name: str, partial: str) -> str:
    return f"{name}#{partial}" if request.htmx and not request.htmx.boosted else name


@vary_on_headers("HX-Request")
def claim_list(request):
    qs = ResourceClaim.objects.select_related("cluster").defer("raw")
    f = ClaimFilter(request.GET, queryset=qs)
    page = Paginator(f.qs, PAGE_SIZE).get_page(request.GET.get("page"))
    claims = list(page.object_list)
    ids = [c.pk for c in claims]
    results: dict[int, list[AllocationResult]] = {}
    for r in AllocationResult.objects.filter(claim_id__in=ids).select_related("device"):
        results.setdefault(r.claim_id, []).append(r)
    for c in claims:
        c.result_rows = results.get(c.pk, [])
    params = request.GET.copy()
    params.pop("page", None)
    ctx = {"filter": f, "page": page, "claims": claims, "params": params.urlencode()}
    return render(request, _template(request, "claims/claim_list.html", "table"), ctx)


def claim_detail(request, cluster_name: str, namespace: str, name: str):
    claim = get_object_or_404(
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
    ctx = {
        "claim": claim,
        "results": list(claim.results.all()),
        "reservations": reservations,
        "owner_uid": owner_uid,
        "owner": owner,
        "constraints": spec.get("constraints") or [],
        "config": spec.get("config") or [],
        "raw_requests": spec.get("requests") or [],
    }
    return render(request, "claims/claim_detail.html", ctx)


def pod_detail(request, cluster_name: str, namespace: str, name: str):
    pod = get_object_or_404(Pod.objects.select_related("cluster"), cluster__name=cluster_name, namespace=namespace, name=name)
    claims = ResourceClaim.objects.filter(cluster=pod.cluster, namespace=pod.namespace, name__in=pod.claim_names).defer("raw")
    refs = (pod.raw.get("spec") or {}).get("resourceClaims") or []
    ctx = {"pod": pod, "claims": claims, "refs": refs, "conditions": (pod.raw.get("status") or {}).get("conditions") or []}
    return render(request, "claims/pod_detail.html", ctx)
