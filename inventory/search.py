"""The header search: one query string looked up across clusters, devices, claims, pods and nodes.

``search(q, limit)`` returns a ``SearchResult``: one ``Group`` per kind, in a fixed order
(clusters, devices, claims, pods, nodes), each with at most ``limit`` objects and the total count.
What each kind is matched on (all case-insensitive substrings, no regex: cluster text is
untrusted and the term is user text):

- Cluster: its name.
- Device: ``uuid`` or ``parent_uuid`` (``device_uuid_q``, the UUID part of the device
  list's own ``q``), so a GPU UUID finds the GPU and its MIG instances; or its MIG
  ``profile`` (``1g.18gb``, ``3g``). Not its product: the nodes answer that (a product is
  every GPU of a node, and one more OR arm over the devices' text is one more pass over
  every device's row).
- ResourceClaim / Pod: ``metadata.name`` or ``metadata.namespace``; a term written
  ``namespace/name`` (as pages show them) matches that namespace exactly and the name as a
  substring. A Pod also by its ``metadata.uid`` (what ``reservedFor`` and DCGM name).
- Node: ``metadata.name`` or its GPU product label (``A100``; as the node list's own ``q``).

Queries: one per kind (``limit + 1`` rows tell whether there are more), plus one ``COUNT``
for each kind that has more than ``limit``: at most 10, whatever the fleet size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.db.models import Q, QuerySet
from django.urls import NoReverseMatch, reverse

from .filters import MAX_TERM, device_uuid_q
from .models import Cluster, Device, Node, Pod, ResourceClaim

LIMIT = 20


@dataclass(frozen=True)
class Term:
    """The query as typed (stripped), and its ``namespace/name`` split when it has one slash
    with text on both sides (``namespace`` is "" otherwise)."""

    text: str
    namespace: str = ""
    name: str = ""

    @classmethod
    def parse(cls, raw: str) -> Term:
        # NUL as stored text holds it (``inventory.bulk``: U+FFFD): SQLite's LIKE ended the
        # pattern at a NUL, and "gpu\x00" matched everything starting with "gpu".
        text = (raw or "").replace("\x00", "\ufffd").strip()
        ns, sep, name = text.partition("/")
        if sep and ns.strip() and name.strip() and "/" not in name:
            return cls(text, ns.strip(), name.strip())
        return cls(text)


@dataclass
class Group:
    """The matches of one kind. ``objects``: at most the limit, in page order; ``count``: all
    matches; ``see_all``: the filtered list page that shows them all, "" when the kind has no
    list page; ``searched``: what was compared, for the page's wording."""

    kind: str
    label: str
    searched: str
    objects: list = field(default_factory=list)
    count: int = 0
    see_all: str = ""

    @property
    def more(self) -> bool:
        return self.count > len(self.objects)


@dataclass
class SearchResult:
    term: Term
    groups: list[Group]

    @property
    def too_long(self) -> bool:
        """Longer than any name a search can match (``filters.MAX_TERM``): not looked up."""
        return len(self.term.text) > MAX_TERM

    @property
    def total(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def found(self) -> list[Group]:
        return [g for g in self.groups if g.count]

    def single(self):
        """The only object found (with a page to open), or None when there are none or several."""
        if self.total != 1:
            return None
        only = next(g.objects[0] for g in self.groups if g.count)
        return only if only.url else None


def _name_q(term: Term) -> Q:
    """Claims and pods: a name or namespace substring, or ``namespace/name`` when the term has
    that shape."""
    q = Q(name__icontains=term.text) | Q(namespace__icontains=term.text)
    if term.namespace:
        q |= Q(namespace=term.namespace, name__icontains=term.name)
    return q


def _fill(group: Group, qs: QuerySet, limit: int) -> Group:
    rows = list(qs[: limit + 1])
    group.objects = rows[:limit]
    group.count = len(rows) if len(rows) <= limit else qs.count()
    return group


def _link(page) -> str:
    """The object's page, "" when its stored name cannot be part of a URL (e.g. holds a "/"):
    the sync refuses such names, but a row is shown as text rather than fail the page."""
    try:
        return page()
    except NoReverseMatch:
        return ""


def _url(name: str, params: dict[str, str]) -> str:
    return f"{reverse(name)}?{urlencode(params)}"


def search(raw: str, limit: int = LIMIT) -> SearchResult:
    """Look ``raw`` up in every kind; no query at all for an empty (or blank) term."""
    term = Term.parse(raw)
    groups = [
        Group("cluster", "Clusters", "cluster names"),
        Group("device", "Devices", "GPU and MIG UUIDs (and parent GPU UUIDs), MIG profiles"),
        Group("claim", "ResourceClaims", "claim names, namespaces and namespace/name"),
        Group("pod", "Pods", "pod names, namespaces, namespace/name and uids"),
        Group("node", "Nodes", "node names and GPU products"),
    ]
    result = SearchResult(term, groups)
    if not term.text or result.too_long:
        return result
    cluster, device, claim, pod, node = groups
    _fill(cluster, Cluster.objects.filter(name__icontains=term.text).order_by("name", "pk"), limit)
    _fill(device, Device.objects.filter(device_uuid_q(term.text) | Q(profile__icontains=term.text))
          .select_related("cluster").defer("capacity", "metrics", "device_classes")
          .order_by("cluster__name", "node_name", "driver", "name", "pk"), limit)  # fmt: skip
    _fill(claim, ResourceClaim.objects.filter(_name_q(term)).select_related("cluster").defer("raw", "requests")
          .order_by("cluster__name", "namespace", "name", "pk"), limit)  # fmt: skip
    _fill(pod, Pod.objects.filter(_name_q(term) | Q(uid__iexact=term.text)).select_related("cluster").defer("raw", "claim_names")
          .order_by("cluster__name", "namespace", "name", "pk"), limit)  # fmt: skip
    _fill(node, Node.objects.filter(Q(name__icontains=term.text) | Q(gpu_product__icontains=term.text))
          .select_related("cluster").defer("raw", "labels")
          .order_by("cluster__name", "name", "pk"), limit)  # fmt: skip
    for p in pod.objects:
        p.url = _link(lambda p=p: reverse("claims:pod", args=[p.cluster.name, p.namespace, p.name]))
    for o in (*cluster.objects, *device.objects, *claim.objects, *node.objects):
        o.url = _link(o.get_absolute_url)
    # The list pages' own ``q`` matches more than this search does (e.g. the device list also
    # matches claim and pod names): "see all" shows at least these.
    device.see_all = _url("inventory:devices", {"q": term.text})
    node.see_all = _url("inventory:nodes", {"q": term.text})
    if term.namespace:
        claim.see_all = _url("claims:list", {"namespace": term.namespace, "q": term.name})
    else:
        claim.see_all = _url("claims:list", {"q": term.text})
    return result
