"""Operational endpoints (health, /metrics); included at the site root by config.urls."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
