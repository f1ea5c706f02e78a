"""Rules for drivers, nodes and devices.

Pure: no Django. Categories: driver_not_publishing_on_node, driver_publishing_empty_pool,
driver_not_registered_on_node, stale_slice_driver_unavailable, mig_instance_not_published,
overlapping_devices_double_allocation, prepare_failed_on_node, cdi_injection_failed,
unprepare_blocked_driver_unavailable, device_taint_eviction, device_taint_rule_too_broad.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from claims.diagnosis.context import Context, claim_ref, earliest, minutes, node_ref, pod_ref, slice_ref
from claims.diagnosis.feasibility import (
    ClaimFeasibility,
    allocated_devices_of,
    blocking_taints,
    device_taints,
    rule_selects,
)
from claims.diagnosis.known_issues import issues_for, load_known_issues
from claims.diagnosis.state import devices_by_uuid
from claims.diagnosis.verdicts import Verdict, renders
from inventory.cel import SelectorError, evaluate_device
from inventory.kube import GPU_DRIVER, GPU_MEMORY_LABEL, PRODUCT_LABEL, ObjectRef, parse_version
from inventory.parse import parse_quantity
from inventory.records import Device, Node, Pod, ResourceClaim

MIG_DISABLED_CONFIGS = ("all-disabled", "")

# Plain substrings of kubelet event messages (compared with `in`): the texts the kubelet
# (``is not registered``, ``not allowed to use``) and containerd/CRI-O (``unresolvable CDI
# devices``) emit.
NOT_REGISTERED = "is not registered"
# The kubelet's event reasons for a claim it cannot prepare or unprepare (pkg/kubelet/events),
# and for a container the runtime failed to create or start.
DRA_KUBELET_REASONS = ("FailedPrepareDynamicResources", "FailedUnprepareDynamicResources")
CONTAINER_FAILED_REASONS = ("Failed", "CreateContainerError", "RunContainerError")
NOT_ALLOWED = "not allowed to use"
UNRESOLVABLE_CDI = "unresolvable CDI devices"
# The NVIDIA GPU driver's errors when it cannot write a claim's CDI spec during
# NodePrepareResources (``unable to create CDI spec file for claim``, and the CDI library's
# ``invalid CDI Spec``): the spec generation depends on the container toolkit's files.
CDI_SPEC_WRITE = ("unable to create CDI spec file", "invalid CDI Spec")
# Reasons of the events kube-controller-manager's device taint eviction controller writes on
# the pods it deletes (``DeviceTaintManagerEviction``; node taints' ``TaintManagerEviction``).
EVICTION_REASONS = ("DeviceTaintManagerEviction", "TaintManagerEviction")
# Resources the NVIDIA device plugin advertises in node allocatable.
DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"
DEVICE_PLUGIN_MIG_PREFIX = "nvidia.com/mig-"
# The GPU Operator's container-toolkit pods carry this ``app`` label; the image is NVIDIA's
# ``container-toolkit``.
TOOLKIT_APP_LABEL = "nvidia-container-toolkit-daemonset"
TOOLKIT_IMAGE = "/container-toolkit:"


def is_container_toolkit(pod: Pod) -> bool:
    """The NVIDIA container toolkit's pod, by its ``app`` label or its image (not its name)."""
    if pod.labels.get("app") == TOOLKIT_APP_LABEL:
        return True
    return any(TOOLKIT_IMAGE in i for i in pod.images)


def driver_gaps(ctx: Context) -> dict[str, str]:
    """GPU nodes where the NVIDIA GPU driver publishes nothing: node -> ``empty_pool`` or
    ``not_publishing``. Only when the GPU driver is meant to run in this cluster. Once per
    diagnosis (two rule families ask), and while nodes, slices and plugin pods stand
    (``ClusterState.node_facts``)."""
    facts = ctx.state.node_facts
    if "driver_gaps" not in facts:
        facts["driver_gaps"] = _driver_gaps(ctx)
    return facts["driver_gaps"]


def _driver_gaps(ctx: Context) -> dict[str, str]:
    state = ctx.state
    gaps: dict[str, str] = {}
    if not state.gpu_driver_expected():
        return gaps
    for node in state.nodes.values():
        gpu_slices = [s for s in state.slices_on_node(node.name) if s.driver == GPU_DRIVER]
        plugin = [p for p in state.plugin_pods_on_node(node.name) if state.is_gpu_kubelet_plugin(p)]
        if not node.has_nvidia_gpu and not plugin:
            continue
        if not plugin and not gpu_slices and device_plugin_serves(node):
            # The device plugin serves this node's GPUs (DRA perhaps only for ComputeDomains,
            # as in NVIDIA's GB200 setup): it is not a DRA GPU node.
            continue
        if gpu_slices and not any(s.devices for s in gpu_slices):
            gaps[node.name] = "empty_pool"
        elif not gpu_slices:
            gaps[node.name] = "not_publishing"
    return gaps


def device_plugin_serves(node: Node) -> bool:
    """The NVIDIA device plugin advertises the node's GPUs: ``nvidia.com/gpu`` (or a MIG
    resource ``nvidia.com/mig-...``) is a positive quantity in ``status.allocatable``."""
    for name, qty in node.allocatable.items():
        if name == DEVICE_PLUGIN_RESOURCE or name.startswith(DEVICE_PLUGIN_MIG_PREFIX):
            q = parse_quantity(str(qty))
            if q is not None and q > 0:
                return True
    return False


def _plugin_state(pods: list[Pod]) -> str:
    bits = []
    for p in pods:
        for c in p.containers:
            if c.waiting_reason or c.restart_count:
                bits.append(
                    f"{p.name}/{c.name}: {c.waiting_reason or 'running'}, {c.restart_count} restarts"
                    + (f", last error '{c.last_terminated_message}'" if c.last_terminated_message else "")
                )
    return "; ".join(bits)


def labelled_gpu(node: Node) -> Device | None:
    """The whole GPU a node's GPU Feature Discovery labels describe, as a device would be
    published: ``nvidia.com/gpu.memory`` (MiB) as capacity ``memory``, ``nvidia.com/gpu.product``
    (dashes for spaces) as ``productName``. None without a memory label."""
    mem = node.labels.get(GPU_MEMORY_LABEL, "")
    if not mem.isdigit():
        return None
    product = node.labels.get(PRODUCT_LABEL, "").replace("-", " ")
    attrs = {f"{GPU_DRIVER}/type": "gpu"}
    if product:
        attrs[f"{GPU_DRIVER}/productName"] = product
    return Device(
        driver=GPU_DRIVER, pool=node.name, name="labelled-gpu", node_name=node.name, slice_name="",
        type="gpu", uuid=None, parent_uuid=None, product_name=product or None, profile=None,
        architecture=None, driver_version=None, pci_bus_id=None, memory_bytes=int(mem) * 2**20,
        attributes=attrs, capacity={f"{GPU_DRIVER}/memory": f"{mem}Mi"},
    )  # fmt: skip


def node_could_satisfy(ctx: Context, feas: ClaimFeasibility, node_name: str) -> bool:
    """Could a GPU of ``node_name`` (whose driver publishes nothing) satisfy every request of
    the claim? Judged from the node's labels (``labelled_gpu``) against each request's class
    and selectors; when the labels cannot tell (no memory label, a selector reading an
    attribute the labels lack), assume it could."""
    node = ctx.state.nodes.get(node_name)
    gpu = labelled_gpu(node) if node else None
    if gpu is None:
        return True
    for r in feas.requests:
        dc = ctx.state.device_classes.get(r.device_class or "")
        try:
            result = evaluate_device(gpu, [*(dc.selectors if dc else ()), *r.selectors])
        except SelectorError:  # a selector that cannot run is selector_invalid's finding; it could match
            continue
        if not result.error and not result.matched:
            return False
    return True


def _stuck_claims_for_gpu_driver(ctx: Context) -> list[tuple[ResourceClaim, list[Pod]]]:
    out = []
    for claim, pods in ctx.pending_claims():
        feas = ctx.feasibility(claim)
        if feas.verdict == "no_matching_device" and not any(r.matching for r in feas.requests):
            out.append((claim, pods))
    return out


def rule_driver_publishing(ctx: Context) -> Iterator[Verdict]:
    """driver_publishing_empty_pool and driver_not_publishing_on_node."""
    state = ctx.state
    gaps = driver_gaps(ctx)
    if not gaps:
        return
    stuck = _stuck_claims_for_gpu_driver(ctx)
    for node_name, kind in sorted(gaps.items()):
        plugins = state.plugin_pods_on_node(node_name)
        plugin_txt = _plugin_state(plugins)
        # Claims this node's GPUs could serve (a claim needing more memory than they have is
        # not waiting for this driver: its own no_matching_device finding says so).
        affected = [
            (c, pods) for c, pods in stuck
            if not any(p.node_name and p.node_name != node_name for p in pods)
            and node_could_satisfy(ctx, ctx.feasibility(c), node_name)
        ]
        objs: list[ObjectRef] = []
        if kind == "empty_pool":
            empty = [s for s in state.slices_on_node(node_name) if s.driver == GPU_DRIVER]
            objs.extend(slice_ref(s.name) for s in empty)
        objs.append(node_ref(node_name))
        objs.extend(pod_ref(p) for p in plugins)
        for c, pods in affected:
            objs.append(claim_ref(c))
            objs.extend(pod_ref(p) for p in pods)
        since = earliest([ctx.pending_since(c, pods) for c, pods in affected])
        node = state.nodes.get(node_name)
        product = node.labels.get(PRODUCT_LABEL, "GPUs") if node else "GPUs"
        common = {
            "node": node_name,
            "plugin_pods": [p.name for p in plugins],
            "plugin_state": plugin_txt,
            "affected_claims": [f"{c.namespace}/{c.name}" for c, _ in affected],
        }
        yield Verdict(
            category="driver_publishing_empty_pool" if kind == "empty_pool" else "driver_not_publishing_on_node",
            severity="critical" if kind == "empty_pool" or affected else "warning",
            objects=tuple(dict.fromkeys(objs)),
            uids=(node.uid if node else "", *(c.uid for c, _ in affected)),
            since=since,
            facts={**common, "product": product, "driver": GPU_DRIVER},
        )


@renders("driver_publishing_empty_pool")
def _render_empty_pool(v: Verdict) -> tuple[str, str]:
    f = v.facts
    summary = (
        f"Node {f['node']} has {f['product']} but its {f['driver']} ResourceSlice lists zero"
        " devices" + (f"; kubelet plugin: {f['plugin_state']}" if f["plugin_state"] else "")
        + (f"; {len(f['affected_claims'])} claim(s) wait for a device" if f["affected_claims"] else "") + "."
    )
    action = (
        f"Read the DRA kubelet plugin's log on {f['node']} and fix why it enumerates no"
        " GPUs (crash loop, unsupported MIG query, driver mismatch), then confirm the"
        " slice lists the node's GPUs."
    )
    return summary, action


@renders("driver_not_publishing_on_node")
def _render_not_publishing(v: Verdict) -> tuple[str, str]:
    f = v.facts
    summary = (
        f"Node {f['node']} has {f['product']} but no {f['driver']} ResourceSlice"
        + (f"; kubelet plugin: {f['plugin_state']}" if f["plugin_state"] else
           ("; no DRA kubelet-plugin pod runs there" if not f["plugin_pods"] else ""))
        + "."
    )
    action = (
        f"Check that the DRA driver's kubelet-plugin DaemonSet runs and is ready on"
        f" {f['node']} (node selector, tolerations, host driver), then confirm a slice appears."
    )
    return summary, action


def _kubelet_issue_note(ctx: Context, node_name: str | None) -> tuple[str, dict[str, Any]]:
    node = ctx.state.nodes.get(node_name or "")
    if node is None:
        return "", {}
    for issue in issues_for("kubelet", parse_version(node.kubelet_version)):
        if issue.category == "driver_not_registered_on_node":
            return (
                f"; kubelet {node.kubelet_version} has known bug {issue.id} (fixed in {issue.fixed_in})",
                {"known_issue": issue.id, "link": issue.link, "fixed_in": issue.fixed_in,
                 "kubelet_version": node.kubelet_version},
            )
    return "", {}


def _event_node(ctx: Context, e: Any, pod: Pod | None) -> str | None:
    return (pod.node_name if pod else None) or e.host


def _pod_claims(ctx: Context, pod: Pod) -> list[ObjectRef]:
    return [
        ObjectRef("ResourceClaim", pod.namespace, n)
        for _, n in ctx.state.pod_claim_names(pod)
        if n and (pod.namespace, n) in ctx.state.claims
    ]


def rule_kubelet_events(ctx: Context) -> Iterator[Verdict]:
    """driver_not_registered_on_node, cdi_injection_failed, prepare_failed_on_node from kubelet
    events of pods that are still not running."""
    state = ctx.state
    grouped: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for e in ctx.each_event():
        if e.involved_kind != "Pod":
            continue
        pod = state.pods.get((e.involved_namespace or e.namespace or "", e.involved_name or ""))
        if pod is None or pod.terminal or (pod.phase == "Running" and pod.ready):
            continue
        msg = e.message
        if e.reason in DRA_KUBELET_REASONS and NOT_REGISTERED in msg:
            cat = "driver_not_registered_on_node"
        elif e.reason in CONTAINER_FAILED_REASONS and UNRESOLVABLE_CDI in msg:
            cat = "cdi_injection_failed"
        elif e.reason in ("FailedPrepareDynamicResources",) and NOT_ALLOWED not in msg:
            cat = "prepare_failed_on_node"
        else:
            continue
        grouped[(cat, pod.namespace, pod.name)].append(e)
    for (cat, ns, name), events in sorted(grouped.items()):
        pod = state.pods[(ns, name)]
        node = _event_node(ctx, events[0], pod)
        plugins = state.plugin_pods_on_node(node) if node else []
        since = earliest([e.first for e in events])
        count = sum(e.count for e in events)
        msg = events[-1].message
        objs = [pod_ref(pod), *_pod_claims(ctx, pod)]
        evidence: dict[str, Any] = {"events": [e.message for e in events][:3], "count": count, "node": node,
                                    "pod": f"{ns}/{name}", "message": msg[:300],
                                    "plugin_pods": [p.name for p in plugins]}
        if cat == "driver_not_registered_on_node":
            _note, issue_ev = _kubelet_issue_note(ctx, node)
            evidence.update(issue_ev)
            objs += [node_ref(node)] if node else []
            objs += [pod_ref(p) for p in plugins]
        elif cat == "cdi_injection_failed":
            objs += [node_ref(node)] if node else []
        else:
            toolkit = [
                p for p in state.pods.values()
                if p.node_name == node and is_container_toolkit(p)
            ] if any(t in msg for t in CDI_SPEC_WRITE) else []
            objs += [pod_ref(p) for p in plugins] + [pod_ref(p) for p in toolkit]
            plugin_start = earliest([c.started_at for p in plugins for c in p.containers] + [p.created for p in plugins])
            newer = [
                p for p in toolkit
                if (ctx.age(earliest([c.started_at for c in p.containers] + [p.created])) or 0)
                < (ctx.age(plugin_start) or 0)
            ]
            if newer:
                evidence["subcategory"] = "cdi_spec_generation_failed"
                evidence["toolkit_replaced"] = newer[0].name
        yield Verdict(
            category=cat,
            severity="critical",
            objects=tuple(dict.fromkeys(objs)),
            uids=(pod.uid,),
            since=since,
            facts=evidence,
        )


@renders("driver_not_registered_on_node")
def _render_not_registered(v: Verdict) -> tuple[str, str]:
    f = v.facts
    note = (f"; kubelet {f['kubelet_version']} has known bug {f['known_issue']} (fixed in {f['fixed_in']})"
            if f.get("known_issue") else "")
    summary = (
        f"Kubelet on {f['node']} reports the DRA driver as not registered for pod {f['pod']}"
        f" (x{f['count']}: '{f['message'][:160]}'){note}."
    )
    action = (
        f"Restart the DRA kubelet-plugin pod on {f['node']} (and the kubelet if the plugin is"
        " healthy); upgrade the kubelet if its version has the known idle-connection bug."
    )
    return summary, action


@renders("cdi_injection_failed")
def _render_cdi_injection_failed(v: Verdict) -> tuple[str, str]:
    f = v.facts
    summary = (
        f"Pod {f['pod']}: devices were prepared but the container runtime on {f['node']}"
        f" cannot resolve the CDI device (x{f['count']}: '{f['message'][:160]}')."
    )
    action = (
        f"Check that CDI is enabled in the container runtime on {f['node']} and that the"
        " plugin's CDI spec directory is the one the runtime reads, then recreate the pod."
    )
    return summary, action


@renders("prepare_failed_on_node")
def _render_prepare_failed(v: Verdict) -> tuple[str, str]:
    f = v.facts
    extra = (
        f"; the container toolkit pod {f['toolkit_replaced']} was replaced after the kubelet"
        " plugin started, so the plugin's CDI information may be stale" if f.get("toolkit_replaced") else ""
    )
    summary = (
        f"Kubelet on {f['node']} cannot prepare the devices of pod {f['pod']}"
        f" (FailedPrepareDynamicResources x{f['count']}: '{f['message'][:200]}'){extra}."
    )
    action = (
        f"Read the DRA kubelet plugin's log on {f['node']} for this claim and fix the cause;"
        " restart the plugin pod if its cached state is stale, then watch the next prepare."
    )
    return summary, action


def rule_stale_slice(ctx: Context) -> Iterator[Verdict]:
    """stale_slice_driver_unavailable: an allocation names a device no slice publishes."""
    state = ctx.state
    if not state.slices:
        return
    for c in ctx.each_claim():
        if not c.allocated:
            continue
        gone = [r for r in c.results if r.device_key not in state.devices]
        if not gone:
            continue
        nodes = list(c.allocation_nodes)
        plugins = [p for n in nodes for p in state.plugin_pods_on_node(n)]
        not_ready = [p for p in plugins if not p.ready]
        pods = [p for p in state.pods_using_claim(c)]
        yield Verdict(
            category="stale_slice_driver_unavailable",
            severity="critical",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in pods),
                                         *(node_ref(n) for n in nodes), *(pod_ref(p) for p in plugins)])),
            uids=(c.uid, *(p.uid for p in pods)),
            since=c.allocation_timestamp,
            facts={"missing_devices": [f"{r.driver}/{r.pool}/{r.device}" for r in gone],
                   "older_generation": [f"{r.driver}/{r.pool}/{r.device}" for r in gone if r.device_key in state.superseded_devices],
                   "driver": gone[0].driver, "plugins_not_ready": [p.name for p in not_ready],
                   "plugin_pods": [p.name for p in plugins]},
        )


@renders("stale_slice_driver_unavailable")
def _render_stale_slice(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    devices = ", ".join(d.split("/", 1)[1] for d in f["missing_devices"])
    older = f.get("older_generation") or []
    summary = (
        f"Claim {main.namespace}/{main.name} is allocated {devices} ({f['driver']}), which no"
        " ResourceSlice publishes any more"
        + (f" (only a slice of an older pool generation lists {', '.join(d.split('/', 1)[1] for d in older)};"
           " the scheduler reads the newest alone)" if older else "")
        + (f"; plugin pod(s) not ready: {', '.join(f['plugins_not_ready'])}" if f["plugins_not_ready"] else "")
        + "."
    )
    action = (
        "Bring the driver's kubelet plugin back on the node so it republishes its pool; if"
        " the node or device is gone for good, delete the consuming pods so the claim is"
        " deallocated and re-allocated elsewhere."
    )
    return summary, action


def _mig_label_counts(labels: dict[str, str] | Any) -> dict[str, int]:
    out = {}
    for k, v in labels.items():
        if k.startswith("nvidia.com/mig-") and k.endswith(".count") and str(v).isdigit():
            out[k[len("nvidia.com/mig-"):-len(".count")]] = int(v)
    return out


def rule_mig_not_published(ctx: Context) -> Iterator[Verdict]:
    """mig_instance_not_published: node labels promise MIG instances the slices do not list."""
    state = ctx.state
    for node in ctx.each_node():
        cfg = node.labels.get("nvidia.com/mig.config", "")
        cfg_state = node.labels.get("nvidia.com/mig.config.state", "success")
        devs = [d for s in state.slices_on_node(node.name) if s.driver == GPU_DRIVER for d in s.devices]
        if not devs:
            continue  # nothing published at all: the driver rules own that
        migs = [d for d in devs if d.type == "mig"]
        expected = _mig_label_counts(node.labels)
        problems = []
        for profile, n in sorted(expected.items()):
            have = sum(1 for d in migs if d.profile == profile)
            if have < n:
                problems.append(f"{profile}: {have} published, labels say {n}")
        if cfg not in MIG_DISABLED_CONFIGS and cfg_state == "success" and not migs and not expected:
            problems.append(f"mig.config={cfg} applied but no MIG device is published")
        unattributed = [d for d in migs if not d.parent_uuid]
        if unattributed:
            problems.append(f"{len(unattributed)} MIG device(s) without parentUUID")
        if not problems:
            continue
        slices = sorted({d.slice_name for d in devs})
        plugins = state.plugin_pods_on_node(node.name)
        yield Verdict(
            category="mig_instance_not_published",
            severity="warning",
            objects=(node_ref(node.name), *(slice_ref(s) for s in slices), *(pod_ref(p) for p in plugins)),
            uids=(node.uid,),
            facts={"mig_config": cfg, "expected": expected, "published": len(migs), "problems": problems,
                   "node": node.name, "plugin_pods": [p.name for p in plugins]},
        )


@renders("mig_instance_not_published")
def _render_mig_not_published(v: Verdict) -> tuple[str, str]:
    f = v.facts
    action = (
        f"Restart the GPU kubelet plugin on {f['node']} after MIG changes (static MIG"
        " instances created later appear only after a restart) and compare the slice with"
        " nvidia-smi mig -lgi."
    )
    return f"Node {f['node']}: " + "; ".join(f["problems"]) + ".", action


def rule_overlapping_devices(ctx: Context) -> Iterator[Verdict]:
    """overlapping_devices_double_allocation: a whole GPU and its MIG instances both allocated,
    or one device that only one claim may hold allocated to several."""
    yield from _shared_exclusive_devices(ctx)
    state = ctx.state
    devices = ctx.each_device()
    # A parent is on its child's node, so a scope (whole nodes) holds both: its own devices do.
    by_uuid = state.devices_by_uuid if ctx.scope is None else devices_by_uuid(devices)
    clashes: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for child in devices:
        if not child.parent_uuid:
            continue
        parent = by_uuid.get((child.driver, child.node_name, child.parent_uuid))
        if parent is None or parent.consumes_counters or child.consumes_counters:
            continue
        if parent.key in ctx.used and child.key in ctx.used:
            clashes[parent.slice_name].append((parent, child))
    for slice_name, pairs in sorted(clashes.items()):
        claims = []
        for parent, child in pairs:
            claims.extend(ctx.used[parent.key] + ctx.used[child.key])
        uniq = sorted({(c.namespace, c.name) for c in claims})
        pairs.sort(key=lambda pair: (pair[0].name, pair[1].name))
        pods = []
        for key in uniq:
            c = state.claims[key]
            uids = {r.uid for r in c.reserved_for}
            pods.extend(p for p in state.pods.values() if p.uid in uids)
        parents = sorted({p.name for p, _ in pairs})
        node = pairs[0][0].node_name
        yield Verdict(
            category="overlapping_devices_double_allocation",
            severity="critical",
            objects=tuple(dict.fromkeys([
                slice_ref(slice_name),
                *(ObjectRef("ResourceClaim", ns, n) for ns, n in uniq),
                *(pod_ref(p) for p in pods),
                *([node_ref(node)] if node else []),
            ])),
            uids=tuple(dict.fromkeys([*(state.claims[k].uid for k in uniq), *(p.uid for p in pods)])),
            since=earliest([state.claims[k].allocation_timestamp for k in uniq]),
            facts={"pairs": [f"{p.name} <- {c.name}" for p, c in pairs][:20], "parents": parents,
                   "node": node, "mig_allocated": len(pairs)},
        )


def _shared_exclusive_devices(ctx: Context) -> Iterator[Verdict]:
    """A device without ``allowMultipleAllocations`` named by the allocations of two or more
    claims (admin-access results are not allocations): the scheduler never does that, so one
    of the allocations is stale or was written by hand, and both workloads use one GPU."""
    state = ctx.state
    # A scope holds every claim allocated a device on its nodes: their allocations are enough
    # (the whole cluster's, ``ctx.used``, costs a pass over every claim). Devices on no node
    # are left to the whole cluster's diagnosis, whose claims all are at hand.
    scoped = ctx.scope is not None
    used = allocated_devices_of(ctx.each_claim()) if scoped else ctx.used
    by_node: dict[str, list[tuple[Any, list[tuple[str, str]]]]] = defaultdict(list)
    for d in ctx.each_device():
        if d.allow_multiple_allocations or (scoped and not d.node_name):
            continue
        # Sorted: the order claims are read in differs between a scoped and a whole diagnosis.
        holders = sorted({(c.namespace, c.name) for c in used.get(d.key, ())})
        if len(holders) > 1:
            by_node[d.node_name or ""].append((d, holders))
    for node, shared in sorted(by_node.items()):
        shared.sort(key=lambda pair: (pair[0].slice_name, pair[0].name))
        uniq = list(dict.fromkeys(k for _, holders in shared for k in holders))
        reserved = {r.uid for k in uniq for r in state.claims[k].reserved_for}
        pods = sorted((p for p in state.pods.values() if p.uid in reserved), key=lambda p: (p.namespace, p.name))
        yield Verdict(
            category="overlapping_devices_double_allocation",
            severity="critical",
            objects=tuple(dict.fromkeys([
                *(slice_ref(d.slice_name) for d, _ in shared),
                *(ObjectRef("ResourceClaim", ns, n) for ns, n in uniq),
                *(pod_ref(p) for p in pods),
                *([node_ref(node)] if node else []),
            ])),
            uids=tuple(dict.fromkeys([*(state.claims[k].uid for k in uniq), *(p.uid for p in pods)])),
            since=earliest([state.claims[k].allocation_timestamp for k in uniq]),
            facts={"shared": [f"{d.name} <- {', '.join(f'{ns}/{n}' for ns, n in holders)}" for d, holders in shared][:20],
                   "devices": len(shared), "node": node or "no node"},
        )


@renders("overlapping_devices_double_allocation")
def _render_overlapping(v: Verdict) -> tuple[str, str]:
    f = v.facts
    if "shared" in f:
        summary = (
            f"{f['devices']} device(s) on {f['node']} that only one claim may hold are allocated to several claims"
            f" at once: {'; '.join(f['shared'])}. The scheduler never allocates such a device twice: one allocation"
            " is stale or was written by hand, and the workloads share one GPU."
        )
        action = (
            f"Find which claim the driver prepared the device for on {f['node']} (kubelet plugin log, nvidia-smi),"
            " then delete the other claim's pods so its allocation is released, or deallocate it."
        )
        return summary, action
    summary = (
        f"{len(f['parents'])} whole GPU(s) ({', '.join(f['parents'])}) on {f['node']} are allocated while"
        f" {f['mig_allocated']} MIG device(s) carved from them are allocated too; the slice has no"
        " shared counters tying them together."
    )
    action = (
        f"Move one of the workloads off {f['node']} and keep whole-GPU claims off MIG-enabled"
        " GPUs (selector or node selector) until the driver models them with shared counters."
    )
    return summary, action


def rule_unprepare_blocked(ctx: Context) -> Iterator[Verdict]:
    """unprepare_blocked_driver_unavailable: a terminating pod waits for a driver that is down."""
    state = ctx.state
    for pod in ctx.each_pod():
        if not pod.deletion_timestamp or not pod.node_name:
            continue
        if not ctx.older_than(pod.deletion_timestamp, ctx.thresholds.deleting_seconds):
            continue
        held = [c for c in state.claims_reserving(pod.uid) if c.namespace == pod.namespace]
        if not held:
            continue
        plugins = state.plugin_pods_on_node(pod.node_name)
        drivers = {r.driver for c in held for r in c.results}
        driver_slices = [s for s in state.slices_on_node(pod.node_name) if s.driver in drivers]
        events = [
            e for e in state.events_for("Pod", pod.namespace, pod.name)
            if e.reason in DRA_KUBELET_REASONS and (NOT_REGISTERED in e.message or e.reason == "FailedUnprepareDynamicResources")
        ]
        down = (plugins and not any(p.ready for p in plugins)) or events or (
            not plugins and not driver_slices and any(state.is_kubelet_plugin(p) for p in state.pods.values())
        )
        if not down:
            continue
        yield Verdict(
            category="unprepare_blocked_driver_unavailable",
            severity="critical",
            objects=tuple(dict.fromkeys([pod_ref(pod), *(claim_ref(c) for c in held),
                                         node_ref(pod.node_name), *(pod_ref(p) for p in plugins)])),
            uids=(pod.uid, *(c.uid for c in held)),
            since=pod.deletion_timestamp,
            facts={"claims": [c.name for c in held], "events": [e.message for e in events][:3],
                   "node": pod.node_name, "terminating_seconds": ctx.age(pod.deletion_timestamp),
                   "plugin_state": _plugin_state(plugins), "plugin_pods": [p.name for p in plugins]},
        )


@renders("unprepare_blocked_driver_unavailable")
def _render_unprepare_blocked(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    age = f["terminating_seconds"]
    why = f["plugin_state"] or ("no ready plugin pod" if f["plugin_pods"] or not f["events"] else f["events"][0][:120])
    summary = (
        f"Pod {main.namespace}/{main.name} has been terminating"
        + (f" for {minutes(age)}" if age is not None else "")
        + f" on {f['node']}, but the DRA driver that must unprepare its claim(s) is unavailable ({why})."
    )
    action = (
        f"Bring the DRA kubelet plugin on {f['node']} back to Ready so the kubelet can"
        " unprepare the devices; do not force-delete the pod or strip the claim finalizer"
        " while the device may still be in use."
    )
    return summary, action


def rule_device_taints(ctx: Context) -> Iterator[Verdict]:
    """device_taint_eviction: evictions by device taints, tolerations lost in the allocation,
    and pending claims whose only free matching devices are tainted."""
    state = ctx.state
    sched = state.components.get("kube-scheduler")
    sched_issues = [
        i for i in issues_for("kube-scheduler", sched.version if sched else None)
        if i.state == "noexecute_toleration_missing_from_allocation"
    ]
    reported: set[tuple[str, str]] = set()
    for c in ctx.each_claim():
        if not c.allocated:
            continue
        for r in c.results:
            dev = state.devices.get(r.device_key)
            if dev is None:
                continue
            taints = [t for t in device_taints(state, dev) if t.effect == "NoExecute"]
            if not taints:
                continue
            req = c.request(r.request)
            req_tols = req.exactly.tolerations if req is not None and req.exactly is not None else ()
            key = f"{r.driver}/{r.pool}/{r.device}"
            untolerated_in_result = blocking_taints(taints, r.tolerations)
            if not untolerated_in_result:
                continue
            pods = state.pods_using_claim(c)
            evictions = [
                e for p in pods for e in state.events_for("Pod", p.namespace, p.name)
                if e.reason in EVICTION_REASONS
            ]
            tolerated_by_request = not blocking_taints(untolerated_in_result, req_tols)
            objs = [slice_ref(dev.slice_name), claim_ref(c), *(pod_ref(p) for p in pods)]
            objs += [ObjectRef("DeviceTaintRule", None, tr.name) for tr in state.taint_rules if rule_selects(tr, dev)]
            evidence: dict[str, Any] = {
                "device": key,
                "taints": [t.to_dict() for t in taints],
                "evictions": [e.message for e in evictions][:3],
            }
            evidence["claim"] = f"{c.namespace}/{c.name}"
            evidence["pool_device"] = f"{r.pool}/{r.device}"
            evidence["eviction_reason"] = evictions[0].reason if evictions else None
            if tolerated_by_request:
                evidence["subcategory"] = "toleration_missing_from_allocation_result"
                if sched and sched_issues:
                    issue = sched_issues[0]
                    objs.append(ObjectRef("Pod", sched.pod_namespace, sched.pod_name))
                    evidence.update({"known_issue": issue.id, "link": issue.link, "fixed_in": issue.fixed_in,
                                     "scheduler_version": ".".join(map(str, sched.version or ()))})
            else:
                evidence["subcategory"] = "not_tolerated"
            reported.add((c.namespace, c.name))
            yield Verdict(
                category="device_taint_eviction",
                severity="critical",
                objects=tuple(dict.fromkeys(objs)),
                uids=(c.uid, *(p.uid for p in pods)),
                since=earliest([e.first for e in evictions] + [t.time_added for t in taints]),
                facts=evidence,
            )
    for claim, pods in ctx.pending_claims():
        if (claim.namespace, claim.name) in reported:
            continue
        since = ctx.pending_since(claim, pods)
        if not ctx.older_than(since, ctx.thresholds.pending_seconds):
            continue
        feas = ctx.feasibility(claim)
        if feas.verdict != "device_tainted":
            continue
        slices = sorted({state.devices[k].slice_name for r in feas.requests for k in r.tainted})
        yield Verdict(
            category="device_taint_eviction",
            severity="warning",
            objects=(claim_ref(claim), *(pod_ref(p) for p in pods), *(slice_ref(s) for s in slices)),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=since,
            facts={"subcategory": "blocked_by_taint", "detail": feas.detail,
                   "claim": f"{claim.namespace}/{claim.name}"},
        )


@renders("device_taint_eviction")
def _render_device_taint_eviction(v: Verdict) -> tuple[str, str]:
    f = v.facts
    if f["subcategory"] == "blocked_by_taint":
        return (
            f"Claim {f['claim']} is blocked by device taints: {f['detail']}.",
            "Remove the taint once the devices are healthy, or add a matching toleration to the"
            " request if the workload may use tainted devices.",
        )
    t = f["taints"][0]
    if f["subcategory"] == "toleration_missing_from_allocation_result":
        note = "; the request tolerates it but the allocation result carries no toleration"
        if f.get("known_issue"):
            note += (f" (kube-scheduler v{f['scheduler_version']}: known bug {f['known_issue']},"
                     f" fixed in {f['fixed_in']})")
        action = (
            "Upgrade kube-scheduler to a release that copies tolerations into the allocation;"
            " until then remove the NoExecute taint (or make it NoSchedule) while the job runs."
        )
    else:
        note = "; the claim does not tolerate it"
        action = (
            "Fix or replace the tainted device, or add a toleration to the claim's request if"
            " the workload may keep running on it."
        )
    summary = (
        f"Device {f['pool_device']} allocated to claim {f['claim']} has NoExecute"
        f" taint {t.get('key')}={t.get('value') or ''}{note}"
        + (f"; pod evicted ({f['eviction_reason']})" if f["eviction_reason"] else "") + "."
    )
    return summary, action


def rule_taint_rule_too_broad(ctx: Context) -> Iterator[Verdict]:
    """device_taint_rule_too_broad: a DeviceTaintRule selecting everything, or a whole driver
    across several nodes."""
    state = ctx.state
    total = len(state.devices)
    for rule in state.taint_rules:
        hit = [d for d in state.devices.values() if rule_selects(rule, d)]
        nodes = {d.node_name or d.pool for d in hit}
        broad = rule.selector_empty or (
            not rule.pool and not rule.device and not rule.selectors and len(nodes) > 1
        )
        if not broad or not hit:
            continue
        keys = {d.key for d in hit}
        claims = [c for c in state.claims.values() if any(r.device_key in keys for r in c.results)]
        pods = [p for c in claims for p in state.pods_using_claim(c)]
        scope = "an empty selector" if rule.selector_empty else f"only driver {rule.driver}"
        effect = rule.taint.effect if rule.taint else None
        yield Verdict(
            category="device_taint_rule_too_broad",
            severity="critical" if effect == "NoExecute" and pods else "warning",
            objects=tuple(dict.fromkeys([ObjectRef("DeviceTaintRule", None, rule.name),
                                         *(claim_ref(c) for c in claims), *(pod_ref(p) for p in pods)])),
            uids=(rule.uid, *(c.uid for c in claims)),
            facts={"devices": len(hit), "nodes": sorted(n for n in nodes if n),
                   "pods": [f"{p.namespace}/{p.name}" for p in pods][:20], "pods_hit": len(pods),
                   "rule": rule.name, "effect": effect, "scope": scope, "devices_total": total,
                   "node_count": len(nodes)},
        )


@renders("device_taint_rule_too_broad")
def _render_taint_rule_too_broad(v: Verdict) -> tuple[str, str]:
    f = v.facts
    summary = (
        f"DeviceTaintRule {f['rule']} ({f['effect']}) uses {f['scope']} and taints"
        f" {f['devices']} of {f['devices_total']} devices on {f['node_count']} node(s), hitting {f['pods_hit']} pod(s)."
    )
    action = (
        f"Narrow DeviceTaintRule {f['rule']} to the pool and device that need it (or delete"
        " it) before it evicts or blocks workloads cluster-wide."
    )
    return summary, action


def known_issue_ids() -> list[str]:
    return [i.id for i in load_known_issues()]
