"""The object a page's URL names (cluster, namespace, name), when names are not unique.

An API server holds one object per kind, namespace and name; a snapshot may hold two (a merged
or hand-edited file), and the sync stores both, keyed by uid. A page then shows the first one
stored and says how many others share its name, instead of failing on ``.get()``.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404


def by_name(queryset: Any, **lookup: Any) -> Any:
    """The first stored object (lowest pk) of ``queryset`` matching ``lookup``, with
    ``namesakes`` set to the uids of the others of that name (at most 20; usually none).
    Raises Http404 when there is none."""
    rows = list(queryset.filter(**lookup).order_by("pk")[:21])
    if not rows:
        raise Http404(f"No {queryset.model._meta.object_name} matches the given query.")
    first = rows[0]
    first.namesakes = [getattr(r, "uid", "") for r in rows[1:]]
    return first
