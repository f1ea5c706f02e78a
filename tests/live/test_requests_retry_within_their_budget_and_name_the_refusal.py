"""The HTTP layer: transient faults are retried with backoff within a budget, a Retry-After past
the budget fails at once with the reason, 401/403 are not retried and carry the server's
Status message, and a trickling body ends at the request's deadline."""

from __future__ import annotations

import time

import pytest

from inventory.kubehttp import KubeAPIError, KubeHTTP, KubeUnavailable, RetryPolicy
from inventory.sources import connect

CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"


def _http(fake, **kw):
    api, _ = connect(kubeconfig=str(fake.kubeconfig))
    return KubeHTTP(api, timeout=kw.pop("timeout", 3.0), retry=RetryPolicy(**{"attempts": 4, "base": 0.05, "total": 5.0, **kw}))


def _tries(fake):
    return sum(1 for r in fake.requests if r.startswith(CLAIMS))


def test_a_500_then_a_reset_are_retried_and_the_answer_arrives(fake):
    fake.inject("status", CLAIMS, status=500)
    fake.inject("reset", CLAIMS)
    body = _http(fake).get(CLAIMS, [("limit", 5)], verb="list")
    assert b'"items"' in body
    assert _tries(fake) == 3


def test_a_429_waits_its_retry_after(fake):
    fake.inject("status", CLAIMS, status=429, retry_after=1.0, reason="TooManyRequests", message="slow down")
    t0 = time.monotonic()
    _http(fake).get(CLAIMS, verb="list")
    assert time.monotonic() - t0 >= 1.0
    assert _tries(fake) == 2


def test_a_retry_after_past_the_budget_fails_at_once_with_the_reason(fake):
    fake.inject("status", CLAIMS, status=429, retry_after=30, reason="TooManyRequests", message="slow down")
    t0 = time.monotonic()
    with pytest.raises(KubeAPIError, match="Retry-After 30 s is past the retry budget") as err:
        _http(fake, total=5.0).get(CLAIMS, verb="list")
    assert time.monotonic() - t0 < 2.0
    assert err.value.status == 429 and "slow down" in str(err.value)


def test_tries_are_capped_in_count(fake):
    fake.inject("status", CLAIMS, status=503, times=99, reason="ServiceUnavailable", message="etcd leader changed")
    with pytest.raises(KubeAPIError, match=r"HTTP 503 ServiceUnavailable: etcd leader changed \(after 4 tries\)"):
        _http(fake).get(CLAIMS, verb="list")
    assert _tries(fake) == 4


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_not_retried_and_keep_the_servers_message(fake, status):
    fake.inject("status", CLAIMS, status=status, times=99)
    with pytest.raises(KubeAPIError) as err:
        _http(fake).get(CLAIMS, verb="list")
    assert _tries(fake) == 1
    if status == 403:
        assert ('list /apis/resource.k8s.io/v1/resourceclaims: HTTP 403 Forbidden: resourceclaims.resource.k8s.io is '
                'forbidden: User "system:serviceaccount:claimscope:claimscope" cannot list resource "resourceclaims" '
                'in API group "resource.k8s.io" at the cluster scope') == str(err.value)


def test_a_trickling_body_ends_at_the_deadline_of_the_request(fake):
    fake.inject("trickle", CLAIMS, interval=0.3, times=99)
    t0 = time.monotonic()
    with pytest.raises(KubeUnavailable, match="within the deadline"):
        _http(fake, timeout=1.5, attempts=1).get(CLAIMS, verb="list")
    assert time.monotonic() - t0 < 3.0  # one deadline and at most one byte's wait past it
