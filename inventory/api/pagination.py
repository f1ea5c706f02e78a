"""API pagination, in a module of its own: ``REST_FRAMEWORK`` names it, and DRF's viewsets
import it while they are defined (a class next to a viewset would be a circular import)."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` (NetBox's style): 50 rows by default, at most 1,000 per request.

    A value that is not a non-negative integer is a 400, not silently the first page (DRF's
    default): a script paging with a bad offset would read page one forever. A ``limit``
    above 1,000 is capped; 0 means the default."""

    default_limit = 50
    max_limit = 1000

    def _value(self, request, name: str) -> int | None:
        values = request.query_params.getlist(name)
        if not values:
            return None
        if len(values) > 1 or not values[0].isdecimal():
            raise ValidationError({name: ["A single non-negative integer."]})
        return int(values[0])

    def get_limit(self, request):
        limit = self._value(request, self.limit_query_param)
        return min(limit, self.max_limit) if limit else self.default_limit

    def get_offset(self, request):
        return self._value(request, self.offset_query_param) or 0

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for p in params:
            p["schema"]["minimum"] = 0
        return params
