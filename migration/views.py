"""Migration pages: the production-readiness checklist and the migration plan, with downloads.

Thin: the checklist comes from stored ``ReadinessEvaluation`` rows (written after each sync
when the result changed, or on demand here); the plan is computed from the stored objects by
the pure planner on each request. Full page for normal requests, a named partial for htmx.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections import defaultdict
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header, urlencode
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from inventory import listexport, yamltext
from inventory.htmx import partial_template
from inventory.models import Cluster, KubeObject
from migration import blockers as b
from migration import planner as p
from migration.evaluation import cluster_plan, diff_items, evaluate_cluster, week_before
from migration.generate import CLUSTER_SCOPED
from migration.models import Attestation, ItemStatus, ReadinessEvaluation, Trigger, attestation_days
from migration.plan_command import summarize, summary_text
from migration.readiness import ATTESTED, ITEMS, PASS, PRODUCTION_ITEMS, TITLES

HISTORY_ROWS = 20
TARGETS = ("1.36", "1.37", "1.35", "1.34")
OPERATOR_GROUPS = ("operator", "admin")
STEP_COLOURS = {p.STEP_DONE: "green", p.STEP_IN_PROGRESS: "blue", p.STEP_TODO: "grey",
                p.STEP_BLOCKED: "red", p.STEP_NOT_NEEDED: "grey"}
SEVERITY_COLOURS = {b.BLOCKER: "red", b.WARNING: "amber", b.INFO: "blue"}
_SAFE_NAME = re.compile(r"^[a-z0-9_][a-z0-9.-]{0,252}$")


def can_attest(user) -> bool:
    """Operators and admins: the ``migration.add_attestation`` permission or group membership."""
    if not user.is_authenticated:
        return False
    return user.has_perm("migration.add_attestation") or user.groups.filter(name__in=OPERATOR_GROUPS).exists()


# Kinds the plan translates (besides bare Pods): the cluster with most of them is the one a
# visitor of the plan page most likely wants to see first.
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job", "CronJob", "DaemonSet")


def _busiest_cluster_id() -> int | None:
    """The cluster with the most stored workload controllers (one aggregate query; ties by
    name), or None when no cluster has any."""
    return (
        KubeObject.objects.filter(kind__in=WORKLOAD_KINDS).values("cluster_id").annotate(n=Count("pk"))
        .order_by("-n", "cluster__name").values_list("cluster_id", flat=True).first()
    )


def _selected_cluster(request, prefer_busiest: bool = False) -> tuple[Cluster | None, list[Cluster]]:
    """``?cluster=`` (404 when unknown), else the first by name, or with ``prefer_busiest``
    the one with the most workload controllers (``_busiest_cluster_id``)."""
    clusters = list(Cluster.objects.only("name").order_by("name"))
    name = request.GET.get("cluster") or ""
    if name:
        chosen = next((c for c in clusters if c.name == name), None)
        if chosen is None:
            raise Http404("no such cluster")
        return chosen, clusters
    if prefer_busiest and clusters:
        busiest = _busiest_cluster_id()
        chosen = next((c for c in clusters if c.pk == busiest), None)
        if chosen is not None:
            return chosen, clusters
    return (clusters[0] if clusters else None), clusters


def _status(value: str | None) -> dict[str, str]:
    value = value or ""
    label = ItemStatus(value).label if value in ItemStatus.values else (value or "—")
    return {"value": value, "label": label, "colour": ItemStatus.colour(value)}


class AttestationForm(forms.ModelForm):
    evidence_url = forms.URLField(max_length=1000, assume_scheme="https")
    note = forms.CharField(required=False, max_length=500, widget=forms.TextInput(attrs={"placeholder": "what the link shows"}))

    class Meta:
        model = Attestation
        fields = ["item_id", "evidence_url", "note"]


# --- readiness --------------------------------------------------------------------------------


EVIDENCE_SHOWN = 10  # evidence lines per checklist item on the page


def _readiness_context(request, cluster: Cluster | None) -> dict[str, Any]:
    now = timezone.now()
    ctx: dict[str, Any] = {"cluster": cluster, "now": now, "can_attest": can_attest(request.user),
                           "attest_days": attestation_days()}
    if cluster is None:
        return ctx
    history = list(ReadinessEvaluation.objects.filter(cluster=cluster)[: HISTORY_ROWS + 1])
    latest = history[0] if history else None
    attestations = list(Attestation.objects.filter(cluster=cluster)[:200])
    by_pk = {a.pk: a for a in attestations}
    newest_for: dict[str, Attestation] = {}
    for a in attestations:  # newest first
        newest_for.setdefault(a.item_id, a)
    for a in attestations:
        a.valid_now = a.is_valid(now)
        a.title = TITLES.get(a.item_id, a.item_id)
        a.expires_soon = a.valid_now and (a.expires_at - now).days < 14
    items = []
    if latest is not None:
        for item in latest.items:
            att = by_pk.get(item.get("attestation_id")) or newest_for.get(item["id"])
            evidence = item.get("evidence") or []
            # A line per node would be thousands on a fleet: the first few, the count of the
            # rest, and the whole evaluation in the API.
            items.append({**item, "badge": _status(item["status"]), "att": att,
                          "evidence_shown": evidence[:EVIDENCE_SHOWN],
                          "evidence_more": max(0, len(evidence) - EVIDENCE_SHOWN)})
        ctx["evaluation_api_url"] = reverse("migration-api:readiness-detail", args=[latest.pk])
        needed = [n for n, item in enumerate(items, 1) if item["id"] in PRODUCTION_ITEMS]
        ctx["production_needs"] = f"{needed[0]}-{needed[-1]}" if needed else ""
        ctx["production_missing"] = [n for n in needed if items[n - 1]["status"] not in (PASS, ATTESTED)]
    rows = []
    for i, ev in enumerate(history[:HISTORY_ROWS]):
        prev = history[i + 1] if i + 1 < len(history) else None
        changes = []
        if prev is not None:
            old = prev.statuses()
            changes = [
                {"title": TITLES.get(k, k), "old": _status(old.get(k)), "new": _status(v)}
                for k, v in ev.statuses().items() if old.get(k) != v
            ]
        rows.append({"ev": ev, "changes": changes, "first": prev is None})
    week = week_before(latest) if latest is not None else None
    ctx.update({
        "latest": latest,
        "items": items,
        "history": rows,
        "week": week,
        "week_diff": [
            {**d, "old_badge": _status(d["old"]), "new_badge": _status(d["new"])} for d in diff_items(week, latest)
        ] if week is not None and latest is not None else [],
        "attestations": attestations,
        "form": AttestationForm(),
        "item_choices": ITEMS,
    })
    return ctx


# The reader's last cluster on the readiness page: a cookie (a cluster name, nothing secret),
# so remembering costs no session write.
READINESS_COOKIE = "claimscope_readiness_cluster"


def _readiness_cluster(request) -> tuple[Cluster | None, list[Cluster]]:
    """``?cluster=``, else the reader's last choice (``READINESS_COOKIE``), else the cluster
    whose checklist was evaluated last (not the first by name, which may have no history)."""
    if request.GET.get("cluster"):
        return _selected_cluster(request)
    clusters = list(Cluster.objects.only("name").order_by("name"))
    remembered = request.COOKIES.get(READINESS_COOKIE) or ""
    chosen = next((c for c in clusters if c.name == remembered), None)
    if chosen is None:
        newest = ReadinessEvaluation.objects.order_by("-evaluated_at", "-pk").values_list("cluster_id", flat=True).first()
        chosen = next((c for c in clusters if c.pk == newest), clusters[0] if clusters else None)
    return chosen, clusters


@vary_on_headers("HX-Request")
def readiness(request):
    cluster, clusters = _readiness_cluster(request)
    ctx = _readiness_context(request, cluster)
    ctx["clusters"] = clusters
    response = render(request, partial_template(request, "migration/readiness.html", "readiness"), ctx)
    if cluster is not None and request.GET.get("cluster"):
        response.set_cookie(READINESS_COOKIE, cluster.name, max_age=90 * 86400, samesite="Lax",
                            secure=settings.SESSION_COOKIE_SECURE, httponly=True)
    return response


def _back_to_readiness(request, cluster: Cluster, ctx_extra: dict[str, Any] | None = None):
    if request.htmx:
        ctx = _readiness_context(request, cluster)
        ctx.update(ctx_extra or {})
        return render(request, "migration/readiness.html#readiness", ctx)
    return redirect(f"{reverse('migration:readiness')}?{urlencode({'cluster': cluster.name})}")


@require_POST
def attest(request, cluster_name: str):
    """Record an attestation (operators only), then re-evaluate the checklist."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    if not can_attest(request.user):
        raise PermissionDenied("only operators may attest readiness items")
    form = AttestationForm(request.POST)
    if not form.is_valid():
        # Shown again cut to what the fields take: a pasted document is not echoed whole.
        form.data = request.POST.copy()
        for name in ("note", "evidence_url"):
            form.data[name] = form.data.get(name, "")[:form.fields[name].max_length]
        ctx = _readiness_context(request, cluster)
        ctx.update({"clusters": list(Cluster.objects.only("name").order_by("name")), "form": form})
        return render(request, "migration/readiness.html", ctx, status=400)
    att = form.save(commit=False)
    att.cluster = cluster
    att.attested_by = request.user
    att.attested_by_name = request.user.get_username()
    att.attested_at = timezone.now()
    att.save()
    evaluate_cluster(cluster, att.attested_at, Trigger.ATTESTATION)
    return _back_to_readiness(request, cluster)


@require_POST
def evaluate(request, cluster_name: str):
    """Re-evaluate the checklist now (operators only); stores a row only if it changed."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    if not can_attest(request.user):
        raise PermissionDenied("only operators may re-evaluate")
    before = ReadinessEvaluation.objects.filter(cluster=cluster).first()
    row, created = evaluate_cluster(cluster, timezone.now(), Trigger.MANUAL)
    if not created:
        message = f"Re-evaluated: nothing changed since the evaluation of {row.evaluated_at:%Y-%m-%d %H:%M} UTC."
    elif before is None:
        message = "Evaluated for the first time."
    else:
        changed = diff_items(before, row)
        titles = ", ".join(d["title"] for d in changed[:5]) + ("…" if len(changed) > 5 else "")
        message = f"Re-evaluated: {len(changed)} item{'s' if len(changed) != 1 else ''} changed ({titles})."
    if not request.htmx:
        messages.info(request, message)
    return _back_to_readiness(request, cluster, {"evaluate_message": message})


# --- plan -------------------------------------------------------------------------------------


def _dump(obj: dict[str, Any]) -> str:
    return yamltext.dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=False)


def _target(request) -> tuple[str, str]:
    """``?target=`` (default the newest) and "", or the default and why the one given is
    refused: planning silently for another version would pass for the link's plan."""
    value = request.GET.get("target") or TARGETS[0]
    if value in TARGETS:
        return value, ""
    return TARGETS[0], f"Target Kubernetes {value!r} is not one we plan for: one of {', '.join(TARGETS)}."


def _bundle_plan(request, cluster: Cluster) -> p.MigrationPlan | HttpResponse:
    """The plan a bundle download is cut from, or the 400 for a ``?target=`` we do not plan
    for: a bundle for another version than the link's would be applied as if it were its."""
    target, error = _target(request)
    if error:
        return listexport.refusal({"target": [error]})
    return cluster_plan(cluster, target)


def _plan_rows(plan: p.MigrationPlan) -> list[dict[str, Any]]:
    by_ref = {wp.workload.ref: wp for wp in plan.workload_plans}
    rows = []
    for w in plan.workloads:
        wp = by_ref.get(w.ref)
        rows.append({
            "w": w,
            "plan": wp,
            "template_yaml": _dump(wp.template.obj) if wp and wp.template else "",
            "patched_yaml": _dump(wp.patched.obj) if wp and wp.patched else "",
            "stopgap_yaml": _dump(wp.stopgap.obj) if wp and wp.stopgap else "",
            "device_classes": sorted({
                str(r["exactly"]["deviceClassName"]) for r in wp.template.obj["spec"]["spec"]["devices"]["requests"]
            }) if wp and wp.template else [],
        })
    return rows


@vary_on_headers("HX-Request")
def plan(request):
    cluster, clusters = _selected_cluster(request, prefer_busiest=True)
    target, target_error = _target(request)
    ctx: dict[str, Any] = {"cluster": cluster, "clusters": clusters, "targets": TARGETS, "target": target,
                           "target_error": target_error}
    if cluster is not None and not target_error:
        result = cluster_plan(cluster, target)
        rows = _plan_rows(result)
        namespaces = sorted({r["w"].ref.namespace or "default" for r in rows})
        kinds = sorted({r["w"].ref.kind for r in rows})
        ns = request.GET.get("namespace") or ""
        kind = request.GET.get("kind") or ""
        shown = [r for r in rows if (not ns or (r["w"].ref.namespace or "default") == ns) and (not kind or r["w"].ref.kind == kind)]
        findings_by_sev: dict[str, list[b.Finding]] = defaultdict(list)
        for f in result.findings:
            findings_by_sev[f.severity].append(f)
        ctx.update({
            "plan": result,
            "rows": shown,
            "row_total": len(rows),
            "device_plugin_total": sum(1 for r in rows if r["w"].uses_device_plugin),
            "namespaces": namespaces,
            "kinds": kinds,
            "ns": ns,
            "kind": kind,
            "steps": [{"s": s, "colour": STEP_COLOURS.get(s.status, "grey")} for s in result.steps],
            "findings": [{"f": f, "colour": SEVERITY_COLOURS.get(f.severity, "grey")} for f in result.findings],
            "bundles": [{"ns": k, "file": _filename(k)} for k in result.bundles],
            "stopgap_bundles": [{"ns": k, "text": v} for k, v in result.stopgap_bundles.items()],
            "cluster_scoped": CLUSTER_SCOPED,
            "query": urlencode({"target": target}),
        })
    return render(request, partial_template(request, "migration/plan.html", "workloads"), ctx)


def _filename(name: str) -> str:
    """The namespace itself when it is a DNS label (always, in a real cluster); otherwise a
    slug plus a hash of it. A snapshot may say anything, and the name lands in URLs, the
    Content-Disposition header and zip entry names."""
    if _SAFE_NAME.match(name):
        return name
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40]
    return f"ns-{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _find_bundle(bundles: dict[str, str], file_stem: str) -> str | None:
    if file_stem in bundles:
        return bundles[file_stem]
    return next((text for ns, text in bundles.items() if _filename(ns) == file_stem), None)


def _yaml_response(text: str, filename: str) -> HttpResponse:
    resp = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    resp["Content-Disposition"] = content_disposition_header(True, filename)
    resp["X-Content-Type-Options"] = "nosniff"
    return resp


def bundle(request, cluster_name: str, namespace: str):
    """One namespace's bundle: ResourceClaimTemplates, then the patched workloads."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    result = _bundle_plan(request, cluster)
    if isinstance(result, HttpResponse):
        return result
    text = _find_bundle(result.stopgap_bundles if request.GET.get("stopgap") else result.bundles, namespace)
    if text is None:
        raise Http404("no bundle for this namespace")
    prefix = "stopgap-" if request.GET.get("stopgap") else ""
    return _yaml_response(text, f"{cluster.name}-{prefix}{_filename(namespace)}.yaml")


_YAML_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # no line break may end the comment


def bundle_all(request, cluster_name: str):
    """Every namespace's bundle as one multi-document YAML file (``kubectl apply -f`` ready)."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    result = _bundle_plan(request, cluster)
    if isinstance(result, HttpResponse):
        return result
    text = "".join(t if t.endswith("\n") else t + "\n" for t in result.bundles.values())
    if not text:  # an empty file would read as "nothing to do", not as "nothing could be translated"
        errors = len(result.errors)
        text = (f"# No workload of cluster {_YAML_UNSAFE.sub('?', cluster.name)} was translated"
                + (f": {errors} plan error(s), listed on the migration plan page.\n" if errors else ": none asks for a GPU.\n"))
    return _yaml_response(text, f"{cluster.name}-dra-migration.yaml")


def bundle_zip(request, cluster_name: str):
    """A zip: ``<namespace>.yaml`` per namespace, ``stopgap/``, ``summary.json``, ``summary.txt``."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    result = _bundle_plan(request, cluster)
    if isinstance(result, HttpResponse):
        return result
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for ns, text in result.bundles.items():
            zf.writestr(f"{_filename(ns)}.yaml", text)
        for ns, text in result.stopgap_bundles.items():
            zf.writestr(f"stopgap/{_filename(ns)}.yaml", text)
        summary = summarize(result)
        zf.writestr("summary.json", json.dumps(summary, indent=2) + "\n")
        zf.writestr("summary.txt", summary_text(summary))
    resp = HttpResponse(buf.getvalue(), content_type="application/zip")
    resp["Content-Disposition"] = content_disposition_header(True, f"{cluster.name}-dra-migration.zip")
    return resp
