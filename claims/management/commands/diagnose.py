"""``manage.py diagnose``: run the stuck-claim diagnosis on a snapshot or a stored cluster.

``--snapshot PATH`` evaluates the files in memory (no database): ``inventory.snapshot.load_path``
-> ``ClusterState`` -> ``diagnose``. ``now`` defaults to the newest timestamp in the snapshot, and for a snapshot with no timestamp at
all to the current time (the output says so).
``--cluster NAME`` reads the stored objects of a synced cluster (``claims.store.diagnose_cluster``):
``now`` is the clock for a live cluster, the newest stored timestamp for a snapshot cluster;
thresholds come from the ``DIAGNOSIS_*_SECONDS`` settings. Nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from claims.diagnosis import ClusterState, Thresholds, diagnose
from claims.diagnosis.findings import Finding
from inventory.kube import parse_time
from inventory.normalize import UnknownAPIVersion
from inventory.snapshot import SnapshotError, load_path, newest_timestamp

JSON_KEYS = ("category", "severity", "objects", "summary", "next_action", "runbook")


class DiagnoseInputError(ValueError):
    """Bad input: missing path, malformed YAML, unknown API version, bad --now."""


def _parse_now(text: str | None) -> datetime | None:
    if text is None:
        return None
    dt = parse_time(text)
    if dt is None:
        raise DiagnoseInputError(f"--now {text!r} is not an ISO-8601 time like 2026-11-18T10:42:00Z")
    return dt


def render(findings: list[Finding], fmt: str) -> str:
    """``json``: exactly ``{"findings": [{category, severity, objects, summary, next_action,
    runbook}]}``; ``text``: one block per finding."""
    if fmt == "json":
        doc = {"findings": [{k: f.to_dict()[k] for k in JSON_KEYS} for f in findings]}
        return json.dumps(doc, indent=2)
    if not findings:
        return "No findings: nothing stuck."
    lines = []
    for f in findings:
        main = f.objects[0] if f.objects else None
        where = f"{main.kind} {main.namespace + '/' if main and main.namespace else ''}{main.name}" if main else ""
        lines.append(f"[{f.severity.upper()}] {f.category}: {where}")
        lines.append(f"  {f.summary}")
        lines.append(f"  next: {f.next_action}")
        lines.append(f"  runbook: claims/runbooks/{f.runbook}.md")
    return "\n".join(lines)


def diagnose_objects(objects: list[dict[str, Any]], prom: dict[str, str], now: datetime,
                     thresholds: Thresholds | None = None) -> list[Finding]:
    try:
        state = ClusterState.from_objects(objects, prom)
    except UnknownAPIVersion as exc:
        raise DiagnoseInputError(str(exc)) from exc
    return diagnose(state, now, thresholds or Thresholds())


def run_diagnose(path: str | Path, now: str | datetime | None = None, fmt: str = "text",
                 thresholds: Thresholds | None = None, failures: list[str] | None = None,
                 notes: list[str] | None = None, clock: Callable[[], datetime] | None = None) -> str:
    """The command's core without Django: load ``path``, diagnose, render. ``failures``, when
    given, receives one line per diagnosis rule that failed (its findings may be missing).

    ``now``: given, else the newest timestamp in the snapshot, else (a snapshot without any
    timestamp) the current time from ``clock`` (default: the system clock, UTC). That last
    choice is said in the output: the text starts with a line naming the time; for JSON,
    whose document is exactly the findings, the line goes to ``notes`` (the command prints
    it on stderr).

    Raises ``DiagnoseInputError`` on a missing path, a malformed document, an unknown DRA API
    version, or a bad ``now``.
    """
    if fmt not in ("text", "json"):
        raise DiagnoseInputError(f"unknown format {fmt!r} (text or json)")
    try:
        load = load_path(path)
    except SnapshotError as exc:
        raise DiagnoseInputError(str(exc)) from exc
    if load.errors:
        raise DiagnoseInputError(f"cannot read snapshot: {load.errors[0]}")
    when = now if isinstance(now, datetime) else _parse_now(now)
    if when is None:
        when = parse_time(newest_timestamp(load.objects))
    note = None
    if when is None:
        when = (clock or _utc_now)()
        note = (f"Diagnosed at the current time, {when.strftime('%Y-%m-%dT%H:%M:%SZ')}: the snapshot has no"
                " timestamp (pass --now to choose the moment).")
    findings = diagnose_objects(load.objects, load.prom, when, thresholds)
    if failures is not None:
        failures.extend(f.message() for f in getattr(findings, "failures", ()))
    out = render(findings, fmt)
    if note is not None:
        if notes is not None:
            notes.append(note)
        if fmt == "text":
            out = note + "\n" + out
    return out


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Command(BaseCommand):
    # No system checks: they import the URLconf and with it every view (about 350 modules, a
    # third of a second) that a command reading a snapshot never uses; `manage.py check` and
    # `migrate` still run them.
    requires_system_checks: list[str] = []

    help = "Diagnose stuck ResourceClaims in a snapshot (files) or a stored cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        src = parser.add_mutually_exclusive_group(required=True)
        src.add_argument("--snapshot", help="file or folder of kubectl -o yaml|json output and *.prom scrapes")
        src.add_argument("--cluster", help="name of a synced cluster")
        parser.add_argument("--now", help="ISO-8601 time to evaluate at (default: newest timestamp in the snapshot,"
                                          " else the current time)")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **opts: Any) -> None:
        failed: list[str] = []
        try:
            if opts.get("snapshot"):
                from claims.store import thresholds  # the DIAGNOSIS_*_SECONDS settings

                notes: list[str] = []
                out = run_diagnose(opts["snapshot"], opts.get("now"), opts["format"], thresholds(), failed, notes)
                if opts["format"] == "json":
                    for line in notes:  # the JSON document is exactly the findings
                        self.stderr.write(f"note: {line}")
            else:
                from claims.store import diagnose_cluster  # lazy: needs the database
                from inventory.exports import get_cluster
                from inventory.sync import one_sync

                try:
                    cluster = get_cluster(opts["cluster"])
                except LookupError as exc:
                    raise DiagnoseInputError(str(exc)) from exc
                prom = self._scrapes(cluster)
                with one_sync():  # the process ends after it: no state kept for a next diagnosis
                    findings, _ = diagnose_cluster(cluster, prom or None, now=_parse_now(opts.get("now")))
                failed.extend(f.message() for f in getattr(findings, "failures", ()))
                out = render(findings, opts["format"])
        except DiagnoseInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(out)
        for line in failed:  # the findings above are those of the rules that finished
            self.stderr.write(f"warning: diagnosis rule failed, its findings may be missing: {line}")

    def _scrapes(self, cluster: Any) -> dict[str, str]:
        """A snapshot cluster's DCGM scrapes, read again from its files as its sync read them
        (they are not stored); a live cluster's telemetry comes from Prometheus, not here."""
        from inventory.models import SourceKind
        from inventory.snapshot import scrapes_at

        if cluster.source_kind != SourceKind.SNAPSHOT or not cluster.snapshot_path:
            return {}
        scrapes, problems = scrapes_at(cluster.snapshot_path)
        for line in problems:
            self.stderr.write(f"note: DCGM scrapes of {cluster.name}: {line}")
        return scrapes
