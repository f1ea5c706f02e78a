"""Start-up cost of a snapshot command, as a shell user pays it.

``python -m devtools.startup [--runs 9] [--project DIR ...] [--snapshot PATH]`` runs
``python manage.py sync_cluster --snapshot PATH --cluster startup-<i>`` (a new cluster each
time, so every run is a full sync) in each project folder, interleaved (A, B, A, B...), and
prints per folder the median wall time from process start to exit and the median CPU time
(user + system, from ``RUSAGE_CHILDREN``: what contention on a shared machine disturbs least), then the heaviest imports of
one ``python -X importtime`` run of the same command (cumulative microseconds of top-level
imports) and whether the kubernetes client, the CEL library, Celery and the views were imported.

Each folder uses its own SQLite file (``DATABASE_URL`` set here, migrated first), so the runs
never touch the configured database. Default snapshot: ``demo/vks-a100`` (2 vGPU slices, 1
claim, 1 DCGM scrape; see ``demo/SOURCES.md``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WATCH = ("kubernetes", "celpy", "celery", "inventory.views")


def _env(project: Path, db: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "PYTHONPATH": str(project)}


def _run(project: Path, db: Path, args: list[str], *, importtime: bool = False) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds user + system, stderr) of one ``manage.py`` process."""
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), "manage.py", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # Our interpreter, our arguments: nothing untrusted.
    out = subprocess.run(cmd, cwd=project, env=_env(project, db), capture_output=True, text=True, check=False)  # noqa: S603
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise SystemExit(f"{project}: manage.py {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stderr


def _top_imports(stderr: str, n: int = 12) -> list[tuple[int, str]]:
    """(cumulative us, module) of the imports made at the top level, heaviest first."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line[len("import time:"):].split("|", 2)
        # One space before a top-level name; nested imports are indented further.
        if name.startswith("  "):
            continue
        rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:n]


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--project", action="append", type=Path, help="project folder (repeatable; default: this one)")
    parser.add_argument("--snapshot", default="demo/vks-a100")
    opts = parser.parse_args(argv)
    projects = [p.resolve() for p in opts.project or [Path(__file__).resolve().parent.parent]]
    tmp = Path(tempfile.mkdtemp(prefix="claimscope-startup-"))
    dbs = {p: tmp / f"db{i}.sqlite3" for i, p in enumerate(projects)}
    for p, db in dbs.items():
        _run(p, db, ["migrate", "--noinput", "-v0"])
    walls: dict[Path, list[float]] = {p: [] for p in projects}
    cpus: dict[Path, list[float]] = {p: [] for p in projects}
    for i in range(opts.runs):
        for p in projects:
            snap = str(Path(opts.snapshot) if Path(opts.snapshot).is_absolute() else p / opts.snapshot)
            wall, cpu, _ = _run(p, dbs[p], ["sync_cluster", "--snapshot", snap, "--cluster", f"startup-{i}"])
            walls[p].append(wall)
            cpus[p].append(cpu)
    for p in projects:
        w, c = walls[p], cpus[p]
        # CPU time is what contention on a shared machine disturbs least.
        print(f"{p}: sync_cluster --snapshot {opts.snapshot}: wall median {statistics.median(w):.3f} s "
              f"(min {min(w):.3f}, max {max(w):.3f}), CPU median {statistics.median(c):.3f} s "
              f"(min {min(c):.3f}); {len(w)} runs interleaved")
        snap = str(p / opts.snapshot)
        _, _, err = _run(p, dbs[p], ["sync_cluster", "--snapshot", snap, "--cluster", "startup-importtime"], importtime=True)
        seen = _imported(err)
        print("  imported: " + ", ".join(f"{m}={'yes' if m in seen else 'no'}" for m in WATCH))
        for us, name in _top_imports(err):
            print(f"  {us / 1000:8.1f} ms  {name}")


if __name__ == "__main__":
    main()
