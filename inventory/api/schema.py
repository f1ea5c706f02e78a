"""The OpenAPI schema's error answers, which drf-spectacular leaves out by default.

Every operation may answer 401 (no or a wrong token); list operations 400 (a filter value
that does not validate, e.g. an unknown cluster: an empty list would read as "nothing
there"); detail operations and the plan 404. Declared once here so the schema says what the
API does (the schema test checks every status code against it).
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


_ERROR = OpenApiResponse(ErrorSerializer, description="error")
_INVALID = OpenApiResponse(OpenApiTypes.OBJECT, description="parameter name -> [what is wrong with its value]")


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction="response"):
        bodies = super()._get_response_bodies(direction)
        extra = {"401": _ERROR}
        if self.path.endswith("}/") or "/plan/" in self.path:
            extra["404"] = _ERROR
        if self._is_list_view() or "/plan/" in self.path:
            extra["400"] = _INVALID
        for code, response in extra.items():
            bodies.setdefault(code, self._get_response_for_code(response, code, direction=direction))
        return bodies
