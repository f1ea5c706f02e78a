"""The read-only JSON API under ``/api/`` (Django REST framework, django-filter, drf-spectacular).

Laid out as NetBox's: each app has an ``api`` package (``serializers``, ``views``, ``urls``);
this one also holds what every app's API shares (``base``: pagination and the base viewset;
the root view and the OpenAPI schema at ``/api/schema/``). The pages' own FilterSets filter
the API too, so a filtered page and its API call take the same parameters.
"""
