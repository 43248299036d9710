"""The core is JSON-RPC: it names no protocol, and what the layers need from it is public.

Read from the sources (AST), so a regression names the file and line: the core's code
(its docstrings aside, which may cite a protocol as an example) spells no protocol word;
each protocol passes its own HTTP session header to the core.
"""

from __future__ import annotations

import ast
import re
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
