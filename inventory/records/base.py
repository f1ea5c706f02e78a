"""What every record shares: identity and metadata, and the small typed parts many kinds use
(taints, tolerations, conditions, owner references, node selector terms).

Pure: no Django. Readers here never raise on odd cluster text: a field of the wrong type reads
as absent (an empty map, an empty tuple, None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from inventory.kube import ObjectRef, identity

EMPTY: Mapping[str, Any] = {}


# --- tolerant readers of raw JSON values ---------------------------------------------------------


def as_map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}  # type: ignore[return-value]


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def dicts(v: Any) -> list[dict[str, Any]]:
    """The dict items of a JSON list (anything else: none)."""
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def text(v: Any) -> str | None:
    """A string field; a scalar of another type as its text; None when absent or a container."""
    if v is None or isinstance(v, dict | list):
        return None
    return v if isinstance(v, str) else str(v)


def to_int(v: Any, default: int = 0) -> int:
    if isinstance(v, bool):
        return default
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def str_map(v: Any) -> dict[str, str]:
    """A JSON map of labels/env-like strings, values as text."""
    if not isinstance(v, dict):
        return {}
    return {str(k): (x if isinstance(x, str) else str(x)) for k, x in v.items()}


def strings(v: Any) -> tuple[str, ...]:
    return tuple(x if isinstance(x, str) else str(x) for x in v if x is not None and not isinstance(x, dict | list)) if isinstance(v, list) else ()


def cel_expressions(selectors: Any) -> tuple[str, ...]:
    """``selectors[].cel.expression`` of a DeviceClass, request or DeviceTaintRule (text only)."""
    out = []
    for s in dicts(selectors):
        cel = s.get("cel")
        if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
            out.append(cel["expression"])
    return tuple(out)


# --- shared typed parts -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """One ``metadata.ownerReferences[]`` entry."""

    kind: str
    name: str
    uid: str
    controller: bool

    @classmethod
    def parse(cls, o: dict[str, Any]) -> OwnerRef:
        return cls(str(o.get("kind") or ""), str(o.get("name") or ""), str(o.get("uid") or ""), o.get("controller") is True)


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint (``spec.taints[]``) or a device taint (slice ``devices[].taints[]``,
    ``DeviceTaintRule.spec.taint``). ``time_added``: RFC 3339 text."""

    key: str | None
    value: str | None
    effect: str | None
    time_added: str | None = None

    @classmethod
    def parse(cls, t: dict[str, Any]) -> Taint:
        return cls(text(t.get("key")), text(t.get("value")), text(t.get("effect")), text(t.get("timeAdded")))

    def to_dict(self) -> dict[str, Any]:
        """The API's own shape (fields that are set), e.g. for a finding's evidence."""
        out = {"key": self.key, "value": self.value, "effect": self.effect, "timeAdded": self.time_added}
        return {k: v for k, v in out.items() if v is not None}

    @property
    def keeps_off(self) -> bool:
        """NoSchedule or NoExecute: it keeps untolerating workloads off."""
        return self.effect in ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod's ``spec.tolerations[]`` or a device request's / allocation result's toleration."""

    key: str | None
    operator: str | None
    value: str | None
    effect: str | None
    toleration_seconds: int | None = None

    @classmethod
    def parse(cls, t: dict[str, Any]) -> Toleration:
        secs = t.get("tolerationSeconds")
        return cls(text(t.get("key")), text(t.get("operator")), text(t.get("value")), text(t.get("effect")),
                   secs if isinstance(secs, int) and not isinstance(secs, bool) else None)

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes toleration semantics (the same for node and device taints): matching
        effect (or none given), then ``Exists`` on the key (or on everything without a key),
        or ``Equal`` (the default) on key and value."""
        if self.effect and self.effect != taint.effect:
            return False
        op = self.operator or "Equal"
        if not self.key:
            return op == "Exists"
        if self.key != taint.key:
            return False
        return op == "Exists" or (self.value or "") == (taint.value or "")


def taints(v: Any) -> tuple[Taint, ...]:
    return tuple(Taint.parse(t) for t in dicts(v))


def tolerations(v: Any) -> tuple[Toleration, ...]:
    return tuple(Toleration.parse(t) for t in dicts(v))


@dataclass(frozen=True, slots=True)
class Condition:
    """One ``status.conditions[]`` entry (Node, Pod)."""

    type: str
    status: str | None
    reason: str | None
    message: str | None
    last_transition_time: str | None

    @classmethod
    def parse(cls, c: dict[str, Any]) -> Condition:
        return cls(str(c.get("type") or ""), text(c.get("status")), text(c.get("reason")), text(c.get("message")),
                   text(c.get("lastTransitionTime")))


def conditions(v: Any) -> tuple[Condition, ...]:
    return tuple(Condition.parse(c) for c in dicts(v))


@dataclass(frozen=True, slots=True)
class SelectorRequirement:
    """``matchExpressions[]`` / ``matchFields[]`` entry of a node selector term."""

    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[SelectorRequirement, ...]
    match_fields: tuple[SelectorRequirement, ...]


def _requirements(v: Any) -> tuple[SelectorRequirement, ...]:
    return tuple(
        SelectorRequirement(str(r.get("key") or ""), str(r.get("operator") or ""), strings(r.get("values")))
        for r in dicts(v)
    )


def node_selector_terms(selector: Any) -> tuple[NodeSelectorTerm, ...]:
    """``nodeSelectorTerms`` of a NodeSelector (pod affinity, claim allocation, slice)."""
    return tuple(
        NodeSelectorTerm(_requirements(t.get("matchExpressions")), _requirements(t.get("matchFields")))
        for t in dicts(as_map(selector).get("nodeSelectorTerms"))
    )


# --- the common record -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KubeRecord:
    """Identity and metadata every record carries (``metadata.*``).

    ``namespace``: None for cluster-scoped kinds; a namespaced object written without one is
    in ``default`` (where the API server would put it). ``uid``: ``metadata.uid`` or the
    stand-in ``kube.identity`` gives. ``created``/``deletion_timestamp``: RFC 3339 text.
    ``api_version``: after normalisation, so DRA objects of every served version read ``v1``.
    """

    NAMESPACED: ClassVar[bool] = True

    kind: str
    api_version: str
    name: str
    namespace: str | None
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    created: str | None
    deletion_timestamp: str | None
    owners: tuple[OwnerRef, ...]

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.namespace, self.name)

    @property
    def controller(self) -> OwnerRef | None:
        """The ownerReference with ``controller: true``, if any."""
        return next((o for o in self.owners if o.controller), None)


def meta_fields(obj: dict[str, Any], namespaced: bool | None) -> dict[str, Any]:
    """The ``KubeRecord`` fields of a raw object, as keyword arguments. ``namespaced``: the
    kind's scope (None: unknown, the namespace as written)."""
    meta = as_map(obj.get("metadata"))
    kind = str(obj.get("kind") or "")
    name = str(meta.get("name") or "")
    ns = meta.get("namespace")
    written = ns if isinstance(ns, str) and ns else None
    namespace = (written or "default") if namespaced else written if namespaced is None else None
    uid = meta.get("uid")
    owners = meta.get("ownerReferences")
    return {
        "kind": kind,
        "api_version": str(obj.get("apiVersion") or ""),
        "name": name,
        "namespace": namespace,
        "uid": identity(str(obj.get("kind")), str(ns or ""), str(meta.get("name")), uid if isinstance(uid, str) else ""),
        "resource_version": str(meta.get("resourceVersion") or ""),
        "labels": str_map(meta.get("labels")),
        "created": text(meta.get("creationTimestamp")),
        "deletion_timestamp": text(meta.get("deletionTimestamp")),
        "owners": tuple(OwnerRef.parse(o) for o in dicts(owners)) if owners else (),
    }


def annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return as_map(as_map(obj.get("metadata")).get("annotations"))


def finalizers(obj: dict[str, Any]) -> tuple[str, ...]:
    return strings(as_map(obj.get("metadata")).get("finalizers"))
