"""The ResourceClaimTemplates list of a cluster shows each template's requests, count and
DeviceClass, for resource.k8s.io/v1 templates (``exactly``, the shape every stored object is
normalized to) as for the older flat requests. It answered 500 for every v1 template: a
template's filter argument (``default:r.count``) that does not exist raises in Django."""

from __future__ import annotations

from django.urls import reverse

from tests.conftest import FIXTURES

QUICKSTART_V1 = FIXTURES / "k8s/claims-and-templates/quickstart-v1/gpu-test1.yaml"
QUICKSTART_V1BETA1 = FIXTURES / "k8s/claims-and-templates/quickstart-v1beta1/gpu-test1.yaml"


def test_v1_and_v1beta1_templates_list_their_requests(client_in, sync_snapshot):
    for path, name in ((QUICKSTART_V1, "qs-v1"), (QUICKSTART_V1BETA1, "qs-v1beta1")):
        sync_snapshot(path, name=name)
        resp = client_in.get(reverse("inventory:claimtemplates", args=[name]))
        assert resp.status_code == 200, name
        html = resp.content.decode()
        assert "gpu-test1/single-gpu" in html
        assert "gpu: 1\u00d7 <span class=\"mono\">gpu.nvidia.com</span>" in html, name  # U+00D7, the page's multiplication sign


def test_a_v1_request_without_count_or_mode_shows_one_on_the_template_page(client_in, sync_snapshot):
    sync_snapshot(QUICKSTART_V1, name="qs-v1")
    resp = client_in.get(reverse("inventory:claimtemplate", args=["qs-v1", "gpu-test1", "single-gpu"]))
    assert resp.status_code == 200
    assert '<td class="inline" data-label="Count">1</td>' in resp.content.decode()
