"""The core is JSON-RPC: it names no protocol, and what the layers need from it is public.

Read from the sources (AST), so a regression names the file and line: the core's code
(its docstrings aside, which may cite a protocol as an example) spells no protocol word;
each protocol passes its own HTTP session header to the core; no layer, CLI or bench
module imports a private core module (what they need is exported by `jsonrpc_core` or
its public submodules `jsonrpc_core.http`, `jsonrpc_core.postgres` and
`jsonrpc_core.telemetry`); the core's own
surface stays small.

Tests the private unit `mcp_layer._http.McpHTTPPolicy` on purpose: it is where MCP chooses
its session header.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonrpc_core

CORE = Path(jsonrpc_core.__file__).resolve().parent
ROOT = CORE.parent
PROTOCOL_WORDS = re.compile(r"mcp|a2a|\bacp\b|mermaid|elicit|sampling", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants of ``tree`` that are docstrings (of a module, class
    or function, or the attribute docstring after an assignment)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for before, statement in zip([None, *body], body, strict=False):
            if not (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                continue
            is_first = before is None and isinstance(
                node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
            )
            if is_first or isinstance(before, (ast.Assign, ast.AnnAssign)):
                found.add(id(statement.value))
    return found


def _protocol_words(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = "" if id(node) in docstrings else node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name
        elif isinstance(node, ast.arg):
            text = node.arg
        else:
            continue
        if PROTOCOL_WORDS.search(text):
            yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}: {text[:60]!r}"


def test_the_core_code_names_no_protocol() -> None:
    sources = sorted(CORE.rglob("*.py"))
    assert len(sources) > 20
    assert not [hit for path in sources for hit in _protocol_words(path)]


def test_the_session_header_is_the_protocols_choice() -> None:
    from jsonrpc_core import SessionPolicy, StreamableHTTPTransport
    from mcp_layer import MCPServer
    from mcp_layer._http import McpHTTPPolicy

    core_client = StreamableHTTPTransport("http://127.0.0.1:1/rpc")
    assert core_client.session_header == SessionPolicy().header  # the two ends agree
    assert "mcp" not in SessionPolicy().header
    assert McpHTTPPolicy(MCPServer("s")).session_policy().header == "mcp-session-id"


LAYERS_AND_CLI = ("mcp_layer", "acp_layer", "a2a_layer", "rpcweave", "bench")
# On purpose: the telemetry overhead bench switches the hook off in process (the "absent"
# contender) and points it at its own providers, which no public API offers.
PENDING = {
    ("bench/otel_overhead.py", "jsonrpc_core._telemetry"),
    ("bench/otel_overhead.py", "jsonrpc_core._telemetry_otel"),
}


def _private_core_imports(path: Path) -> Iterator[tuple[str, str]]:
    """(file, module) for each import of a private `jsonrpc_core` module in ``path``."""
    where = path.relative_to(ROOT).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "jsonrpc_core":  # `from jsonrpc_core import _wire`
                modules += [f"jsonrpc_core.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "jsonrpc_core" and any(part.startswith("_") for part in parts[1:]):
                yield where, module


def test_no_layer_or_cli_module_imports_a_private_core_module() -> None:
    sources = [
        path
        for package in LAYERS_AND_CLI
        for path in sorted((ROOT / package).rglob("*.py"))
        if "node_modules" not in path.parts
    ]
    assert len(sources) > 100
    found = {hit for path in sources for hit in _private_core_imports(path)}
    assert not found - PENDING


def test_the_core_exports_at_most_80_names_and_each_name_once() -> None:
    import jsonrpc_core.http
    import jsonrpc_core.postgres
    import jsonrpc_core.telemetry

    surfaces = [
        vars(jsonrpc_core)["__all__"],
        vars(jsonrpc_core.http)["__all__"],
        vars(jsonrpc_core.postgres)["__all__"],
        vars(jsonrpc_core.telemetry)["__all__"],
    ]
    assert len(vars(jsonrpc_core)["__all__"]) <= 80
    every = [name for names in surfaces for name in names]
    assert len(every) == len(set(every))


def test_the_public_submodules_load_their_names_on_first_use() -> None:
    code = (
        "import sys, jsonrpc_core.http, jsonrpc_core.postgres\n"
        "before = sorted(m for m in sys.modules if m.startswith('jsonrpc_core._'))\n"
        "http = jsonrpc_core.http\n"
        "missing = [n for n in http.__all__ if getattr(http, n) is None]\n"
        "print(before, missing, 'jsonrpc_core._http_caller' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[] [] True"
