"""Pages for the DRA objects themselves: the clusters index, DeviceClasses, ResourceSlices
(with their devices), ResourceClaimTemplates, and an escaped YAML view of any stored object.

Every page runs a fixed number of queries; lists are paginated. Cluster text is rendered
only through autoescaping templates (the YAML is plain text in a ``<pre>``).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from . import queries, yamltext
from .capacity import PoolState, extended_resource_classes, invalid_pools
from .filters import MAX_TERM
from .lookup import by_name
from .models import Cluster, Device, DeviceClass, KubeObject, Node, Pod, ResourceClaim, ResourceSlice
from .records import parse_object
from .tables import BoundedRequestConfig, ClassDeviceTable, SliceDeviceTable

PAGE_SIZE = 50
TEMPLATE_KIND = "ResourceClaimTemplate"
POOL_SLICES = 50  # a pool's other slices listed on a slice's page
# URL word -> (model, kind shown). ``object``: any other kind (KubeObject rows).
YAML_MODELS: dict[str, tuple[Any, str]] = {
    "node": (Node, "Node"),
    "deviceclass": (DeviceClass, "DeviceClass"),
    "resourceslice": (ResourceSlice, "ResourceSlice"),
    "resourceclaim": (ResourceClaim, "ResourceClaim"),
    "pod": (Pod, "Pod"),
    "object": (KubeObject, ""),
}


def stored_class_names(cluster: Cluster) -> set[str]:
    """Names of the cluster's stored DeviceClasses: a link to any other would be a 404."""
    return set(DeviceClass.objects.filter(cluster=cluster).values_list("name", flat=True))


def extended_resources(pod: Pod) -> dict[str, str]:
    """Extended resources the pod asks for that one of its cluster's stored DeviceClasses
    serves (resource name -> class name, ``capacity.extended_resource_classes``): DRA serves
    them through the claim the scheduler makes once it places the pod."""
    try:
        record = parse_object(pod.raw)
    except ValueError:
        return {}
    classes = DeviceClass.objects.filter(cluster_id=pod.cluster_id).only("name", "extended_resource_name")
    return extended_resource_classes(record, classes)


def cluster_list(request):
    """Every cluster with its totals, last sync and object counts (a fixed number of queries,
    and one per cluster for its DRA counts, as on the overview)."""
    rows = queries.with_dra_counts(queries.cluster_rows())  # MIG and free as the overview counts them
    counts: dict[str, dict[int, int]] = {}
    for key, model in (("classes", DeviceClass), ("slices", ResourceSlice), ("claims", ResourceClaim)):
        counts[key] = dict(model.objects.values_list("cluster").annotate(n=Count("pk")).order_by())
    counts["templates"] = dict(
        KubeObject.objects.filter(kind=TEMPLATE_KIND).values_list("cluster").annotate(n=Count("pk")).order_by()
    )
    for r in rows:
        r.update({k: v.get(r["cluster"].pk, 0) for k, v in counts.items()})
    return render(request, "inventory/cluster_list.html", {"rows": rows})


def _cluster(name: str) -> Cluster:
    return get_object_or_404(Cluster, name=name)


def deviceclass_list(request, cluster_name: str):
    cluster = _cluster(cluster_name)
    classes = DeviceClass.objects.filter(cluster=cluster).order_by("name")
    return render(request, "inventory/deviceclass_list.html", {"cluster": cluster, "classes": classes})


def deviceclass_detail(request, cluster_name: str, name: str):
    """A DeviceClass: its CEL selectors and config, and the devices that match it (the
    ``device_classes`` the sync computed), first page of them with a count."""
    dc = by_name(DeviceClass.objects.select_related("cluster"), cluster__name=cluster_name, name=name)
    spec = dc.raw.get("spec") or {}
    # The JSON list holds the class name quoted; narrowed in SQL, checked exactly here.
    matching = Device.objects.filter(cluster=dc.cluster, device_classes__icontains=json.dumps(dc.name)).select_related(
        "cluster").defer("capacity")
    table = ClassDeviceTable(matching)
    BoundedRequestConfig(request, paginate=False).configure(table)  # ?sort= orders the queryset
    page = Paginator(table.data.data, PAGE_SIZE).get_page(request.GET.get("page"))
    devices = [d for d in page.object_list if dc.name in (d.device_classes or [])]
    queries.attach_holders(dc.cluster_id, devices)
    ctx = {
        "dc": dc, "cluster": dc.cluster, "selectors": [s.get("cel", {}).get("expression", "") for s in spec.get("selectors") or []
                                                        if isinstance(s, dict)],
        "config": spec.get("config") or [], "extended_resource_name": spec.get("extendedResourceName") or "",
        "page": page, "devices": devices, "table": table,
    }  # fmt: skip
    return render(request, "inventory/deviceclass_detail.html", ctx)


def _pools(cluster: Cluster, **filters: Any) -> tuple[list[queries.SliceRow], dict[tuple[str, str], PoolState], set[tuple[str, str]]]:
    """The slices of the cluster's pools (those ``filters`` name), the pools' states and those
    listing a device twice (``queries.slice_pools``)."""
    return queries.slice_pools(ResourceSlice.objects.filter(cluster=cluster, **filters))


def _pool_problems(cluster: Cluster) -> tuple[dict[tuple[str, str], PoolState], set[tuple[str, str]], set[int]]:
    """The cluster's pools, those listing a device twice, and the pks of the slices the
    scheduler does not read as they are: of an incomplete or invalid pool, or of a generation
    older than their pool's newest."""
    rows, states, invalid = _pools(cluster)
    odd = {pk for pk, d, p, g, _, _ in rows if states[(d, p)].incomplete or g != states[(d, p)].newest or (d, p) in invalid}
    return states, invalid, odd


def resourceslice_list(request, cluster_name: str):
    """The cluster's slices, filtered by driver, node and (``problems=1``) pool state; each row
    says when its pool is incomplete or the slice is of an older generation."""
    cluster = _cluster(cluster_name)
    qs = ResourceSlice.objects.filter(cluster=cluster).defer("raw").order_by("node_name", "driver", "name", "pk")
    driver, node = request.GET.get("driver", ""), request.GET.get("node", "")
    problems = request.GET.get("problems") == "1"
    too_long = [n for n, v in (("Driver", driver), ("Node", node)) if len(v) > MAX_TERM]
    if too_long:  # names nothing, and SQLite refuses a LIKE pattern that long
        qs, driver, node = qs.none(), driver[:MAX_TERM], node[:MAX_TERM]
    if driver:
        qs = qs.filter(driver=driver)
    if node:
        qs = qs.filter(node_name__icontains=node)
    states, invalid, odd = _pool_problems(cluster)
    if problems:
        # The page's pks picked in the list's order, then only they fetched: a pool rewrite can
        # make thousands of slices odd, more than one ``IN (...)`` should carry.
        page = Paginator([pk for pk in qs.values_list("pk", flat=True) if pk in odd], PAGE_SIZE).get_page(request.GET.get("page"))
        by_pk = {s.pk: s for s in qs.filter(pk__in=page.object_list)}
        page.object_list = [by_pk[pk] for pk in page.object_list if pk in by_pk]
    else:
        page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
    for s in page.object_list:
        s.pool_state = states.get((s.driver, s.pool))
        s.pool_invalid = (s.driver, s.pool) in invalid
    params = request.GET.copy()
    params.pop("page", None)
    ctx = {"cluster": cluster, "page": page, "slices": page.object_list, "driver": driver, "node": node,
           "problems": problems, "params": params.urlencode(), "too_long": too_long, "max_term": MAX_TERM,
           "incomplete_pools": sum(1 for st in states.values() if st.incomplete), "invalid_pools": len(invalid),
           "older_slices": sum(st.older for st in states.values()), "odd_slices": len(odd)}
    return render(request, "inventory/resourceslice_list.html", ctx)


def resourceslice_detail(request, cluster_name: str, name: str):
    """A ResourceSlice: pool (its state as the scheduler gathers it, and the pool's other
    slices), generation, node or node selector, and its devices with holders."""
    rs = by_name(ResourceSlice.objects.select_related("cluster"), cluster__name=cluster_name, name=name)
    table = SliceDeviceTable(Device.objects.filter(slice=rs).defer("capacity"))
    BoundedRequestConfig(request, paginate=False).configure(table)  # ?sort= orders the queryset
    devices = list(table.data.data)
    queries.attach_holders(rs.cluster_id, devices)
    spec = rs.raw.get("spec") or {}
    node = Node.objects.filter(cluster=rs.cluster, name=rs.node_name).only("pk", "name", "cluster_id").first() if rs.node_name else None
    rows, states, invalid = _pools(rs.cluster, driver=rs.driver, pool=rs.pool)
    state = states[(rs.driver, rs.pool)]
    siblings = list(ResourceSlice.objects.filter(cluster=rs.cluster, driver=rs.driver, pool=rs.pool).exclude(pk=rs.pk)
                    .order_by("-pool_generation", "name").values_list("name", "pool_generation")[:POOL_SLICES])
    listing = rs.pool_generation == state.newest and (rs.driver, rs.pool) in invalid
    twice = _listed_twice(rs, state.newest) if listing else []
    ctx = {
        "rs": rs, "cluster": rs.cluster, "devices": devices, "node": node, "table": table,
        "node_selector": spec.get("nodeSelector"), "shared_counters": spec.get("sharedCounters") or [],
        "published": len(spec.get("devices") or []), "pool_state": state, "siblings": siblings,
        "superseded": rs.pool_generation != state.newest, "more_siblings": len(rows) - 1 - len(siblings),
        "listed_twice": twice,
    }  # fmt: skip
    return render(request, "inventory/resourceslice_detail.html", ctx)


def _listed_twice(rs: ResourceSlice, generation: int) -> list[str]:
    """Device names ``generation`` of ``rs``'s pool lists more than once, from its slices
    parsed (the device rows keep one of each)."""
    raws = ResourceSlice.objects.filter(cluster_id=rs.cluster_id, driver=rs.driver, pool=rs.pool,
                                        pool_generation=generation).values_list("raw", flat=True)
    rows = []
    for raw in raws:
        try:
            r = parse_object(raw)
        except ValueError:
            continue
        rows.append((rs.driver, rs.pool, generation, [d.name for d in getattr(r, "devices", ())]))
    return invalid_pools(rows).get((rs.driver, rs.pool), [])


def claimtemplate_list(request, cluster_name: str):
    cluster = _cluster(cluster_name)
    templates = KubeObject.objects.filter(cluster=cluster, kind=TEMPLATE_KIND).order_by("namespace", "name")[:500]
    return render(request, "inventory/claimtemplate_list.html", {"cluster": cluster, "templates": templates})


def claimtemplate_detail(request, cluster_name: str, namespace: str, name: str):
    """A ResourceClaimTemplate: the requests its claims get, and the stored claims made from it
    (``resource.kubernetes.io/pod-claim-name`` claims own by a pod and named after the
    template's request: found by the pods of the namespace that reference the template)."""
    t = by_name(KubeObject.objects.select_related("cluster"), cluster__name=cluster_name, kind=TEMPLATE_KIND,
                          namespace=namespace, name=name)
    spec = ((t.raw.get("spec") or {}).get("spec") or {}).get("devices") or {}
    quoted = json.dumps(t.name)
    pods = [
        p for p in Pod.objects.filter(cluster=t.cluster, namespace=t.namespace, raw__icontains=quoted)
        .only("pk", "cluster_id", "namespace", "name", "raw", "claim_names").order_by("name")[:200]
        if any(isinstance(r, dict) and r.get("resourceClaimTemplateName") == t.name
               for r in (p.raw.get("spec") or {}).get("resourceClaims") or [])
    ]
    claim_names = {c for p in pods for c in p.claim_names or []}
    claims = ResourceClaim.objects.filter(cluster=t.cluster, namespace=t.namespace, name__in=claim_names).defer("raw") \
        .order_by("name") if claim_names else []
    ctx = {"t": t, "cluster": t.cluster, "stored_classes": stored_class_names(t.cluster), "requests": spec.get("requests") or [], "constraints": spec.get("constraints") or [],
           "config": spec.get("config") or [], "pods": pods, "claims": claims}
    return render(request, "inventory/claimtemplate_detail.html", ctx)


def object_yaml(request, model: str, pk: int):
    """Any stored object as YAML (``yamltext.dump`` of its raw JSON), shown as escaped text."""
    if model not in YAML_MODELS:
        raise Http404("no such kind")
    cls, kind = YAML_MODELS[model]
    obj = get_object_or_404(cls.objects.select_related("cluster"), pk=pk)
    text = yamltext.dump(obj.raw, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)
    ctx = {"obj": obj, "kind": kind or getattr(obj, "kind", ""), "namespace": getattr(obj, "namespace", ""),
           "text": text, "back": _page_of(obj)}
    return render(request, "inventory/object_yaml.html", ctx)


def _page_of(obj) -> str:
    from django.urls import NoReverseMatch, reverse

    try:
        if isinstance(obj, DeviceClass):
            return reverse("inventory:deviceclass", args=[obj.cluster.name, obj.name])
        if isinstance(obj, ResourceSlice):
            return reverse("inventory:resourceslice", args=[obj.cluster.name, obj.name])
        if isinstance(obj, Pod):
            return reverse("claims:pod", args=[obj.cluster.name, obj.namespace, obj.name])
        if isinstance(obj, KubeObject):
            if obj.kind == TEMPLATE_KIND:
                return reverse("inventory:claimtemplate", args=[obj.cluster.name, obj.namespace, obj.name])
            return ""
        return obj.get_absolute_url()
    except NoReverseMatch:
        return ""


def node_events(node: Node, limit: int = 30) -> list:
    """Events about ``node`` (involvedObject/regarding kind Node and its name), newest first. One query."""
    from .records import parse_event

    rows = KubeObject.objects.filter(cluster=node.cluster, kind="Event", subject_kind="Node", subject_name=node.name
                                     ).values_list("raw", flat=True)[: limit * 4]  # fmt: skip
    events = [e for e in (parse_event(r) for r in rows) if e.involved_kind == "Node" and e.involved_name == node.name]
    events.sort(key=lambda e: e.last or e.first or "", reverse=True)
    return events[:limit]
