"""The core of ``manage.py plan_migration``: load objects, plan, write files, summarise.

Pure of Django so it can be tested directly; the management command only parses arguments
and turns ``PlanInputError`` into ``CommandError`` (one line on stderr, exit status 1, no
traceback). Input is checked as ``sync_cluster`` and ``diagnose`` check it: a missing or
empty path, a file that does not parse, a document that is not a Kubernetes object, an
unknown ``resource.k8s.io`` version, a version argument that is not a version, an output
folder that cannot be written: each is one clear error before or instead of a plan.

Files written to the output folder: ``<namespace>.yaml`` per namespace (ResourceClaimTemplates
then patched workloads), ``stopgap/<namespace>.yaml`` and ``stopgap/_cluster.yaml`` (the
DRAExtendedResource stop-gap), ``summary.json`` and ``summary.txt``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inventory import records
from inventory.kube import parse_version
from inventory.normalize import UnknownAPIVersion, normalize
from inventory.snapshot import SnapshotError, load_path
from migration.generate import CLUSTER_SCOPED
from migration.planner import MigrationPlan, plan_migration

ClusterLoader = Callable[[str], tuple[list[dict[str, Any]], dict[str, str]]]
_SAFE_FILE = re.compile(r"^[a-z0-9_][a-z0-9.-]{0,252}$")


class PlanInputError(ValueError):
    """Bad input to the command (missing or empty snapshot, unknown cluster, bad version)."""


def summarize(plan: MigrationPlan) -> dict[str, Any]:
    """A JSON-ready summary: counts, workloads, templates, findings, steps, errors."""
    return {
        "server_version": plan.server_version,
        "target_version": plan.target_version,
        "schema_version": plan.schema_version,
        "workloads_found": len(plan.workloads),
        "templates_generated": len(plan.templates()),
        "blockers": len(plan.blockers),
        "warnings": len(plan.warnings),
        "workloads": [
            {
                "workload": str(w.ref),
                "gpus": w.total_gpus,
                "requests": [
                    {"container": r.container, "init": r.init, "resource": r.resource, "count": r.count}
                    for r in w.requests
                ],
                "uses_claims": w.uses_dra,
            }
            for w in plan.workloads
        ],
        "templates": [f"{g.namespace}/{g.ref.name}" for g in plan.templates()],
        "gpu_models": [
            {"product": m.product, "memory_bytes": m.memory_bytes, "nodes": list(m.nodes)} for m in plan.gpu_models
        ],
        "selector_options": [{"models": list(s.models), "expression": s.expression} for s in plan.selector_options],
        "findings": [
            {"code": f.code, "severity": f.severity, "reason": f.reason, "evidence": [str(e) for e in f.evidence],
             "detail": f.detail}
            for f in plan.findings
        ],
        "steps": [
            {"number": s.number, "id": s.id, "status": s.status, "detail": s.detail,
             "progress": list(s.progress) if s.progress else None}
            for s in plan.steps
        ],
        "errors": list(plan.errors),
    }


def summary_text(summary: dict[str, Any]) -> str:
    lines = [
        f"Workloads found: {summary['workloads_found']}",
        f"Templates generated: {summary['templates_generated']} (validated against Kubernetes {summary['schema_version']})",
        f"Blockers: {summary['blockers']}  Warnings: {summary['warnings']}",
    ]
    for f in summary["findings"]:
        if f["severity"] != "info":
            lines.append(f"  [{f['severity']}] {f['code']}: {f['reason']}")
    lines.append("Steps:")
    for s in summary["steps"]:
        lines.append(f"  {s['number']}. {s['id']}: {s['status']} - {s['detail']}")
    for e in summary["errors"]:
        lines.append(f"Error: {e}")
    return "\n".join(lines) + "\n"


def _file_name(key: str) -> str:
    # Namespace names are DNS labels; anything else from the cluster is refused, not written.
    if not _SAFE_FILE.match(key):
        raise PlanInputError(f"refusing to write a bundle for namespace {key!r}: not a valid name")
    return f"{key}.yaml"


def _output_folder(out_dir: Path) -> None:
    """Create ``out_dir`` (and ``stopgap/``) or say why it cannot be written."""
    if out_dir.exists() and not out_dir.is_dir():
        raise PlanInputError(f"--out {out_dir} is a file, not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "stopgap").mkdir(exist_ok=True)
    except OSError as exc:
        raise PlanInputError(f"cannot create output folder {out_dir}: {exc.strerror or exc}") from exc


def write_plan(plan: MigrationPlan, out_dir: Path) -> list[Path]:
    """Write bundles and summaries under ``out_dir`` (created if missing); returns the paths.
    Raises ``PlanInputError`` when the folder or a file in it cannot be written."""
    _output_folder(out_dir)
    try:
        return _write_files(plan, out_dir)
    except OSError as exc:
        raise PlanInputError(f"cannot write the plan into {out_dir}: {exc.strerror or exc}") from exc


def _write_files(plan: MigrationPlan, out_dir: Path) -> list[Path]:
    written = []
    for ns, text in plan.bundles.items():
        p = out_dir / _file_name(ns)
        p.write_text(text, encoding="utf-8")
        written.append(p)
    for ns, text in plan.stopgap_bundles.items():
        p = out_dir / "stopgap" / _file_name(ns if ns != CLUSTER_SCOPED else CLUSTER_SCOPED)
        p.write_text(text, encoding="utf-8")
        written.append(p)
    summary = summarize(plan)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out_dir / "summary.txt").write_text(summary_text(summary), encoding="utf-8")
    written += [out_dir / "summary.json", out_dir / "summary.txt"]
    return written


def run_plan_migration(
    out: str | Path,
    snapshot: str | Path | None = None,
    cluster: str | None = None,
    server_version: str | None = None,
    target_version: str = "1.36",
    cluster_loader: ClusterLoader | None = None,
) -> tuple[MigrationPlan, str]:
    """Load objects from ``snapshot`` (file or folder) or ``cluster`` (by name, through
    ``inventory.exports.cluster_objects`` unless ``cluster_loader`` is given), plan, write.

    The server version is ``server_version`` or, for a cluster, its metadata's
    ``server_version``/``serverVersion``/``gitVersion``. Returns (plan, summary text).
    Raises ``PlanInputError`` with one message on bad input.
    """
    if (snapshot is None) == (cluster is None):
        raise PlanInputError("give exactly one of --snapshot PATH or --cluster NAME")
    if server_version is not None and parse_version(server_version) is None:
        raise PlanInputError(f"--server-version {server_version!r} is not a Kubernetes version like 1.33.5")
    if parse_version(target_version) is None:
        raise PlanInputError(f"--target-version {target_version!r} is not a Kubernetes version like 1.36")
    if snapshot is not None:
        objects = _snapshot_objects(snapshot)
    else:
        if cluster_loader is None:
            from inventory.exports import cluster_objects  # the lead's module; only needed here

            cluster_loader = cluster_objects
        try:
            objects, meta = cluster_loader(str(cluster))
        except LookupError as exc:
            raise PlanInputError(f"unknown cluster {cluster!r}: {exc}") from exc
        server_version = server_version or next(
            (meta[k] for k in ("server_version", "serverVersion", "gitVersion") if meta.get(k)), None
        )
    out_dir = Path(out)
    _output_folder(out_dir)  # before planning: a plan that cannot be written is not made
    try:
        plan = plan_migration(objects, server_version, target_version)
    except ValueError as exc:
        raise PlanInputError(str(exc)) from exc
    write_plan(plan, out_dir)
    return plan, summary_text(summarize(plan))


def _snapshot_objects(snapshot: str | Path) -> list[dict[str, Any]]:
    """The objects of a snapshot path, or ``PlanInputError`` naming the first problem (a plan
    made from part of a snapshot would look complete)."""
    try:
        load = load_path(snapshot)
    except SnapshotError as exc:
        raise PlanInputError(str(exc)) from exc
    if load.errors:
        more = f" (and {len(load.errors) - 1} more problem(s))" if len(load.errors) > 1 else ""
        raise PlanInputError(f"cannot read snapshot: {load.errors[0]}{more}")
    if not load.objects:
        raise PlanInputError(f"no Kubernetes objects in {snapshot}")
    for obj in load.objects:
        try:
            normalize(obj)
        except UnknownAPIVersion as exc:
            rec = records.parse_identity(obj)
            who = "/".join(x for x in (rec.namespace, rec.name) if x)
            raise PlanInputError(f"cannot read snapshot: {exc}" + (f" ({who})" if who else "")) from exc
    return load.objects
