"""Cluster text on the search page is escaped: claims whose stored names carry markup, and the
term itself, are shown as text (the sync refuses such names; rows stored otherwise must
still not run in the page)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import ResourceClaim

pytestmark = pytest.mark.django_db
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"


def test_claim_names_with_markup_are_escaped(client_in, demo_clusters):
    first, second = ResourceClaim.objects.order_by("pk")[:2]
    ResourceClaim.objects.filter(pk=first.pk).update(name=SCRIPT)  # a "/" too: no URL can name it
    ResourceClaim.objects.filter(pk=second.pk).update(name=IMG, namespace='"><b>ns')
    resp = client_in.get(reverse("inventory:search"), {"q": "<"})
    assert resp.status_code == 200 and resp.context["result"].total == 2
    html = resp.content.decode()
    assert SCRIPT not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert '"><b>' not in html
    resp = client_in.get(reverse("inventory:search"), {"q": SCRIPT})
    # One match, but without a page to open: listed as text, not redirected.
    assert resp.status_code == 200 and resp.context["result"].total == 1
    assert SCRIPT not in resp.content.decode()
