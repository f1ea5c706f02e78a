"""The pod page's spec.resourceClaims: an entry naming a ResourceClaimTemplate links the
template's page when the template is stored, and stays plain text when it is not."""

from __future__ import annotations

import copy
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.models import KubeObject, Pod

pytestmark = pytest.mark.django_db


def _template_pods() -> list[Pod]:
    return [p for p in Pod.objects.select_related("cluster").order_by("pk")
            if any(r.get("resourceClaimTemplateName") for r in p.raw["spec"].get("resourceClaims") or [])]


def test_a_stored_template_is_linked_and_an_absent_one_is_text(client_in, tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    pod = _template_pods()[0]
    ref = next(r for r in pod.raw["spec"]["resourceClaims"] if r.get("resourceClaimTemplateName"))
    name = ref["resourceClaimTemplateName"]
    assert KubeObject.objects.filter(cluster=pod.cluster, kind="ResourceClaimTemplate", namespace=pod.namespace, name=name).exists()
    url = reverse("claims:pod", args=[pod.cluster.name, pod.namespace, pod.name])
    html = client_in.get(url).content.decode()
    page = reverse("inventory:claimtemplate", args=[pod.cluster.name, pod.namespace, name])
    assert f'template <a href="{page}">{name}</a>' in html
    assert client_in.get(page).status_code == 200

    # A template that is not stored (deleted since, or another namespace's) is named, not linked.
    raw = copy.deepcopy(pod.raw)
    for r in raw["spec"]["resourceClaims"]:
        if r.get("resourceClaimTemplateName"):
            r["resourceClaimTemplateName"] = "gone-template"
    Pod.objects.filter(pk=pod.pk).update(raw=raw)
    html = client_in.get(url).content.decode()
    assert "template gone-template" in html and "/gone-template/" not in html
