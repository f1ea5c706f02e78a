"""Inventory pages: overview, cluster, node list and page, device search and page, the header search.

Views are thin: queries live in ``inventory.queries``; templates render named partials for
htmx requests (``page.html#partial``) and the full page otherwise.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q, Sum
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.vary import vary_on_headers

from . import listexport, object_views, queries, search
from .filters import DeviceFilter, NodeFilter, filtered
from .htmx import partial_template, render_live
from .lookup import by_name
from .models import FREE, Cluster, Device, Node, ResourceSlice, SyncRun
from .tables import DEVICE_EXPORT, NODE_EXPORT, BoundedRequestConfig, DeviceTable, NodeTable
from .templatetags.claimscope import pct

PAGE_SIZE = 50


@vary_on_headers("HX-Request")
def overview(request, cluster_name: str | None = None):
    cluster = get_object_or_404(Cluster, name=cluster_name) if cluster_name else None
    clusters = queries.with_dra_counts(queries.cluster_rows())
    shown = [r for r in clusters if cluster is None or r["cluster"] == cluster]
    totals = {k: sum(r.get(k, 0) for r in shown) for k in ("nodes", "gpus", "migs", "allocated", "free", "not_ready", "unknown", "plugin_gpus", "plugin_migs")}
    problem_nodes = queries.scoped(Node.objects.select_related("cluster"), cluster).filter(
        Q(ready=False) | Q(unschedulable=True)
    )[:10]
    ctx = {
        "cluster": cluster,
        "clusters": clusters,
        "totals": totals,
        # The bar's share: what is neither (a NotReady node's, a tainted device) is in neither.
        "allocated_pct": pct(totals["allocated"], totals["allocated"] + totals["free"]),
        **queries.device_aggregates(cluster, clusters),
        "problem_nodes": problem_nodes,
        "sync_runs": SyncRun.objects.filter(cluster=cluster)[:10] if cluster else None,
    }
    # Under dynamic MIG a GPU with a placement held is no free device, though more placements
    # may fit on it: said under the card, so it does not contradict the MIG table.
    ctx["dynamic_mig_free"] = sum(p["free"] for p in ctx.get("profiles") or () if p.get("placements"))
    # Without a broker (the embedded default) no worker or beat runs: nothing syncs on a schedule.
    ctx["scheduled"] = bool(settings.CELERY_BROKER_URL)
    # ?part=syncs: the recent runs alone, which the page fetches again once "Sync now" ran.
    part = "syncs" if cluster is not None and request.GET.get("part") == "syncs" else "summary"
    return render_live(request, "inventory/overview.html", part, ctx)


@vary_on_headers("HX-Request")
def node_list(request):
    # Labels are read to tell a GPU node nothing publishes (``Node.unpublished_gpus``).
    qs = Node.objects.select_related("cluster").defer("raw").annotate(free_sort=FREE)
    f = NodeFilter(request.GET, queryset=qs)
    if fmt := listexport.requested(request):
        return listexport.refused(f) or listexport.response(fmt, "nodes", filtered(f).order_by("cluster__name", "name", "pk"), NODE_EXPORT)
    table = NodeTable(filtered(f))
    BoundedRequestConfig(request, paginate={"per_page": PAGE_SIZE}).configure(table)
    return render(request, partial_template(request, "inventory/node_list.html", "table"), {"filter": f, "table": table})


def node_detail(request, cluster_name: str, name: str):
    node = by_name(Node.objects.select_related("cluster"), cluster__name=cluster_name, name=name)
    slices = list(ResourceSlice.objects.filter(cluster=node.cluster, node_name=node.name).defer("raw"))
    # A superseded pool generation's devices are not published (a driver restarting): not shown.
    stale = queries.superseded_among(node.cluster, slices)
    devices = [d for d in Device.objects.filter(cluster=node.cluster, node_name=node.name) if d.slice_id not in stale]
    queries.attach_holders(node.cluster_id, devices)
    dra = queries.dra_states(node.cluster, [node.name]).get(node.name)
    for d in devices:
        d.dra = dra.devices.get((d.driver, d.pool, d.name)) if dra else None
    gpus, others = queries.gpu_tree(devices, dra.counter_consumers if dra else ())
    for g in gpus:  # under dynamic MIG what still fits a GPU is what its counters allow
        if g["dynamic"] and dra is not None:
            g["fit_more"] = {p: n for p, n in (dra.gpu_allocatable(g["uuid"]) or {}).items() if n}
    for s in slices:
        s.superseded = s.pk in stale
    status = (node.raw.get("status") or {}) if isinstance(node.raw, dict) else {}
    ctx = {
        "node": node,
        "conditions": status.get("conditions") or [],
        "capacity": status.get("capacity") or {},
        "allocatable": status.get("allocatable") or {},
        "events": object_views.node_events(node),
        "device_plugin_gpus": node.device_plugin_gpus,
        "gpus": gpus,
        "others": others,
        "free_by_profile": queries.free_by_profile(gpus) if not (dra and dra.counter_consumers) else None,
        "allocatable_now": dra.allocatable_now_by_profile if dra else None,
        "dra": dra,
        "free_now": dra.free_count() if dra else None,
        "instances_now": len(dra.instances()) if dra else None,
        "slices": slices,
        "taints": (node.raw.get("spec") or {}).get("taints") or [],
        "unplaceable": node.unplaceable,
    }
    return render(request, "inventory/node_detail.html", ctx)


@vary_on_headers("HX-Request")
def device_list(request):
    qs = Device.objects.select_related("cluster").defer("capacity")
    f = DeviceFilter(request.GET, queryset=qs)
    ordered = filtered(f).order_by("cluster__name", "node_name", "driver", "name", "pk")
    if fmt := listexport.requested(request):
        return listexport.refused(f) or listexport.response(fmt, "devices", ordered, DEVICE_EXPORT, hook=lambda rows: queries.attach_holders(None, rows))
    table = DeviceTable(ordered)
    BoundedRequestConfig(request, paginate={"per_page": PAGE_SIZE}).configure(table)
    devices = [row.record for row in table.page.object_list]
    queries.attach_holders(None, devices)
    ctx = {"filter": f, "table": table, "devices": devices}
    # "No devices match" would send the reader to refine a search that cannot match: the
    # cluster publishes no DRA device at all (its GPUs, if any, on the device plugin).
    chosen = f.form.cleaned_data.get("cluster") if f.is_bound and f.is_valid() else None
    if chosen is not None and not devices and not Device.objects.filter(cluster=chosen).exists():
        plugin = Node.objects.filter(cluster=chosen).aggregate(gpus=Sum("plugin_gpu_count"), migs=Sum("plugin_mig_count"))
        ctx["no_dra"] = {"cluster": chosen, "plugin_gpus": plugin["gpus"] or 0, "plugin_migs": plugin["migs"] or 0,
                         # slices that list no device: a driver running with an empty pool
                         "slices": ResourceSlice.objects.filter(cluster=chosen).exists()}
    return render(request, partial_template(request, "inventory/device_list.html", "table"), ctx)


def device_detail(request, pk: int):
    device = get_object_or_404(Device.objects.select_related("cluster", "slice"), pk=pk)
    queries.attach_holders(device.cluster_id, [device])
    parent = children = None
    if device.parent_uuid:
        parent = Device.objects.filter(cluster=device.cluster, uuid=device.parent_uuid).first()
    if device.uuid:
        children = list(Device.objects.filter(cluster=device.cluster, parent_uuid=device.uuid))
    siblings = None
    if device.parent_uuid and not parent:
        siblings = list(Device.objects.filter(cluster=device.cluster, parent_uuid=device.parent_uuid).exclude(pk=device.pk))
    published = device.published()
    state = None
    if device.node_name:
        node_state = queries.dra_states(device.cluster, [device.node_name]).get(device.node_name)
        state = node_state.devices.get((device.driver, device.pool, device.name)) if node_state else None
    ctx = {
        "device": device, "parent": parent, "children": children, "siblings": siblings,
        # Listed only by an older generation of its pool: the scheduler does not offer it.
        "superseded": device.slice_id is not None and ResourceSlice.objects.filter(
            cluster_id=device.cluster_id, driver=device.slice.driver, pool=device.slice.pool,
            pool_generation__gt=device.slice.pool_generation).exists(),
        "attributes": published.attributes if published else None,
        "dra": state, "dra_holders": queries.dra_holders(state),
        # Several holders are a conflict only for an unshared device, admin access aside.
        "double_allocated": len(state.sharers) > 1 and not state.device.allow_multiple_allocations if state else len(device.holders) > 1,
    }  # fmt: skip
    return render(request, "inventory/device_detail.html", ctx)


def search_page(request):
    """The header search (``?q=``): matches grouped by kind; straight to the object when
    exactly one matches (see ``inventory.search``)."""
    result = search.search(request.GET.get("q", ""))
    only = result.single()
    if only is not None:
        return redirect(only.url)
    return render(request, "inventory/search.html", {"result": result, "max_term": search.MAX_TERM})


def api_token(request):
    """The reader's own API token (DRF ``authtoken``) for scripts: shown, made, or replaced
    (POST; replacing revokes the old key at once). The key is shown only right after it is
    made: a page left open on a shared screen does not show it again."""
    from rest_framework.authtoken.models import Token

    token = Token.objects.filter(user=request.user).first()
    new_key = ""
    if request.method == "POST":
        if token is not None:
            token.delete()
        if request.POST.get("action") != "revoke":
            token = Token.objects.create(user=request.user)
            new_key = token.key
        else:
            token = None
    return render(request, "inventory/api_token.html", {"token": token, "new_key": new_key})
