"""What every app's API shares: a read-only base viewset with limit/offset pagination.

Permissions are those of the pages: any logged-in user may read (``IsAuthenticated``, set in
``REST_FRAMEWORK``); scripts send ``Authorization: Token <key>`` (DRF's ``authtoken``; a key
is made with ``manage.py drf_create_token <user>`` or in the admin). DRF's views are exempt
from ``LoginRequiredMiddleware``, which would send a token-only request to the login page.
"""

from __future__ import annotations

from rest_framework import viewsets

from .pagination import Pagination


class ReadOnlyViewSet(viewsets.ReadOnlyModelViewSet):
    """A list and a detail route. ``page_hook(rows)`` runs on the rows of one page only, so
    what a row needs besides its own columns (holders, links) costs a fixed number of queries
    per page, never one per row."""

    pagination_class = Pagination

    def page_hook(self, rows: list) -> None:
        """Attach what the serializer reads besides the row's own columns (default: nothing)."""

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        if page is not None:
            self.page_hook(page)
        return page

    def get_object(self):
        obj = super().get_object()
        self.page_hook([obj])
        return obj

