"""The inventory's entry points of the parse layer (``inventory.records``), kept for callers
that import them from here, and the name checks a sync applies before storing an object.

Pure: no Django. The records themselves (``Device``, ``ResourceSlice``, ``ResourceClaim``,
``AllocationResult`` ...) and their parsers live in ``inventory.records``; the shared
vocabulary (``GPU_DRIVER``, ``object_uid``, ``identity``) in ``inventory.kube``.
"""

from __future__ import annotations

import re
from typing import Any

from inventory.kube import GPU_DRIVER, identity, object_uid
from inventory.records.base import as_map
from inventory.records.core import parse_node, parse_pod
from inventory.records.resource import (
    MAX_BYTES,
    PCI_BUS_ID_ATTR,
    POD_CLAIM_NAME_ANNOTATION,
    AllocationResult,
    ConsumerRef,
    Device,
    ResourceClaim,
    ResourceSlice,
    attribute_value,
    parse_quantity,
    parse_resource_claim,
    parse_resource_slice,
    request_summary,
)

__all__ = [
    "GPU_DRIVER",
    "MAX_BYTES",
    "PCI_BUS_ID_ATTR",
    "POD_CLAIM_NAME_ANNOTATION",
    "SUBDOMAIN_NAMED",
    "AllocationResult",
    "ConsumerRef",
    "Device",
    "ResourceClaim",
    "ResourceSlice",
    "allocation_node",
    "attribute_value",
    "identity",
    "is_subdomain",
    "name_problem",
    "node_kubelet_version",
    "node_ready",
    "object_uid",
    "parse_quantity",
    "parse_resource_claim",
    "parse_resource_slice",
    "pod_claim_names",
    "request_summary",
]


def node_ready(obj: dict[str, Any]) -> bool:
    """True unless the Node's ``Ready`` condition is present and not ``True`` (``records.Node.ready``)."""
    return parse_node(obj).ready is not False


def node_kubelet_version(obj: dict[str, Any]) -> str:
    """``status.nodeInfo.kubeletVersion`` of a Node, "" when absent."""
    return parse_node(obj).kubelet_version or ""


def pod_claim_names(obj: dict[str, Any]) -> list[str]:
    """Names of the ResourceClaims a Pod uses (``records.Pod.claim_names``)."""
    return parse_pod(obj).claim_names


def allocation_node(obj: dict[str, Any]) -> str | None:
    """The node a ResourceClaim's allocation is pinned to (``records.ResourceClaim.allocation_node``)."""
    return parse_resource_claim(obj).allocation_node


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Kinds whose names the API server validates as DNS-1123 subdomains; other kinds only as path segments.
SUBDOMAIN_NAMED = frozenset({"Node", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod"})


# The API server's uids are UUIDs (36 characters); a stand-in ``Node//<name>`` stays under this.
MAX_UID = 300


def is_subdomain(name: Any) -> bool:
    """Whether ``name`` is a DNS-1123 subdomain, as the names of ``SUBDOMAIN_NAMED`` kinds are."""
    return isinstance(name, str) and len(name) <= 253 and _DNS_SUBDOMAIN.fullmatch(name) is not None


def name_problem(obj: dict[str, Any], namespaced: bool = True) -> str | None:
    """Why ``metadata.name``/``namespace`` could not have come from an API server, or None.

    The API server rejects such names, so a snapshot holding one was edited or forged; storing
    it would put unroutable text into page links. Rules (Kubernetes apimachinery validation):
    namespaces are DNS-1123 labels (<= 63); names of the kinds in ``SUBDOMAIN_NAMED`` are
    DNS-1123 subdomains (<= 253); every other name is a path segment without ``/`` or ``%``.
    ``namespaced``: False for cluster-scoped kinds, whose ``metadata.namespace`` is not checked.
    """
    meta = as_map(obj.get("metadata"))
    kind = str(obj.get("kind"))
    name, ns = meta.get("name"), meta.get("namespace")
    shown = repr(name)[:80]
    if not isinstance(name, str) or not name:
        return f"{kind} without metadata.name"
    # A cluster-scoped object's namespace is ignored by the API server (samples carry placeholders).
    if namespaced and ns is not None and (not isinstance(ns, str) or len(ns) > 63 or not _DNS_LABEL.match(ns)):
        return f"{kind} {shown}: namespace {repr(ns)[:80]} is not a valid Kubernetes namespace"
    if kind in SUBDOMAIN_NAMED:
        if not is_subdomain(name):
            return f"{kind} {shown}: not a valid Kubernetes name (DNS-1123 subdomain)"
    elif len(name) > 253 or "/" in name or "%" in name or name in (".", ".."):
        return f"{kind} {shown}: not a valid Kubernetes name"
    uid = meta.get("uid")
    if isinstance(uid, str) and len(uid) > MAX_UID:
        return f"{kind} {shown}: metadata.uid is {len(uid)} characters (an API server gives 36)"
    return None
