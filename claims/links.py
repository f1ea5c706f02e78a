"""Links to the objects a finding names, only for objects that are stored.

A finding's ``involved`` objects (``[{kind, namespace, name}]``) may not exist: the claim of
a ``claim_not_found`` finding is absent by definition, a pod may be gone since. Pages link
only the stored ones and show the others as plain text marked "not stored".

``attach_object_links(findings)`` sets ``f.links`` (a list of ``ObjectLink``, main object
first) on every finding, in one query for all the findings of the page together (whatever
their number) that checks the linked kinds (``LINKED_KINDS``); ``known`` objects
(already loaded by the page) are not looked up again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import CharField, F, Value
from django.urls import NoReverseMatch, reverse

from inventory.models import DeviceClass, KubeObject, Node, Pod, ResourceClaim, ResourceSlice
from inventory.parse import is_subdomain

# kind -> (stored objects of the kind, URL name, namespaced)
LINKED_KINDS = {
    "ResourceClaim": (ResourceClaim.objects, "claims:claim", True),
    "Pod": (Pod.objects, "claims:pod", True),
    "Node": (Node.objects, "inventory:node", False),
    "ResourceSlice": (ResourceSlice.objects, "inventory:resourceslice", False),
    "DeviceClass": (DeviceClass.objects, "inventory:deviceclass", False),
    "ResourceClaimTemplate": (KubeObject.objects.filter(kind="ResourceClaimTemplate"), "inventory:claimtemplate", True),
}


@dataclass(frozen=True)
class ObjectLink:
    """One involved object. ``url``: its page, "" when it has none or is not stored.
    ``stored``: False when the kind has a page but no stored object of that name (the page
    would be a 404), None when the kind has no page (nothing to check)."""

    kind: str
    namespace: str
    name: str
    url: str
    stored: bool | None
    role: str = ""  # what the object is to the finding, when its evidence says (``NODE_ROLES``)

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def missing(self) -> bool:
        return self.stored is False


def _linkable(namespace: str, name: str) -> bool:
    """Kubernetes names and namespaces of every linked kind are DNS-1123 subdomains (or labels)."""
    return is_subdomain(name) and (not namespace or is_subdomain(namespace))


# Evidence lists of node names, and what a node in one is to the finding (allocated_not_reserved
# lists every node that refuses the pod besides the allocation's); the first list naming it wins.
NODE_ROLES = (
    ("allocation_nodes", "where the claim's allocation pins the pod"),
    ("rejecting_nodes", "refusing the pod: cordoned, or a taint it does not tolerate"),
)


def _node_roles(finding) -> dict[str, str]:
    """Node name -> role; none where the page did not load the evidence (the stuck queue)."""
    evidence = None if "evidence" in finding.get_deferred_fields() else finding.evidence
    roles: dict[str, str] = {}
    for key, role in NODE_ROLES if isinstance(evidence, dict) else ():
        names = evidence.get(key)
        for name in names if isinstance(names, list) else ():
            roles.setdefault(str(name), role)
    return roles


def _refs(finding) -> list[tuple[str, str, str]]:
    out = []
    for o in finding.involved or []:
        if isinstance(o, dict):
            out.append((str(o.get("kind") or ""), str(o.get("namespace") or ""), str(o.get("name") or "")))
    return out


def _stored(wanted: dict[str, set[tuple[int, str, str]]]) -> set[tuple[str, int, str, str]]:
    """``(kind, cluster_id, namespace, name)`` of the wanted objects that exist: one query
    (a UNION of one SELECT per kind), none when nothing is wanted."""
    parts = []
    for kind, keys in wanted.items():
        if not keys:
            continue
        objects, _, namespaced = LINKED_KINDS[kind]
        qs = objects.filter(cluster_id__in={k[0] for k in keys}, name__in={k[2] for k in keys}).order_by()
        if namespaced:  # the (cluster, namespace, name) index, not a scan of every pod
            qs = qs.filter(namespace__in={k[1] for k in keys})
        qs = qs.annotate(ref_kind=Value(kind, output_field=CharField()),
                         ref_ns=F("namespace") if namespaced else Value("", output_field=CharField()))
        parts.append(qs.values_list("ref_kind", "cluster_id", "ref_ns", "name"))
    if not parts:
        return set()
    rows = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    return {(k, c, ns, n) for k, c, ns, n in rows if (c, ns, n) in wanted[k]}


def attach_object_links(findings: Iterable, known: Iterable[tuple[str, int, str, str]] = ()) -> None:
    """Set ``f.links`` on each finding (needs ``f.cluster`` loaded, e.g. ``select_related``).

    ``known``: ``(kind, cluster_id, namespace, name)`` of objects the caller already read
    (namespace "" for a Node); they are linked without a query.
    """
    findings = list(findings)
    found = set(known)
    wanted: dict[str, set[tuple[int, str, str]]] = {k: set() for k in LINKED_KINDS}
    for f in findings:
        for kind, ns, name in _refs(f):
            if kind in LINKED_KINDS and name and (ns or not LINKED_KINDS[kind][2]):
                key = (f.cluster_id, ns if LINKED_KINDS[kind][2] else "", name)
                if (kind, *key) not in found:
                    wanted[kind].add(key)
    found |= _stored(wanted)
    urls: dict[tuple[str, ...], str] = {}  # a node or claim named by many findings is reversed once
    for f in findings:
        links = []
        roles = _node_roles(f)
        for kind, ns, name in _refs(f):
            role = roles.get(name, "") if kind == "Node" else ""
            spec = LINKED_KINDS.get(kind)
            if spec is None or not name or (spec[2] and not ns):
                links.append(ObjectLink(kind, ns, name, "", None, role))
                continue
            key_ns = ns if spec[2] else ""
            # A row made from cluster text (a slice's nodeName) may hold a name no object can have:
            # ``..`` in a link would lead a browser to another page.
            if (kind, f.cluster_id, key_ns, name) not in found or not _linkable(key_ns, name):
                links.append(ObjectLink(kind, ns, name, "", False, role))
                continue
            args = (spec[1], f.cluster.name, ns, name) if spec[2] else (spec[1], f.cluster.name, name)
            url = urls.get(args)
            if url is None:
                try:
                    url = reverse(spec[1], args=args[1:])
                except NoReverseMatch:
                    url = ""
                urls[args] = url
            links.append(ObjectLink(kind, ns, name, url, True, role))
        f.links = links
