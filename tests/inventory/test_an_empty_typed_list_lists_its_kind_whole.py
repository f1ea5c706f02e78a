"""A typed List with no items (``kubectl get resourceclaims -A -o json`` once the last claim
is gone: ``ResourceClaimList`` with ``items: []``) says the kind was listed whole: the stored
claims it no longer holds are deleted, as a list holding some would delete the rest. An
untyped ``List`` names no kind and deletes nothing. A file that vanishes between the listing
of a snapshot folder and its reading is a problem of that file: the run is partial and keeps
what the last good sync stored."""

from __future__ import annotations

import json

import pytest

from tests.conftest import VKS_CLAIM


def _claims(cluster):
    from inventory.models import ResourceClaim

    return ResourceClaim.objects.filter(cluster=cluster).count()


@pytest.fixture
def stored(tmp_path, sync_snapshot):
    from inventory.models import Cluster, SyncStatus

    run = sync_snapshot(VKS_CLAIM, "typed")
    assert run.status == SyncStatus.OK, run.errors
    cluster = Cluster.objects.get(name="typed")
    assert _claims(cluster) >= 1
    return cluster


@pytest.mark.parametrize("form", ["json", "yaml", "json-null", "yaml-null", "json-no-items"])
def test_an_empty_resource_claim_list_deletes_the_stored_claims(tmp_path, stored, sync_snapshot, form):
    """``items: null`` or no ``items`` at all: Kubernetes reads the List as empty too."""
    from inventory.models import SyncStatus

    path = tmp_path / f"claims.{form.split('-')[0]}"
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimList", "metadata": {}, "items": []}
    if form.endswith("-null"):
        doc["items"] = None
    elif form.endswith("-no-items"):
        del doc["items"]
    if form.startswith("json"):
        path.write_text(json.dumps(doc))
    else:
        path.write_text(f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimList\nmetadata: {{}}\nitems: {'null' if doc['items'] is None else '[]'}\n")
    run = sync_snapshot(path, "typed")
    assert run.status == SyncStatus.OK, run.errors
    assert _claims(stored) == 0
    assert run.counts["ResourceClaim"]["deleted"] >= 1


@pytest.mark.parametrize("kind", ["List", "ConfigMapList"])
def test_an_empty_list_naming_no_kept_kind_deletes_nothing(tmp_path, stored, sync_snapshot, kind):
    """An untyped List names no kind; a List of a kind not kept says nothing of the claims."""
    path = tmp_path / "nothing.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": kind, "items": []}))
    before = _claims(stored)
    sync_snapshot(path, "typed")
    assert _claims(stored) == before


def test_a_file_gone_between_listing_and_reading_is_a_problem_of_that_file(tmp_path, stored, sync_snapshot, monkeypatch):
    from inventory import snapshot, sources
    from inventory.models import SyncStatus

    folder = tmp_path / "snap"
    folder.mkdir()
    (folder / "empty-claims.json").write_text(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimList", "items": []}))
    ghost = folder / "ghost.yaml"
    listing = snapshot.snapshot_files

    def listed_then_gone(path, problems=None):
        return [*listing(path, problems), ghost]  # listed, then removed before it was read

    monkeypatch.setattr(snapshot, "snapshot_files", listed_then_gone)
    monkeypatch.setattr(sources, "snapshot_files", listed_then_gone)
    before = _claims(stored)
    run = sync_snapshot(folder, "typed")
    assert run.status == SyncStatus.PARTIAL
    assert any(e.startswith("ghost.yaml: cannot read") for e in run.errors), run.errors
    assert _claims(stored) == before  # a partial read deletes nothing


KUBECTL_EMPTY_YAML = 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n'


@pytest.mark.parametrize("name", ["resourceclaims.yaml", "resourceclaims.resource.k8s.io.yaml", "ResourceClaim.json"])
def test_kubectls_empty_untyped_list_in_a_file_named_for_the_kind_deletes_the_stored_claims(tmp_path, stored, sync_snapshot, name):
    """``kubectl get resourceclaims -A -o yaml > resourceclaims.yaml`` once the last claim is
    gone prints an untyped, empty List: the file's name says which kind was listed whole."""
    from inventory.models import SyncStatus

    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps({"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}))
    else:
        path.write_text(KUBECTL_EMPTY_YAML)
    run = sync_snapshot(path, "typed")
    assert run.status == SyncStatus.OK, run.errors
    assert _claims(stored) == 0
    assert run.counts["ResourceClaim"]["deleted"] >= 1


@pytest.mark.parametrize("name", ["claims-backup.yaml", "snapshot.yaml", "resourceclaimtemplates.yaml",
                                  "resourceclaims.old.yaml", "resourceclaims.2026-12-01.json"])
def test_an_empty_untyped_list_in_a_file_named_otherwise_leaves_the_claims(tmp_path, stored, sync_snapshot, name):
    path = tmp_path / name
    path.write_text(KUBECTL_EMPTY_YAML if name.endswith(".yaml") else json.dumps({"apiVersion": "v1", "items": [], "kind": "List"}))
    before = _claims(stored)
    sync_snapshot(path, "typed")
    assert _claims(stored) == before


def test_an_empty_untyped_list_beside_other_documents_leaves_the_claims(tmp_path, stored, sync_snapshot):
    """Only a file that holds nothing but kubectl's empty List says its kind was listed whole."""
    path = tmp_path / "resourceclaims.yaml"
    path.write_text(KUBECTL_EMPTY_YAML + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default, uid: u-c}\n")
    before = _claims(stored)
    sync_snapshot(path, "typed")
    assert _claims(stored) == before
