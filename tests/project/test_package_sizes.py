"""The packages and the benchmark keep to the size rules: no module over 600 lines, no
function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `bench` is no installed package, but its modules are held to the same rules.
PACKAGES = ("jsonrpc_core", "mcp_layer", "acp_layer", "a2a_layer", "rpcweave", "bench")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _package_sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_the_packages_have_modules() -> None:
    assert {path.relative_to(ROOT).parts[0] for path in _package_sources()} == set(PACKAGES)


def test_no_package_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _package_sources()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_package_function_is_over_80_lines() -> None:
    long: dict[str, int] = {}
    for path in _package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}
