"""The stuck counter in the navigation bar: open critical and warning findings.

Lazy: the count query runs only on pages that show the nav (not the login page, not
partials without the counter).
"""

from __future__ import annotations

from django.utils.functional import SimpleLazyObject

from .models import Finding, Severity

# What the badge counts; the stuck queue says how many of its rows these are, so the two agree.
NAV_SEVERITIES = (Severity.CRITICAL, Severity.WARNING)


def _count() -> dict[str, int]:
    n = Finding.objects.open().filter(severity__in=NAV_SEVERITIES).count()
    return {"count": n}


def stuck(request):
    return {"nav_stuck": SimpleLazyObject(_count)}
