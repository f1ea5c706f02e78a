"""GPU models of a cluster and CEL selectors that tell them apart.

Pure: no Django. Models come from GFD Node labels ``nvidia.com/gpu.product`` and
``nvidia.com/gpu.memory`` (MiB) and from ResourceSlice devices of driver ``gpu.nvidia.com``
(attribute ``productName``, capacity ``memory``). Selectors use the DRA CEL names
``device.attributes['gpu.nvidia.com'].productName`` and ``device.capacity['gpu.nvidia.com'].memory``.
Cluster text is never evaluated; product names go into a CEL string literal only when they
match a fixed safe pattern.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inventory import records
from inventory.kube import GPU_CLASS, GPU_DRIVER, GPU_MEMORY_LABEL, PRODUCT_LABEL
from inventory.records import KubeRecord, Node, ResourceSlice

__all__ = ["GIB", "GPU_CLASS", "MIB", "GpuModel", "SelectorProposal", "gpu_models", "memory_threshold_gib",
           "selector_for", "selector_options"]
GIB = 2**30
MIB = 2**20
_SAFE_PRODUCT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,99}$")


@dataclass(frozen=True)
class GpuModel:
    """A GPU model seen in the cluster.

    ``product``: GFD label form (``NVIDIA-H200-NVL``). ``product_name``: the DRA attribute
    ``productName`` (``NVIDIA H200 NVL``) when a ResourceSlice shows it, else None.
    ``memory_bytes``: slice capacity ``memory``, else node label ``nvidia.com/gpu.memory``
    (MiB) in bytes. ``nodes``: node names carrying it. ``aliases``: other label values its
    nodes carry (a hand-set ``nvidia.com/gpu.product=H100`` on nodes whose slices publish
    ``NVIDIA H100 80GB HBM3``): a workload pinned to one is pinned to this model.
    """

    product: str
    product_name: str | None
    memory_bytes: int | None
    nodes: tuple[str, ...]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SelectorProposal:
    """A CEL selector that keeps a request on some GPU models of a mixed cluster.

    ``basis``: ``memory`` (threshold on capacity ``memory``) or ``productName``.
    ``applied``: True when it is already in the generated template (the workload is pinned to
    these models by nodeSelector/affinity), False when offered for step 5.
    """

    models: tuple[str, ...]
    expression: str
    basis: str
    applied: bool
    reason: str


def gpu_models(objects: Iterable[KubeRecord | dict[str, Any]]) -> list[GpuModel]:
    """GPU models from Node labels and ResourceSlice devices (type ``gpu``), by label form.
    ``objects``: records (raw objects are parsed here; slices that cannot be are skipped)."""
    mem: dict[str, int | None] = {}
    names: dict[str, str | None] = {}
    nodes: dict[str, set[str]] = defaultdict(set)
    published: dict[str, set[str]] = defaultdict(set)  # node -> models its slices publish
    recs = list(records.as_records(objects, [], skip_unknown_versions=True))
    for n in recs:
        if not isinstance(n, Node):
            continue
        product = n.labels.get(PRODUCT_LABEL)
        if not product:
            continue
        mib = n.labels.get(GPU_MEMORY_LABEL, "")
        mem.setdefault(product, int(mib) * MIB if mib.isdigit() else None)
        names.setdefault(product, None)
        nodes[product].add(n.name)
    for sl in recs:
        if not isinstance(sl, ResourceSlice):
            continue
        for d in sl.devices:
            if d.driver != GPU_DRIVER or d.type != "gpu" or not d.product_name:
                continue
            product = d.product_name.replace(" ", "-")
            names[product] = d.product_name
            if d.memory_bytes:
                mem[product] = d.memory_bytes  # what CEL compares, so it wins over the label
            if d.node_name:
                nodes[product].add(d.node_name)
                published[d.node_name].add(product)
    # A label value no slice publishes, on nodes whose slices all publish one other model:
    # that model, labelled by hand (a selector on the label's text would match no device).
    aliases: dict[str, set[str]] = defaultdict(set)
    for label in [p for p in mem.keys() | names.keys() if names.get(p) is None]:
        seen = [published.get(n, set()) for n in nodes[label]]
        if seen and all(len(s) == 1 for s in seen) and len(one := set().union(*seen)) == 1:
            (model,) = one
            aliases[model].add(label)
            nodes[model] |= nodes.pop(label)
            mem.pop(label, None)
            names.pop(label, None)
    return [GpuModel(p, names.get(p), mem.get(p), tuple(sorted(nodes[p])), tuple(sorted(aliases.get(p, ()))))
            for p in sorted(mem.keys() | names.keys())]


def memory_threshold_gib(lower: int, upper: int) -> int | None:
    """A round GiB value well between two memory sizes (bytes), or None when too close.

    First multiple of 10 GiB at least 2% above ``lower`` if it stays 2% below ``upper``
    (95.6 GiB vs 140.4 GiB -> 100), else the integer midpoint. A margin survives rounding
    differences between what nodes label and what the driver publishes.
    """
    lo, hi = lower / GIB, upper / GIB
    if hi <= lo * 1.04:
        return None
    candidate = math.ceil(lo * 1.02 / 10) * 10
    if candidate < hi * 0.98:
        return candidate
    mid = math.floor((lo + hi) / 2)
    return mid if lo * 1.02 < mid < hi * 0.98 else None


def _memory_expr(gib: int, op: str) -> str:
    return f"device.capacity['{GPU_DRIVER}'].memory.compareTo(quantity('{gib}Gi')) {op} 0"


def _product_name(model: GpuModel) -> str | None:
    """The productName to match: from a slice, else the label with dashes as spaces (GFD
    replaces spaces with dashes). None when the text is not safe inside a CEL literal."""
    name = model.product_name or model.product.replace("-", " ")
    return name if _SAFE_PRODUCT.match(name) else None


def selector_for(chosen: list[GpuModel], models: list[GpuModel]) -> tuple[str, str] | None:
    """(CEL expression, basis) that selects exactly the ``chosen`` models among ``models``.

    Prefers a memory threshold (survives naming differences between label and slice); falls
    back to ``productName``. None when there is nothing to tell apart or no safe expression.
    """
    others = [m for m in models if m.product not in {c.product for c in chosen}]
    if not chosen or not others:
        return None
    cm = [m.memory_bytes for m in chosen]
    om = [m.memory_bytes for m in others]
    if all(cm) and all(om):
        if min(cm) > max(om):  # type: ignore[type-var]
            gib = memory_threshold_gib(max(om), min(cm))  # type: ignore[type-var]
            if gib is not None:
                return _memory_expr(gib, ">"), "memory"
        if max(cm) < min(om):  # type: ignore[type-var]
            gib = memory_threshold_gib(max(cm), min(om))  # type: ignore[type-var]
            if gib is not None:
                return _memory_expr(gib, "<"), "memory"
    names = [_product_name(m) for m in chosen]
    if not all(names):
        return None
    attr = f"device.attributes['{GPU_DRIVER}'].productName"
    if len(names) == 1:
        return f"{attr} == '{names[0]}'", "productName"
    return f"{attr} in [{', '.join(repr(n) for n in names)}]", "productName"


def selector_options(models: list[GpuModel]) -> list[SelectorProposal]:
    """For a mixed cluster, one selector per model for step 5 (empty when one model)."""
    if len(models) < 2:
        return []
    out = []
    for m in models:
        sel = selector_for([m], models)
        if sel:
            out.append(SelectorProposal((m.product,), sel[0], sel[1], False, f"keep a request on {m.product}"))
    return out
