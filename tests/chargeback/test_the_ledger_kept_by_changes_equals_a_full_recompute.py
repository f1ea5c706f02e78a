"""The ledger the sync hook keeps from each sync's change set (only the claims it names, and
those on its changed slices, open or close rows; open rows are held until the cluster's one
sighting) equals the ledger a full recompute keeps after every sync, and equals the ledger of
the rule it replaced (every open row's ``last_seen`` moved on every sync): the rows, their
times, ``as_of`` and the chargeback report's totals.

The syncs: claims deallocated, deleted, newly allocated, re-allocated to devices of another
node, a node's ResourceSlice deleted and re-created (with a new uid), and another slice
replaced in a single sync."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from chargeback_helpers import CASES

import claims.chargeback_data as cd
from claims import chargeback as cb
from claims.ledger.models import ChargebackHolding, LedgerSighting, seen_until
from inventory.kube import parse_time
from inventory.models import Cluster
from inventory.snapshot import load_path, newest_timestamp
from tests.conftest import write_list

CASE = "healthy-cluster-h100"


def _ts(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _bump(obj: dict) -> dict:
    """The object as the API server returns it after a write: ``resourceVersion`` moved on."""
    obj["metadata"]["resourceVersion"] = str(int(obj["metadata"].get("resourceVersion") or 0) + 1000)
    return obj


def _of(objects, kind, name_prefix):
    return next(o for o in objects if o.get("kind") == kind and o["metadata"]["name"].startswith(name_prefix))


def _pending_claim(like: dict, name: str, uid: str, created) -> dict:
    """A new claim of ``like``'s spec, created at ``created``, not allocated yet (it moves the
    snapshot's clock, as every real change does)."""
    c = copy.deepcopy(like)
    c["metadata"] = {**c["metadata"], "name": name, "uid": uid, "creationTimestamp": _ts(created), "resourceVersion": "1"}
    c["metadata"].pop("ownerReferences", None)
    c.pop("status", None)
    return c


def _allocate(claim: dict, results: list[tuple[str, str]], at, template: dict) -> dict:
    """``claim`` allocated at ``at`` to ``results`` (pool, device) of ``template``'s driver."""
    claim = _bump(copy.deepcopy(claim))
    alloc = copy.deepcopy(template["status"]["allocation"])
    proto = alloc["devices"]["results"][0]
    alloc["devices"]["results"] = [{**proto, "pool": pool, "device": dev} for pool, dev in results]
    alloc["allocationTimestamp"] = _ts(at)
    claim["status"] = {"allocation": alloc}
    return claim


def _steps():
    """(label, objects) of each sync, in order, each later in time than the one before."""
    base = load_path(CASES / CASE / "snapshot").objects
    t0 = parse_time(newest_timestamp(base))
    at = [t0 + timedelta(hours=h) for h in range(8)]
    objs = [copy.deepcopy(o) for o in base]
    out = [("first sync", copy.deepcopy(objs))]

    def replace(old: dict, new: dict | None) -> None:
        i = next(i for i, o in enumerate(objs) if o is old)
        if new is None:
            objs.pop(i)
        else:
            objs[i] = new

    llm = _of(objs, "ResourceClaim", "llm-serve")
    notebook = _of(objs, "ResourceClaim", "notebook-h100")
    trainer = _of(objs, "ResourceClaim", "trainer-llama")
    template = copy.deepcopy(trainer)

    # The notebook's claim deallocated; a new claim waits.
    replace(notebook, _bump({k: v for k, v in copy.deepcopy(notebook).items() if k != "status"}))
    waiting = _pending_claim(notebook, "notebook-h100-b", "9470a000-0000-4000-8000-0000000600b1", at[1])
    objs.append(waiting)
    out.append(("deallocated", copy.deepcopy(objs)))

    # The waiting claim allocated to the device the notebook gave back; the serving claim deleted.
    replace(waiting, _allocate(waiting, [("gpu-node-1", "gpu-5")], at[2], template))
    replace(llm, None)
    out.append(("allocated and deleted", copy.deepcopy(objs)))

    # The trainer re-allocated to two devices of the other node.
    trainer = _of(objs, "ResourceClaim", "trainer-llama")
    replace(trainer, _allocate(trainer, [("gpu-node-1", "gpu-1"), ("gpu-node-1", "gpu-2")], at[3], template))
    out.append(("re-allocated", copy.deepcopy(objs)))

    # gpu-node-1's slice deleted (the driver restarting): its devices' claims hold nothing
    # counted; a new claim moves the clock.
    slice1 = _of(objs, "ResourceSlice", "gpu-node-1-")
    kept_slice1 = copy.deepcopy(slice1)
    replace(slice1, None)
    objs.append(_pending_claim(notebook, "waiting-c", "9470a000-0000-4000-8000-0000000600c1", at[4]))
    out.append(("slice deleted", copy.deepcopy(objs)))

    # The slice published again: a new object (new uid and name), the same pool and devices.
    again = copy.deepcopy(kept_slice1)
    again["metadata"] = {**again["metadata"], "name": again["metadata"]["name"] + "-b", "resourceVersion": "2000001",
                         "uid": "3441669c-0000-4000-8000-0000000600d1", "creationTimestamp": _ts(at[5])}  # fmt: skip
    again["spec"]["pool"]["generation"] = int(again["spec"]["pool"].get("generation") or 0) + 1
    objs.append(again)
    out.append(("slice re-created", copy.deepcopy(objs)))

    # gpu-node-2's slice replaced in one sync (old uid gone, new uid), the trainer moved back to it.
    slice2 = _of(objs, "ResourceSlice", "gpu-node-2-")
    new2 = copy.deepcopy(slice2)
    new2["metadata"] = {**new2["metadata"], "name": new2["metadata"]["name"] + "-b", "resourceVersion": "2000002",
                        "uid": "b171b90a-0000-4000-8000-0000000600e1", "creationTimestamp": _ts(at[6])}  # fmt: skip
    new2["spec"]["pool"]["generation"] = int(new2["spec"]["pool"].get("generation") or 0) + 1  # the driver's new publication
    replace(slice2, new2)
    trainer = _of(objs, "ResourceClaim", "trainer-llama")
    replace(trainer, _allocate(trainer, [("gpu-node-2", "gpu-3"), ("gpu-node-2", "gpu-4")], at[6], template))
    out.append(("slice replaced, trainer back", copy.deepcopy(objs)))

    # The same objects again: nothing changed.
    out.append(("no change", copy.deepcopy(objs)))
    return out


class OldLedger:
    """The rule the hook had before: each sync reads every claim's holdings, closes the open
    rows no claim holds at their ``last_seen``, moves every open row's ``last_seen`` to the
    sync's time and opens a row for each new holding."""

    def __init__(self):
        self.rows: list[dict] = []

    def sync(self, cluster, now):
        held, _, _ = cd.current_holdings(cluster)
        current = {(h.claim_uid, *h.device): h for h in held}
        open_rows = {(r["claim_uid"], *r["device"]): r for r in self.rows if r["end"] is None}
        for k, r in open_rows.items():
            if k not in current:
                r["end"] = r["last_seen"]
            else:
                r["last_seen"] = now
        for k, h in current.items():
            if k not in open_rows:
                self.rows.append({"claim_uid": h.claim_uid, "device": h.device, "namespace": h.namespace, "claim": h.claim,
                                  "product": h.product, "kind": h.kind, "share": h.share, "start": h.start or now,
                                  "last_seen": now, "end": None})  # fmt: skip

    def table(self):
        return sorted((r["claim_uid"], *r["device"], r["namespace"], r["claim"], r["product"], r["kind"], r["share"],
                       r["start"], r["last_seen"], r["end"]) for r in self.rows)  # fmt: skip

    def as_of(self):
        return max(r["last_seen"] for r in self.rows)

    def report(self, cluster, since, until):
        """The report totals the old ``cluster_holdings`` gave from these rows."""
        held, _, _ = cd.current_holdings(cluster)
        current = {(h.claim_uid, *h.device): h for h in held}
        first = {(r["claim_uid"], *r["device"]): r["start"] for r in self.rows if r["end"] is None}
        out = [cb.Holding(cluster=cluster.name, namespace=r["namespace"], claim=r["claim"], claim_uid=r["claim_uid"],
                          device=r["device"], product=r["product"], kind=r["kind"], share=r["share"], start=r["start"],
                          end=r["end"] or r["last_seen"])
               for r in self.rows if not (r["end"] is None and (r["claim_uid"], *r["device"]) in current)]  # fmt: skip
        end = self.as_of()
        out += [cb.Holding(**{**h.__dict__, "start": h.start or first.get(k), "end": end}) for k, h in current.items()]
        return _totals(cb.summarize(out, since, until))


def _table(cluster):
    sighting = cd.ledger_sighting(cluster)
    return sorted(
        (uid, driver, pool, dev, ns, name, product, kind, share, start, seen_until(end, last_seen, sighting), end)
        for uid, driver, pool, dev, ns, name, product, kind, share, start, last_seen, end in
        ChargebackHolding.objects.filter(cluster=cluster).values_list(
            "claim_uid", "driver", "pool", "device_name", "namespace", "claim_name", "product", "kind", "share",
            "start", "last_seen", "end")
    )  # fmt: skip


def _totals(report):
    return sorted((r.namespace, r.product, round(r.gpu_hours, 6), len(r.claims), r.devices) for r in report.rows)


@pytest.mark.django_db
def test_the_ledger_kept_from_changes_equals_a_full_recompute_and_the_old_rule_after_every_sync(sync_snapshot, tmp_path, monkeypatch):
    looked_at: list[tuple[str, object]] = []
    record, claims_for = cd.record_holdings, cd.ledger_claims_for

    def spy_record(cluster, now, claims=None):
        looked_at.append((cluster.name, None if claims is None else set(claims)))
        return record(cluster, now, claims)

    # "full" recomputes every claim on every sync; "changes" is kept as the hook keeps it.
    monkeypatch.setattr(cd, "record_holdings", spy_record)
    monkeypatch.setattr(cd, "ledger_claims_for", lambda c, read, model=None: None if c.name == "full" else claims_for(c, read, model))

    old = OldLedger()
    steps = _steps()
    for i, (label, objects) in enumerate(steps):
        path = write_list(tmp_path / f"step{i}.json", objects)
        before = len(looked_at)
        for name in ("changes", "full"):
            run = sync_snapshot(path, name)
            assert run.status == "ok", (label, run.errors)
        changes, full = Cluster.objects.get(name="changes"), Cluster.objects.get(name="full")
        now = parse_time(newest_timestamp(objects))
        if label == "no change":
            assert len(looked_at) == before  # nothing the ledger reads changed: the hook did not run
        else:
            old.sync(full, now)
            (n1, claims1), (n2, claims2) = looked_at[before:]
            assert (n1, n2, claims2) == ("changes", "full", None)
            # The first sync recomputes; each later one looks only at the claims it may have moved.
            assert (claims1 is None) == (i == 0), label
            if label == "deallocated":  # the claim deallocated and the new one, not the others
                assert claims1 == {"9470a000-0000-4000-8000-000000060003", "9470a000-0000-4000-8000-0000000600b1"}
            assert LedgerSighting.objects.get(cluster=changes).at == now

        assert _table(changes) == _table(full), label
        assert _table(full) == old.table(), label
        assert cd.as_of(changes) == cd.as_of(full) == old.as_of(), label
        if ChargebackHolding.objects.filter(cluster=changes, end__isnull=True).exists():
            assert cd.as_of(changes) == now, label  # held now: the snapshot's time

        until = cd.as_of(full)
        for since in (until - timedelta(days=7), until - timedelta(hours=3)):
            report_changes, _ = cd.build_report([changes], since, until)
            report_full, _ = cd.build_report([full], since, until)
            assert _totals(report_changes) == _totals(report_full) == old.report(full, since, until), label

    # The sequence did release, move and re-open holdings (a test of nothing would pass too).
    rows = ChargebackHolding.objects.filter(cluster__name="changes")
    assert rows.filter(end__isnull=False).count() >= 5
    assert rows.filter(end__isnull=True, pool="gpu-node-1").exists() and rows.filter(end__isnull=True, pool="gpu-node-2").exists()
