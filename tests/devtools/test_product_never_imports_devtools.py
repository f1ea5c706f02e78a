"""Product modules (inventory, claims, migration, config) never import ``devtools``: the fleet
generator, demo builders and benchmark stay outside the product's import graph. Every ``.py``
file under those packages is parsed (AST, nothing is imported or run) and each import, relative
ones resolved, and each ``import_module``/``__import__`` of a literal name is checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("inventory", "claims", "migration", "config")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of every module ``source`` imports; relative imports resolved
    against ``module`` (a package's own name when ``is_package``)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            # ``from . import devtools`` names a module in the alias, not in ``module``.
            found += [(node.lineno, f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def _devtools_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    return [f"line {line}: {name}" for line, name in _imported(source, module, is_package)
            if name == "devtools" or name.startswith("devtools.")]


def _product_files() -> list[Path]:
    files = [p for pkg in PRODUCT for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert len(files) > 50, "the product packages were not found"
    return files


def test_no_product_module_imports_devtools():
    offenders = {}
    for path in _product_files():
        hits = _devtools_imports(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")
        if hits:
            offenders[str(path.relative_to(ROOT))] = hits
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "import devtools",
        "import devtools.fleet as f",
        "from devtools.fleet import generate_fleet",
        "from devtools import demo",
        "def f():\n    from devtools.demo import build_demo\n",
        "import importlib\nimportlib.import_module('devtools.fleet')",
        "__import__('devtools')",
    ],
)
def test_the_scan_catches_each_way_of_importing_devtools(source):
    assert _devtools_imports(source, "inventory.views")


def test_the_scan_leaves_product_imports_and_lookalike_names_alone():
    source = "from . import fleet_stats\nfrom inventory import devtools_report\nimport devtoolsx\nfrom .demo import x"
    assert _devtools_imports(source, "inventory.views") == []
