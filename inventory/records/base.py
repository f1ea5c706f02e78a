"""What every record shares: identity and metadata, and the small typed parts many kinds use
(taints, tolerations, conditions, owner references, node selector terms).

Pure: no Django. Readers here never raise on odd cluster text: a field of the wrong type reads
as absent (an empty map, an empty tuple, None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

from inventory.kube import ObjectRef, identity

EMPTY: Mapping[str, Any] = {}


# --- tolerant readers of raw JSON values ---------------------------------------------------------


# Decoded JSON holds exact dicts, lists and strs: ``type(v) is ...`` is the fast test, and the
# parsers below run once per object of a 40,000-object cluster.
_EMPTY_MAP: dict[str, Any] = MappingProxyType({})  # type: ignore[assignment]  # shared, so read-only


def as_map(v: Any) -> dict[str, Any]:
    return v if type(v) is dict or isinstance(v, dict) else _EMPTY_MAP


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def dicts(v: Any) -> list[dict[str, Any]]:
    """The dict items of a JSON list (anything else: none)."""
    if type(v) is not list:
        return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []
    return [x for x in v if type(x) is dict or isinstance(x, dict)]


_JSON_TYPE = {dict: "a map", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def shape_paths(*paths: str) -> tuple[tuple[tuple[str, ...], type], ...]:
    """``"spec.devices[]"`` (a list of maps) or ``"spec.pool{}"`` (a map), split once for
    ``shape_problem``. List parents before their children."""
    return tuple((tuple(p[:-2].split(".")), list if p.endswith("[]") else dict) for p in paths)


def shape_problem(obj: dict[str, Any], shapes: tuple[tuple[tuple[str, ...], type], ...]) -> str | None:
    """The first field of ``shapes`` (``shape_paths``) present with a JSON type no API server
    would serve there, as text; None when every one is absent, null or of its type. For the
    fields whose reading as absent would delete what they hold (a slice's devices, a claim's
    allocation): such an object is a problem of the read, not an empty one."""
    for path, want in shapes:
        v: Any = obj
        for part in path:
            v = v.get(part) if isinstance(v, dict) else None
            if v is None:
                break
        if v is None:
            continue
        where = ".".join(path)
        if not isinstance(v, want):
            return f"{where} is {_JSON_TYPE.get(type(v), 'a ' + type(v).__name__)}, not {_JSON_TYPE[want]}"
        if want is list and not all(isinstance(x, dict) for x in v):
            return f"{where} holds an item that is not a map"
    return None


def text(v: Any) -> str | None:
    """A string field; a scalar of another type as its text; None when absent or a container."""
    if type(v) is str:
        return v
    if v is None or isinstance(v, dict | list):
        return None
    return v if isinstance(v, str) else str(v)


INT64 = 2**63 - 1  # the widest integer a Kubernetes API field holds (Go int64)


def to_int(v: Any, default: int = 0) -> int:
    """An integer field; ``default`` when absent, not a number, or wider than int64 (no API
    server serves one; kept, it would not encode into the stored model or a column)."""
    if isinstance(v, bool):
        return default
    try:
        n = int(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return n if -INT64 - 1 <= n <= INT64 else default


def str_map(v: Any) -> dict[str, str]:
    """A JSON map of labels/env-like strings, values as text."""
    if not v or not isinstance(v, dict):
        return {}
    for x in v.values():
        if type(x) is not str:
            return {str(k): (x if isinstance(x, str) else str(x)) for k, x in v.items()}
    return dict(v)  # the usual case: already all text (JSON keys always are)


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
# Small value parts are NamedTuples: immutable and typed like the records, but made with one
# C-level tuple allocation. A frozen dataclass sets each field through ``object.__setattr__``,
# which tripled the time to parse a pod (five conditions, three tolerations, an owner...).


class OwnerRef(NamedTuple):
    """One ``metadata.ownerReferences[]`` entry."""

    kind: str
    name: str
    uid: str
    controller: bool


def owner_refs(v: Any) -> tuple[OwnerRef, ...]:
    out = []
    for o in dicts(v):
        g = o.get
        kind, name, uid = g("kind"), g("name"), g("uid")
        out.append(make(OwnerRef, (
            kind if type(kind) is str else str(kind or ""),
            name if type(name) is str else str(name or ""),
            uid if type(uid) is str else str(uid or ""),
            g("controller") is True,
        )))
    return tuple(out)


class Taint(NamedTuple):
    """A node taint (``spec.taints[]``) or a device taint (slice ``devices[].taints[]``,
    ``DeviceTaintRule.spec.taint``). ``time_added``: RFC 3339 text."""

    key: str | None
    value: str | None
    effect: str | None
    time_added: str | None = None

    @classmethod
    def parse(cls, t: dict[str, Any]) -> Taint:
        g = t.get
        return cls(text(g("key")), text(g("value")), text(g("effect")), text(g("timeAdded")))

    def to_dict(self) -> dict[str, Any]:
        """The API's own shape (fields that are set), e.g. for a finding's evidence."""
        out = {"key": self.key, "value": self.value, "effect": self.effect, "timeAdded": self.time_added}
        return {k: v for k, v in out.items() if v is not None}

    @property
    def keeps_off(self) -> bool:
        """NoSchedule or NoExecute: it keeps untolerating workloads off."""
        return self.effect in ("NoSchedule", "NoExecute")


class Toleration(NamedTuple):
    """A pod's ``spec.tolerations[]`` or a device request's / allocation result's toleration."""

    key: str | None
    operator: str | None
    value: str | None
    effect: str | None
    toleration_seconds: int | None = None

    @classmethod
    def parse(cls, t: dict[str, Any]) -> Toleration:
        g = t.get
        secs = g("tolerationSeconds")
        return cls(text(g("key")), text(g("operator")), text(g("value")), text(g("effect")),
                   secs if type(secs) is int else None)

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


make = tuple.__new__
"""``make(Part, (field, ...))``: a NamedTuple part from all its fields in order, without the
generated ``__new__`` (a Python frame per part; the parsers make millions)."""


# Pods repeat a handful of tolerations (and nodes of one pool their taints) thousands of times:
# equal ones share one tuple, which is also what a 40,000-object cluster keeps in memory.
_SHARED: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_SHARED_MAX = 4096


def _shared(parse: Any, items: list[dict[str, Any]]) -> tuple[Any, ...]:
    for d in items:
        for v in d.values():
            if v.__class__ is bool:  # True == 1: a boolean must not find a number's entry
                return tuple(parse(d) for d in items)
    try:
        key = (parse, *(tuple(d.items()) for d in items))  # the raw entries are the key
        hit = _SHARED.get(key)
    except TypeError:  # a list or map where text belongs: parsed unshared
        return tuple(parse(d) for d in items)
    if hit is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        hit = _SHARED[key] = tuple(parse(d) for d in items)
    return hit


def taints(v: Any) -> tuple[Taint, ...]:
    items = dicts(v)
    return _shared(Taint.parse, items) if items else ()


def tolerations(v: Any) -> tuple[Toleration, ...]:
    items = dicts(v)
    return _shared(Toleration.parse, items) if items else ()


class Condition(NamedTuple):
    """One ``status.conditions[]`` entry (Node, Pod)."""

    type: str
    status: str | None
    reason: str | None
    message: str | None
    last_transition_time: str | None


def conditions(v: Any) -> tuple[Condition, ...]:
    if not v:
        return ()
    out = []
    for c in dicts(v):
        g = c.get
        ty, st, re, msg, at = g("type"), g("status"), g("reason"), g("message"), g("lastTransitionTime")
        # Written out: text() per field was a fifth of parsing a pod; odd types are rare.
        out.append(make(Condition, (
            ty if type(ty) is str else str(ty or ""),
            st if st is None or type(st) is str else text(st),
            re if re is None or type(re) is str else text(re),
            msg if msg is None or type(msg) is str else text(msg),
            at if at is None or type(at) is str else text(at),
        )))
    return tuple(out)


class SelectorRequirement(NamedTuple):
    """``matchExpressions[]`` / ``matchFields[]`` entry of a node selector term."""

    key: str
    operator: str
    values: tuple[str, ...]


class NodeSelectorTerm(NamedTuple):
    match_expressions: tuple[SelectorRequirement, ...]
    match_fields: tuple[SelectorRequirement, ...]


def _requirements(v: Any) -> tuple[SelectorRequirement, ...]:
    return tuple(
        make(SelectorRequirement, (str(r.get("key") or ""), str(r.get("operator") or ""), strings(r.get("values"))))
        for r in dicts(v)
    )


def node_selector_terms(selector: Any) -> tuple[NodeSelectorTerm, ...]:
    """``nodeSelectorTerms`` of a NodeSelector (pod affinity, claim allocation, slice)."""
    return tuple(
        make(NodeSelectorTerm, (_requirements(t.get("matchExpressions")), _requirements(t.get("matchFields"))))
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


def meta_fields(obj: dict[str, Any], namespaced: bool | None) -> tuple[Any, ...]:
    """The ``KubeRecord`` fields of a raw object, in field order (the records are made
    positionally: keyword arguments cost a third more). ``namespaced``: the kind's scope
    (None: unknown, the namespace as written)."""
    meta = obj.get("metadata")
    g = meta.get if type(meta) is dict else _EMPTY_MAP.get
    kind, name, ns, uid, rv = obj.get("kind"), g("name"), g("namespace"), g("uid"), g("resourceVersion")
    written = ns if type(ns) is str and ns else None
    owners = g("ownerReferences")
    created, deleted = g("creationTimestamp"), g("deletionTimestamp")
    return (
        kind if type(kind) is str else str(kind or ""),
        str(obj.get("apiVersion") or ""),
        name if type(name) is str else str(name or ""),
        (written or "default") if namespaced else written if namespaced is None else None,
        uid if type(uid) is str and uid else identity(str(kind), str(ns or ""), str(name), ""),
        rv if type(rv) is str else str(rv or ""),
        str_map(g("labels")),
        created if created is None or type(created) is str else text(created),
        deleted if deleted is None or type(deleted) is str else text(deleted),
        owner_refs(owners) if owners else (),
    )


# Field order of ``KubeRecord`` that ``meta_fields`` follows; checked once, here.
if tuple(f.name for f in fields(KubeRecord)) != (
    "kind", "api_version", "name", "namespace", "uid", "resource_version", "labels", "created", "deletion_timestamp",
    "owners",
):  # fmt: skip
    raise ImportError("inventory.records.base: meta_fields no longer follows the KubeRecord fields")


def annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return as_map(as_map(obj.get("metadata")).get("annotations"))


def finalizers(obj: dict[str, Any]) -> tuple[str, ...]:
    return strings(as_map(obj.get("metadata")).get("finalizers"))
