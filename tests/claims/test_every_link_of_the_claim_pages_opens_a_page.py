"""Every link on the claims list, each claim page and each ResourceClaimTemplate page of every
diagnosis case opens a page: an object the cluster does not hold (a DeviceClass a claim names
but nobody created, the node of an allocation no Node or slice has) is text marked "not
stored", never a link to a 404."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from store_helpers import CASES, cluster_name

from inventory.models import KubeObject, ResourceClaim

pytestmark = pytest.mark.django_db
LINK = re.compile(r'href="(/[^"?#]*)(?:\?[^"#]*)?"')
SKIP = ("/static/", "/logout", "/admin", "/yaml/", "/api/", "/login")


def _links(body: str) -> set[str]:
    return {u for u in LINK.findall(body) if not u.startswith(SKIP)}


def test_no_link_of_the_claim_pages_is_a_404(client_in, sync_snapshot):
    for case in sorted(p for p in CASES.iterdir() if (p / "snapshot").is_dir()):
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    pages = [f"{reverse('claims:list')}?page={n}" for n in (1, 2)]
    pages += [c.get_absolute_url() for c in ResourceClaim.objects.select_related("cluster")]
    pages += [reverse("inventory:claimtemplate", args=[t.cluster.name, t.namespace, t.name])
              for t in KubeObject.objects.filter(kind="ResourceClaimTemplate").select_related("cluster")]
    assert len(pages) > 20
    checked: dict[str, int] = {}
    for page in pages:
        resp = client_in.get(page)
        if resp.status_code == 404 and "page=" in page:
            continue
        assert resp.status_code == 200, page
        for url in _links(resp.content.decode()) - checked.keys():
            checked[url] = client_in.get(url).status_code
    broken = {u: s for u, s in checked.items() if s != 200}
    assert not broken, broken
    # The cases do name a DeviceClass nobody created: its name is shown, marked.
    missing = ResourceClaim.objects.get(cluster__name=cluster_name(CASES / "device-class-missing-gpu-side-disabled"))
    assert "not stored" in client_in.get(missing.get_absolute_url()).content.decode()
