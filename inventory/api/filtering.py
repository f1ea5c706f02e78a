"""The API's filter backend: the pages' FilterSets, validated strictly.

A page may be lenient with a pasted link; a script is better told its parameter is wrong
than handed an unfiltered list. On top of django-filter's own validation (an unknown
cluster, a non-number for a number) this refuses a parameter given twice (only the last
would count), a boolean that is not ``true`` or ``false`` (django-filter reads ``null``,
``unknown`` and typos as "no filter"), and an empty value for a typed filter (a choice, a
number, a boolean: "no filter" to django-filter, which is what a page's blank field means).
"""

from __future__ import annotations

import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError

BOOLEAN_VALUES = ("true", "false")
TYPED = (django_filters.ChoiceFilter, django_filters.NumberFilter, django_filters.BooleanFilter)


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset(self, request, queryset, view):
        filterset = super().get_filterset(request, queryset, view)
        if filterset is not None:
            errors: dict[str, list[str]] = {}
            for name, f in filterset.filters.items():
                values = request.query_params.getlist(name)
                if len(values) > 1:
                    errors[name] = ["Given more than once."]
                elif values and not values[0] and isinstance(f, TYPED):
                    errors[name] = ["Empty: leave the parameter out to not filter."]
                elif values and isinstance(f, django_filters.BooleanFilter) and values[0] not in BOOLEAN_VALUES:
                    errors[name] = ["One of true, false."]
            if errors:
                raise ValidationError(errors)
        return filterset
