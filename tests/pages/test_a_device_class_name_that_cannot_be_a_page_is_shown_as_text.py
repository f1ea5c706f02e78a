"""A claim or a ResourceClaimTemplate may name any DeviceClass, including what no API server
accepts as one (``nvidia.com/gpu``, the device plugin's resource name, a common mistake when
moving to DRA): its page shows the name as text, never fails; real class names stay links."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from inventory.models import ResourceClaim
from inventory.snapshot import load_path
from tests.conftest import CASES, write_list

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"
ODD = "nvidia.com/gpu"


def _rename_classes(v, to):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "deviceClassName" and isinstance(x, str):
                v[k] = to
            else:
                _rename_classes(x, to)
    elif isinstance(v, list):
        for x in v:
            _rename_classes(x, to)


@pytest.fixture
def odd(tmp_path, sync_snapshot):
    objs = load_path(MIG_CASE).objects
    named = [o for o in objs if o["kind"] in ("ResourceClaim", "ResourceClaimTemplate")]
    assert named
    for o in named:
        _rename_classes(o["spec"], ODD)
    sync_snapshot(write_list(tmp_path / "odd.json", objs), name="odd")
    return named


def test_claim_and_template_pages_show_an_impossible_class_name_as_text(client_in, odd):
    pages = [c.get_absolute_url() for c in ResourceClaim.objects.filter(cluster__name="odd")]
    pages += [reverse("inventory:claimtemplate", args=["odd", o["metadata"].get("namespace", "default"), o["metadata"]["name"]])
              for o in odd if o["kind"] == "ResourceClaimTemplate"]
    assert len(pages) >= 2
    for url in pages:
        resp = client_in.get(url)
        assert resp.status_code == 200, url
        body = resp.content.decode()
        assert escape(ODD) in body, url
        assert "/deviceclasses/nvidia.com" not in body


@pytest.mark.parametrize("name", ["..", ".", "a b", "gpu.nvidia.com\n", "GPU.nvidia.com", "x" * 300, "../../admin"])
def test_a_name_no_device_class_can_have_is_never_a_link(name):
    """``..`` in a link would lead a browser to another page of the site."""
    from inventory.templatetags.claimscope import deviceclass_link

    html = str(deviceclass_link("c", name))
    assert "<a" not in html and "href" not in html


def test_a_real_class_name_is_still_a_link(client_in, sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig")
    claim = ResourceClaim.objects.filter(cluster__name="mig").order_by("name").first()
    body = client_in.get(claim.get_absolute_url()).content.decode()
    assert reverse("inventory:deviceclass", args=["mig", "mig.nvidia.com"]) in body
