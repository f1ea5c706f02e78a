"""Rules on devices and containers after allocation: ``cdi_spec_invalid`` and ``device_unhealthy``.

Pure: no Django. Rules yield ``Verdict``s; the renderers below write their summary and next
action.

``cdi_spec_invalid``: the claim's devices were prepared and the runtime resolved the CDI
device, but applying the spec's edits fails when the container is created: the container
waits with reason ``CreateContainerError`` / ``RunContainerError`` (or the kubelet's
``Failed`` event says so) and the message is one the container runtime writes for a CDI
edit (``CDI device injection failed``, ``failed to stat CDI host device``) or an OCI mount of
a host path that is not there (runc's ``error mounting "<host path>"``, a CDI hook such as
``nvidia-cdi-hook`` failing). A wrong driver root (``NVIDIA_DRIVER_ROOT`` of the kubelet
plugin) is the usual cause; the finding names it when the plugin's pod sets it.
``unresolvable CDI devices`` is a different failure (``cdi_injection_failed``), not this one.

``device_unhealthy``: a device allocated to a claim that a live pod uses is reported
unhealthy by one of: the kubelet (``status.containerStatuses[].allocatedResourcesStatus``
health ``Unhealthy``), the driver in the claim (``status.devices[]``: a ``Healthy`` condition
that is False, or ``data.health: Unhealthy``; a ``Ready`` condition says the device was
prepared, not its health), or the driver's health taints on the device (the NVIDIA driver's
``gpu.nvidia.com/xid`` with effect NoSchedule/NoExecute, a fatal XID, and
``gpu.nvidia.com/gpu-lost``; an XID taint with effect ``None`` is an application error). Each
source is judged by ``inventory.capacity``, as the device pages judge a device's health.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from claims.diagnosis.context import Context, claim_ref, earliest, node_ref, pod_ref, slice_ref
from claims.diagnosis.feasibility import device_taints
from claims.diagnosis.verdicts import Verdict, renders
from inventory import capacity
from inventory.records import Pod, ResourceClaim

# Container waiting reasons of a container the runtime could not create or start (kubelet
# ``images``/``kuberuntime`` reasons).
CREATE_FAILED_REASONS = ("CreateContainerError", "RunContainerError", "StartError")
# Texts the container runtimes write when applying a CDI spec or an OCI mount fails
# (containerd/CRI-O's CDI injection, runc's mount step, OCI hooks the NVIDIA CDI spec adds).
CDI_APPLY_ERRORS = (
    "CDI device injection failed",
    "failed to stat CDI host device",
    "error mounting",
    "createContainer hook",
    "nvidia-cdi-hook",
)
# The resolution failure: a different category (cdi_injection_failed).
UNRESOLVABLE_CDI = "unresolvable CDI devices"
# Environment variables of the NVIDIA GPU kubelet plugin naming where the host driver is.
DRIVER_ROOT_ENV = ("NVIDIA_DRIVER_ROOT", "DRIVER_ROOT", "CONTAINER_DRIVER_ROOT")

def _first_host_path(message: str) -> str | None:
    """The first double-quoted absolute path in a runtime message (``error mounting "/run/..."``)."""
    parts = message.split('"')
    for i in range(1, len(parts), 2):
        p = parts[i].strip()
        if p.startswith("/") and " " not in p:
            return p
    return None


def _create_failures(ctx: Context, pod: Pod) -> list[dict[str, Any]]:
    """The pod's containers (and kubelet events) that failed on applying a CDI edit or mount."""
    out = []
    for c in pod.containers:
        msg = c.waiting_message or ""
        if c.waiting_reason in CREATE_FAILED_REASONS and _is_cdi_apply(msg):
            out.append({"container": c.name, "reason": c.waiting_reason, "message": msg[:500], "since": None})
    for e in ctx.state.events_for("Pod", pod.namespace, pod.name):
        if e.reason in ("Failed", *CREATE_FAILED_REASONS) and _is_cdi_apply(e.message):
            out.append({"container": None, "reason": e.reason, "message": e.message[:500], "since": e.first,
                        "count": e.count})
    return out


def _is_cdi_apply(message: str) -> bool:
    return UNRESOLVABLE_CDI not in message and any(t in message for t in CDI_APPLY_ERRORS)


def _driver_roots(pods: list[Pod]) -> dict[str, str]:
    out = {}
    for p in pods:
        for c in p.pod_spec.containers:
            for k in DRIVER_ROOT_ENV:
                if k in c.env:
                    out[f"{p.name}/{c.name}.{k}"] = c.env[k]
    return out


def _allocated_claims(ctx: Context, pod: Pod) -> list[ResourceClaim]:
    out = []
    for _, name in ctx.state.pod_claim_names(pod):
        c = ctx.state.claims.get((pod.namespace, name or ""))
        if c is not None and c.allocated:
            out.append(c)
    return out


def rule_cdi_spec_invalid(ctx: Context) -> Iterator[Verdict]:
    """cdi_spec_invalid: a pod with allocated DRA claims whose container cannot be created
    because the CDI spec's edits (mounts, device nodes, hooks) fail on the host."""
    state = ctx.state
    for pod in ctx.each_pod():
        if pod.terminal or pod.deletion_timestamp or not pod.node_name or pod.ready:
            continue
        claims = _allocated_claims(ctx, pod)
        if not claims:
            continue
        failures = _create_failures(ctx, pod)
        if not failures:
            continue
        plugins = state.plugin_pods_on_node(pod.node_name)
        roots = _driver_roots(plugins)
        path = next((p for f in failures if (p := _first_host_path(f["message"]))), None)
        objs = [pod_ref(pod), *(claim_ref(c) for c in claims), node_ref(pod.node_name), *(pod_ref(p) for p in plugins)]
        yield Verdict(
            category="cdi_spec_invalid",
            severity="critical",
            objects=tuple(dict.fromkeys(objs)),
            uids=(pod.uid, *(c.uid for c in claims)),
            since=earliest([f["since"] for f in failures] + [c.allocation_timestamp for c in claims]),
            facts={
                "node": pod.node_name,
                "failures": failures[:3],
                "host_path": path,
                "driver_root": roots,
                "drivers": sorted({r.driver for c in claims for r in c.results}),
                "plugin_pods": [p.name for p in plugins],
            },
        )


@renders("cdi_spec_invalid")
def _render_cdi_spec_invalid(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    first = f["failures"][0]
    root = "; the kubelet plugin sets " + ", ".join(f"{k}={val}" for k, val in f["driver_root"].items()) \
        if f["driver_root"] else ""
    summary = (
        f"Pod {main.namespace}/{main.name} on {f['node']}: its DRA devices were prepared, but the container"
        f" runtime fails applying the CDI spec ({first['reason']}: '{first['message'][:200]}')"
        + (f"; host path {f['host_path']} is missing" if f["host_path"] else "") + root + "."
    )
    action = (
        f"On {f['node']}, check that {f['host_path'] or 'the paths the CDI spec names'} exists; if not, fix"
        " the driver root of the DRA driver (Helm value nvidiaDriverRoot: / for a host-installed driver,"
        " /run/nvidia/driver for the GPU Operator's) and restart its kubelet plugin so it rewrites the spec,"
        " then recreate the pod."
    )
    return summary, action


def _claim_health(ctx: Context, claim: ResourceClaim, pods: list[Pod]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Device key -> the reports that say it is unhealthy: the claim's ``status.devices``, the
    driver's health taints, the pods' kubelet reports. Each judged by ``inventory.capacity``
    (``status_health``, ``taint_health``, ``pod_reports``), as the device pages judge it."""
    state = ctx.state
    reports: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    keys = {r.device_key for r in claim.results}
    for st in claim.device_statuses:
        if st.device_key in keys and capacity.status_health(st) == capacity.UNHEALTHY:
            cond = st.condition(capacity.HEALTHY)
            reports.setdefault(st.device_key, []).append({
                "source": "claim status.devices",
                "reason": cond.reason if cond else None,
                "message": ((cond.message if cond else None) or "")[:200],
                "since": cond.last_transition_time if cond else None,
            })
    for key in keys:
        dev = state.devices.get(key)
        if dev is None:
            continue
        for t in device_taints(state, dev):
            if capacity.taint_health([t]) == capacity.UNHEALTHY:
                reports.setdefault(key, []).append({"source": "device taint", "taint": t.to_dict(), "since": t.time_added})
    for p in pods:
        for key, health in capacity.pod_reports(p, {(claim.namespace, claim.name): claim}).items():
            if health == capacity.UNHEALTHY and key in keys:
                reports.setdefault(key, []).append({"source": "pod allocatedResourcesStatus", "pod": p.name,
                                                    "health": health, "since": None})
    return reports


def rule_device_unhealthy(ctx: Context) -> Iterator[Verdict]:
    """device_unhealthy: a device allocated to a claim that a live pod uses is reported
    unhealthy (see the module docstring for the three sources)."""
    state = ctx.state
    for claim in ctx.each_claim():
        if not claim.allocated or claim.deletion_timestamp:
            continue
        pods = [p for p in state.pods_using_claim(claim) if not p.terminal and not p.deletion_timestamp]
        if not pods:
            continue
        reports = _claim_health(ctx, claim, pods)
        if not reports:
            continue
        slices = sorted({state.devices[k].slice_name for k in reports if k in state.devices})
        nodes = list(claim.allocation_nodes)
        objs = [claim_ref(claim), *(pod_ref(p) for p in pods), *(slice_ref(s) for s in slices),
                *(node_ref(n) for n in nodes if n in state.nodes)]
        yield Verdict(
            category="device_unhealthy",
            severity="critical",
            objects=tuple(dict.fromkeys(objs)),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=earliest([r["since"] for rs in reports.values() for r in rs]),
            facts={
                "devices": {"/".join(k): rs for k, rs in sorted(reports.items())},
                "pods": [p.name for p in pods],
                "nodes": nodes,
            },
        )


@renders("device_unhealthy")
def _render_device_unhealthy(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    parts = []
    for dev, reports in list(f["devices"].items())[:3]:
        srcs = sorted({r["source"] for r in reports})
        detail = next((r for r in reports if r["source"] == "device taint"), None)
        taint = f" (taint {detail['taint'].get('key')}={detail['taint'].get('value', '')}" \
                f" {detail['taint'].get('effect')})" if detail else ""
        parts.append(f"{dev}: unhealthy per {', '.join(srcs)}{taint}")
    summary = (
        f"Claim {main.namespace}/{main.name}, used by pod(s) {', '.join(f['pods'])}, holds"
        f" {len(f['devices'])} device(s) reported unhealthy: " + "; ".join(parts) + "."
    )
    action = (
        "Move the workload off the device (delete the pod so its claim is re-allocated on a healthy"
        " device; checkpoint first), then have the GPU checked (nvidia-smi -q, XID in the kernel log)"
        " and restart the driver's kubelet plugin once it is repaired to clear the taint."
    )
    return summary, action
