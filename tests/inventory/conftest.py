"""Fixtures for the inventory page tests."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.fixture
def demo_clusters(db, tmp_path):
    """The demo clusters (demo, aicr-h100, vks-a100), loaded through the real sync path."""
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
