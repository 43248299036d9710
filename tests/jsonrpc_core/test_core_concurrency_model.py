"""One concurrency model: anyio's primitives, no private asyncio API, one backend check.

Read from the source (AST), over every package of the repository:

* no private asyncio API: no ``asyncio._name`` (``asyncio._get_running_loop``, ...), no
  ``asyncio.events._name``, no private attribute of an event loop (``loop._name``);
* one backend check: only ``jsonrpc_core/_backend.py`` asks which event loop runs
  (sniffio, anyio's ``current_async_library``, or asyncio's ``get_running_loop`` /
  ``current_task`` caught for ``RuntimeError``); everything else calls `is_asyncio`.

Reads the private module `jsonrpc_core._transport` on purpose: the primitives it once held
must stay gone.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from jsonrpc_core import is_asyncio

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("jsonrpc_core", "mcp_layer", "acp_layer", "a2a_layer", "rpcweave", "bench")
BACKEND_MODULE = "jsonrpc_core/_backend.py"
BACKEND_PROBES = {"get_running_loop", "current_task", "_get_running_loop"}


def sources() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            yield relative, ast.parse(path.read_text(encoding="utf-8"), relative)


def dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of names and attributes, else ``""``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def private_asyncio_uses(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            owner = dotted(node.value)
            if not node.attr.startswith("__") and (
                owner.split(".")[0] == "asyncio" or owner.split(".")[-1] in ("loop", "_loop")
            ):
                found.append(f"{owner}.{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncio"):
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name[0] == "_"]
    return found


def catches_runtime_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is not None and dotted(k) == "RuntimeError" for k in kinds)


def backend_checks(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            module = node.module if isinstance(node, ast.ImportFrom) else ""
            if "sniffio" in names or (module or "").startswith("sniffio"):
                found.append(f"imports sniffio (line {node.lineno})")
        elif isinstance(node, ast.Attribute) and node.attr in (
            "current_async_library",
            "get_async_backend",
        ):
            found.append(f"{dotted(node)} (line {node.lineno})")
        elif isinstance(node, ast.Try) and any(catches_runtime_error(h) for h in node.handlers):
            calls = {
                c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                for stmt in node.body
                for c in ast.walk(stmt)
                if isinstance(c, ast.Call)
            }
            if calls & BACKEND_PROBES:
                found.append(f"asks asyncio for its loop in a try (line {node.lineno})")
    return found


def test_no_module_uses_private_asyncio_api() -> None:
    offenders = {path: uses for path, tree in sources() if (uses := private_asyncio_uses(tree))}
    assert offenders == {}


def test_only_the_backend_module_checks_the_backend() -> None:
    checks = {path: found for path, tree in sources() if (found := backend_checks(tree))}
    assert set(checks) == {BACKEND_MODULE}


def test_the_core_defines_no_concurrency_primitives_of_its_own() -> None:
    """Locks, events and queues are anyio's (the issue's "one concurrency model")."""
    import jsonrpc_core._transport as transport

    for name in ("Waiter", "FifoLock", "Flag", "_Queue", "_yield_once"):
        assert not hasattr(transport, name), name


async def test_is_asyncio_tells_the_backends_apart(anyio_backend: str) -> None:
    assert is_asyncio() == (anyio_backend == "asyncio")


def test_is_asyncio_without_an_event_loop_is_false() -> None:
    assert not is_asyncio()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_is_asyncio_in_an_event_loop_callback_outside_any_task(anyio_backend: str) -> None:
    """The stdio read callback runs outside any task, where sniffio sees no library."""
    import asyncio

    answered = anyio.Event()
    answers: list[bool] = []

    def callback() -> None:
        assert asyncio.current_task() is None
        answers.append(is_asyncio())
        answered.set()

    asyncio.get_running_loop().call_soon(callback)
    with anyio.fail_after(10):
        await answered.wait()
    assert answers == [True]
