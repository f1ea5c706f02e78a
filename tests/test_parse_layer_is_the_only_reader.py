"""Only the parse layer (``inventory.records`` and its helpers) reads meaning out of a cluster
object's raw JSON; every other product module reads the records (issue 12, item 1).

An AST scan of the product packages flags, outside the modules allowed below:
- raw object fields: ``obj["metadata"]``, ``obj.get("spec")``, ``.pop("status")`` ... for the
  keys in ``RAW_KEYS`` (only objects have them), and ``status`` when it is dug into further
  (``(obj.get("status") or {}).get("phase")``: a bare ``item["status"]`` is also the name of a
  checklist item's field); a path helper called with such keys (``dig(obj, "metadata", "labels")``);
- decoding: ``json.loads``/``json.load``, ``jsonlist.decode``, ``msgspec.json.decode``,
  ``yaml.safe_load`` ... (also when imported by name).

Allowed: the parse layer; the read machinery that turns the API's or a file's text into raw
objects and stores them (identity only, no meaning); the modules that export or display a stored
object as it is; and, each named with the file it reads, decoders of files that are not cluster
objects. ``PENDING`` lists modules of other owners that still read raw JSON: their count may
only go down (move them to ``inventory.records``, then drop the entry).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("inventory", "claims", "migration", "config")

RAW_KEYS = frozenset({
    "metadata", "spec", "ownerReferences", "involvedObject", "resourceClaims", "resourceClaimStatuses",
    "containerStatuses", "reservedFor", "nodeInfo", "deviceClassName",
})  # fmt: skip
DUG_KEYS = frozenset({"status"})
DECODE_MODULES = frozenset({"json", "jsonlist", "yaml", "msgspec", "orjson"})
DECODE_FUNCTIONS = frozenset({"loads", "load", "load_all", "safe_load", "safe_load_all", "decode"})

PARSE_LAYER = ("inventory/records/", "inventory/kube.py", "inventory/parse.py", "inventory/normalize.py")
ALLOWED = {
    # Read machinery: wire or file text -> raw objects (identity and prepare steps only).
    "inventory/jsonlist.py": "splits List pages and decodes items (msgspec)",
    "inventory/readitem.py": "an item's identity before decoding, the object on demand",
    "inventory/snapshot.py": "reads snapshot files into raw objects and checks they are objects",
    "inventory/sources.py": "lists the API (and /version) and gives namespaced objects their default namespace",
    "inventory/watch.py": "splits watch events and list pages into raw items (msgspec), reads an ERROR event's Status",
    "inventory/kubehttp.py": "reads the Status of an HTTP error answer (reason, message)",
    "inventory/bulk.py": "stores raw JSON (re-encodes text that holds a NUL)",
    # Export and display of stored objects as they are.
    "inventory/exports.py": "gives stored clusters back as raw objects and JSON",
    "migration/generate.py": "writes manifests: patched copies of the raw workloads and its own generated objects",
}
# Decoders of files that are not cluster objects: (module, what it decodes).
NOT_CLUSTER_OBJECTS = {
    "inventory/mig.py": "data/mig_profiles.yaml",
    "claims/diagnosis/known_issues.py": "known_issues.yaml",
    "inventory/telemetry_views.py": "a Plotly figure's JSON",
    "claims/store.py": "a JSON round trip of its own finding evidence (_json)",
    "inventory/model_codec.py": "the parse layer's own records, stored as msgpack (stored_model)",
    "inventory/overview_store.py": "its own node summaries and pool counts, stored as msgpack (KeptChunk)",
    "inventory/reconcile.py": "its own skipped-items memo, uid -> resourceVersion, stored as msgpack (KeptChunk)",
    "inventory/telemetry_range.py": "Prometheus query_range answers (*.range.json)",
}
# Other owners' modules that still read raw JSON (owner in the comment): hits may only go down.
PENDING = {
    "inventory/views.py": 1,  # views: a node's taints from Node.raw (records.parse_object(node.raw).taints)
    "inventory/object_views.py": 6,  # views: DeviceClass/slice/template pages from .raw (their records)
    "claims/views.py": 6,  # views: the claim's owner pod and requests, the pod's claims/conditions from .raw
    "migration/views.py": 3,  # views: device classes of a generated template (GeneratedObject.request_classes)
}


class Hit:
    def __init__(self, line: int, what: str) -> None:
        self.line, self.what = line, what

    def __repr__(self) -> str:
        return f"{self.line}: {self.what}"


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dug(node: ast.AST) -> bool:
    """Is the value of ``node`` read further (subscripted, ``.get``..., through ``x or {}``)?"""
    parent = getattr(node, "_parent", None)
    if isinstance(parent, ast.BoolOp):
        return _dug(parent)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    return isinstance(parent, ast.Attribute) and parent.value is node


def scan(source: str) -> list[Hit]:
    """Every raw-object read and decode in ``source`` (see the module docstring)."""
    tree = ast.parse(source)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child._parent = parent  # type: ignore[attr-defined]
    decoders = {
        alias.asname or alias.name
        for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] in DECODE_MODULES
        for alias in node.names if alias.name in DECODE_FUNCTIONS
    }
    hits: list[Hit] = []

    def raw(key: str | None, node: ast.AST) -> bool:
        return key in RAW_KEYS or (key in DUG_KEYS and _dug(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and raw(_key(node.slice), node):
            hits.append(Hit(node.lineno, f"[{_key(node.slice)!r}]"))
        elif isinstance(node, ast.Call):
            f = node.func
            keys = [k for k in map(_key, node.args) if k is not None]
            if isinstance(f, ast.Attribute) and f.attr in ("get", "pop", "setdefault"):
                if keys and node.args and _key(node.args[0]) == keys[0] and raw(keys[0], node):
                    hits.append(Hit(node.lineno, f".{f.attr}({keys[0]!r})"))
            elif any(k in RAW_KEYS for k in keys) or (any(k in DUG_KEYS for k in keys) and len(keys) > 1):
                hits.append(Hit(node.lineno, f"path {keys}"))
            if isinstance(f, ast.Attribute) and f.attr in DECODE_FUNCTIONS:
                base = f.value
                names = []
                while isinstance(base, ast.Attribute):
                    names.append(base.attr)
                    base = base.value
                if isinstance(base, ast.Name):
                    names.append(base.id)
                if DECODE_MODULES & set(names):
                    hits.append(Hit(node.lineno, f"decode {'.'.join(reversed(names))}.{f.attr}"))
            elif isinstance(f, ast.Name) and f.id in decoders:
                hits.append(Hit(node.lineno, f"decode {f.id}"))
            if isinstance(f, ast.Attribute) and f.attr in ("Decoder", "JSONDecoder"):
                hits.append(Hit(node.lineno, f"decode {f.attr}()"))  # a decoder made to decode with later
    return sorted(hits, key=lambda h: h.line)


def product_modules() -> list[str]:
    out = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" not in rel:
                out.append(rel)
    return out


def _exempt(rel: str) -> bool:
    return rel.startswith(PARSE_LAYER) or rel in ALLOWED


def _hits(rel: str) -> list[Hit]:
    return scan((ROOT / rel).read_text())


def test_no_product_module_outside_the_parse_layer_reads_raw_cluster_json():
    offenders = {}
    for rel in product_modules():
        if _exempt(rel) or rel in PENDING:
            continue
        hits = _hits(rel)
        if rel in NOT_CLUSTER_OBJECTS:
            hits = [h for h in hits if not h.what.startswith("decode")]
        if hits:
            offenders[rel] = hits
    assert not offenders, (
        "these modules read raw cluster JSON; read the records of inventory.records instead "
        f"(parse_object / as_records), or add the reader to the parse layer: {offenders}"
    )


@pytest.mark.parametrize("rel", sorted(PENDING))
def test_modules_still_to_move_to_the_records_read_no_more_raw_json_than_before(rel):
    if not (ROOT / rel).exists():
        pytest.skip(f"{rel} is gone: drop it from PENDING")
    hits = _hits(rel)
    assert len(hits) <= PENDING[rel], f"{rel} reads more raw JSON than before ({hits}); use inventory.records"


def test_every_allowance_names_a_module_that_exists_and_needs_it():
    for rel in [*ALLOWED, *NOT_CLUSTER_OBJECTS]:
        assert (ROOT / rel).exists(), f"{rel} is gone: drop its allowance"
    for rel in NOT_CLUSTER_OBJECTS:
        assert any(h.what.startswith("decode") for h in _hits(rel)), f"{rel} no longer decodes anything: drop it"
    unneeded = [rel for rel in ALLOWED if not _hits(rel)]
    assert not unneeded, f"allowed but reading no raw JSON: {unneeded}"


def test_the_scan_sees_every_way_the_product_used_to_dig_into_raw_objects():
    # Shapes that were in the product before the parse layer (state.py, readiness.py,
    # workloads.py, blockers.py, rows.py): each must be found.
    source = '''
import json
import yaml
from inventory import jsonlist
from json import loads as from_text

def f(obj, o, pod, n, text, cs, e):
    meta = obj.get("metadata") or {}
    labels = dig(o, "metadata", "labels") or {}
    taints = (n.get("spec") or {}).get("taints")
    phase = dig(pod, "status", "phase")
    ready = (obj.get("status") or {}).get("conditions")
    name = n["metadata"]["name"]
    kubelet = obj["status"]["nodeInfo"]
    owners = meta.get("ownerReferences")
    inv = e.get("involvedObject") or {}
    doc = yaml.safe_load(text)
    raw = json.loads(text)
    decoder = msgspec.json.Decoder()
    item = jsonlist.decode(text)
    other = from_text(text)
'''
    found = {h.line for h in scan(source)}
    lines = [i for i, line in enumerate(source.splitlines(), 1) if "=" in line and "import" not in line]
    assert set(lines) <= found, [source.splitlines()[i - 1] for i in set(lines) - found]


def test_the_scan_leaves_the_products_own_dicts_alone():
    source = '''
def f(item, summary, s, request):
    status = item["status"]
    shown = summary["status"] == "fail"
    col = Column("status", lambda n: n)
    lines = [f"{s['number']}. {s['status']}" for s in summary["steps"]]
    ok = request.GET.get("status")
'''
    assert scan(source) == []
