"""Rules on DCGM exporter scrapes: metrics_pod_attribution_missing,
metrics_missing_for_unallocated_devices, metric_not_supported_on_mig.

Pure: no Django. Input: ``ClusterState.prom`` (file name -> Prometheus text of a dcgm-exporter
``/metrics`` page), parsed and joined to slice devices by ``inventory.dcgm``. Rules only speak
about nodes a scrape covers (``Hostname`` label, or the node of a matched device), so a
snapshot without scrapes yields no telemetry finding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from claims.diagnosis.context import Context, claim_ref, node_ref, pod_ref, slice_ref
from claims.diagnosis.verdicts import Verdict, renders
from inventory.dcgm import GPU_UTIL, DcgmSample, TelemetryJoin
from inventory.dcgm import GR_ACTIVE as PROF_GR_ACTIVE
from inventory.kube import DRA_GROUP, ObjectRef


def _samples(ctx: Context) -> list[DcgmSample]:
    return ctx.telemetry()[0]


def _join(ctx: Context, samples: list[DcgmSample]) -> TelemetryJoin:
    """The join of ``samples`` (those of ``_samples``) to the devices: parsed once per run."""
    return ctx.telemetry()[1]


def _exporter_objects(ctx: Context) -> tuple[list[ObjectRef], dict[str, object]]:
    """The dcgm-exporter DaemonSet(s), their ClusterRole, and whether DRA mode is configured."""
    state = ctx.state
    objs: list[ObjectRef] = []
    ev: dict[str, object] = {}
    for ds in state.daemonsets:
        if not any("dcgm-exporter" in i for i in ds.images):
            continue
        objs.append(ObjectRef("DaemonSet", ds.namespace, ds.name))
        dra = ds.env.get("KUBERNETES_ENABLE_DRA", "").lower() == "true"
        ev[f"{ds.namespace}/{ds.name}.KUBERNETES_ENABLE_DRA"] = dra
        for role_name in {ds.name, ds.service_account or ""} - {""}:
            role = state.cluster_roles.get(role_name)
            if role is None:
                continue
            objs.append(ObjectRef("ClusterRole", None, role_name))
            can_read = role.allows(DRA_GROUP, "resourceslices")
            ev[f"{role_name}.can_read_resourceslices"] = can_read
    return objs, ev


def rule_pod_attribution(ctx: Context) -> Iterator[Verdict]:
    """metrics_pod_attribution_missing: DRA-allocated devices whose series carry no pod."""
    state = ctx.state
    if not state.prom:
        return
    join = _join(ctx, _samples(ctx))
    by_uid = state.pods_by_uid()
    hits = []
    for key, tel in join.by_device.items():
        holders = [c for c in ctx.used.get(key, []) if c.reserved_for]
        if not holders or tel.pod or tel.claim:
            continue
        running = [
            by_uid[r.uid] for c in holders for r in c.reserved_for
            if r.uid in by_uid and by_uid[r.uid].phase == "Running"
        ]
        if running:
            hits.append((key, tel, holders, running))
    if not hits:
        return
    exp_objs, exp_ev = _exporter_objects(ctx)
    objs: list[ObjectRef] = []
    for key, _, holders, running in hits:
        objs.extend(claim_ref(c) for c in holders)
        objs.append(slice_ref(state.devices[key].slice_name))
        objs.extend(pod_ref(p) for p in running)
    objs.extend(exp_objs)
    first_key, first_tel, first_holders, first_pods = hits[0]
    yield Verdict(
        category="metrics_pod_attribution_missing",
        severity="warning",
        objects=tuple(dict.fromkeys(objs)),
        uids=tuple(dict.fromkeys([*(c.uid for _, _, hs, _ in hits for c in hs), *(p.uid for *_, ps in hits for p in ps)])),
        facts={
            "devices": [f"{k[1]}/{k[2]}" for k, *_ in hits], **exp_ev,
            "example": {"device": f"{first_key[1]}/{first_key[2]}",
                        "claim": f"{first_holders[0].namespace}/{first_holders[0].name}",
                        "pod": first_pods[0].name, "util": first_tel.values.get(GPU_UTIL)},
        },
    )


@renders("metrics_pod_attribution_missing")
def _render_pod_attribution(v: Verdict) -> tuple[str, str]:
    f = v.facts
    ex = f["example"]
    causes = []
    if any(k.endswith("KUBERNETES_ENABLE_DRA") and val is False for k, val in f.items()):
        causes.append("the exporter does not set KUBERNETES_ENABLE_DRA")
    if any(k.endswith("can_read_resourceslices") and val is False for k, val in f.items()):
        causes.append("its ClusterRole cannot read resource.k8s.io resourceslices")
    summary = (
        f"{len(f['devices'])} DRA-allocated device(s) have DCGM series with empty pod/namespace labels,"
        f" e.g. {ex['device']} held by {ex['claim']} for pod {ex['pod']}"
        + (f" at {ex['util']:g}% {GPU_UTIL}" if ex["util"] is not None else "")
        + (("; " + " and ".join(causes)) if causes else "") + "."
    )
    action = (
        "Run dcgm-exporter in DRA mode (KUBERNETES_ENABLE_DRA=true) with get/list/watch on"
        " resource.k8s.io resourceslices for its ServiceAccount, then check the series carry"
        " the pod's labels."
    )
    return summary, action


def _scraped_nodes(ctx: Context, samples: list[DcgmSample], join: TelemetryJoin) -> set[str]:
    nodes = {s.hostname for s in samples if s.hostname}
    nodes |= {ctx.state.devices[k].node_name or "" for k in join.by_device}
    return {n for n in nodes if n}


def rule_missing_for_unallocated(ctx: Context) -> Iterator[Verdict]:
    """metrics_missing_for_unallocated_devices: idle devices on a scraped node have no series."""
    state = ctx.state
    if not state.prom:
        return
    samples = _samples(ctx)
    join = _join(ctx, samples)
    scraped = _scraped_nodes(ctx, samples, join)
    silent: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key in join.devices_without_series:
        dev = state.devices[key]
        if dev.node_name in scraped and key not in ctx.used:
            silent[dev.node_name or ""].append(key)
    for node, keys in sorted(silent.items()):
        slices = sorted({state.devices[k].slice_name for k in keys})
        exp_objs, exp_ev = _exporter_objects(ctx)
        yield Verdict(
            category="metrics_missing_for_unallocated_devices",
            severity="info",
            objects=(node_ref(node), *(slice_ref(s) for s in slices), *exp_objs),
            uids=(state.nodes[node].uid if node in state.nodes else "",),
            facts={"devices": [f"{k[1]}/{k[2]}" for k in keys], **exp_ev, "node": node},
        )


@renders("metrics_missing_for_unallocated_devices")
def _render_missing_for_unallocated(v: Verdict) -> tuple[str, str]:
    f = v.facts
    names = [d.rpartition("/")[2] for d in f["devices"]]
    summary = (
        f"Node {f['node']}: {len(names)} unallocated device(s) ("
        + ", ".join(names[:8])
        + ") have no DCGM series at all while others on the node do."
    )
    action = (
        "Check the exporter's device selection (DCGM_EXPORTER devices / collectors) and"
        " whether it only reports GPUs assigned to pods; idle GPUs need telemetry too."
    )
    return summary, action


def rule_metric_not_on_mig(ctx: Context) -> Iterator[Verdict]:
    """metric_not_supported_on_mig: MIG instances are scraped but DCGM_FI_DEV_GPU_UTIL is not
    produced for them (DCGM reports it per physical GPU only)."""
    state = ctx.state
    if not state.prom:
        return
    samples = _samples(ctx)
    mig = [s for s in samples if s.is_mig]
    if not mig:
        return
    mig_fields = {s.field for s in mig}
    if GPU_UTIL in mig_fields:
        return
    by_host: dict[str, set[str]] = defaultdict(set)
    for s in mig:
        by_host[s.hostname or ""].add(f"{s.uuid}/GPU_I_ID={s.gpu_instance_id}")
    join = _join(ctx, samples)
    mig_keys = [k for k, tel in join.by_device.items() if state.devices[k].type == "mig" or state.devices[k].parent_uuid]
    holders = [c for k in mig_keys for c in ctx.used.get(k, [])]
    objs = [node_ref(h) for h in sorted(by_host) if h in state.nodes]
    objs += [claim_ref(c) for c in holders]
    yield Verdict(
        category="metric_not_supported_on_mig",
        severity="info",
        objects=tuple(dict.fromkeys(objs)),
        uids=tuple(dict.fromkeys(c.uid for c in holders)),
        facts={"mig_fields": sorted(mig_fields), "instances": {h: sorted(v) for h, v in by_host.items()}},
    )


@renders("metric_not_supported_on_mig")
def _render_metric_not_on_mig(v: Verdict) -> tuple[str, str]:
    f = v.facts
    fields = f["mig_fields"]
    alt = PROF_GR_ACTIVE if PROF_GR_ACTIVE in fields else f"{PROF_GR_ACTIVE} (enable profiling metrics)"
    summary = (
        f"{sum(len(x) for x in f['instances'].values())} MIG instance series are scraped but none carries"
        f" {GPU_UTIL}; DCGM does not produce it per MIG instance (fields present: "
        + ", ".join(fields[:6]) + ")."
    )
    return summary, f"Use {alt} for MIG utilisation in dashboards and alerts instead of {GPU_UTIL}."
