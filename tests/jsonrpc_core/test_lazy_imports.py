"""`jsonrpc_core` and `mcp_layer` load their parts on first use.

Every exported name still resolves (``from package import X`` for each X in
``__all__``), but a stdio server or client does not import the HTTP server, httpx,
uvicorn, the trace renderers, the event stores or the other side of the protocol.
Each check runs in a fresh interpreter, so what this process imported does not count.

Imports from the private defining modules (`jsonrpc_core._peer`, `mcp_layer._server`) on
purpose: a lazy name must resolve to the very object defined there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


HEAVY = {
    "httpx",
    "uvicorn",
    "jsonschema",
    "psycopg",
    "jsonrpc_core._http_client",
    "jsonrpc_core._http_server",
    "jsonrpc_core._http_serve",
    "jsonrpc_core._http_security",
    "jsonrpc_core._http_sessions",
    "rpcweave._trace_html",
    "rpcweave._trace_render",
    "jsonrpc_core._tap",
    "jsonrpc_core._event_store",
    "jsonrpc_core._pg_event_store",
    "mcp_layer._http",
    "mcp_layer.auth",
}


def test_importing_the_packages_loads_nothing_else() -> None:
    loaded = _loaded_after("import jsonrpc_core, mcp_layer")
    assert not {m for m in loaded if m.startswith(("jsonrpc_core.", "mcp_layer."))}
    assert "pydantic" not in loaded


def test_a_stdio_server_skips_http_and_the_client() -> None:
    loaded = _loaded_after(
        "from mcp_layer import MCPServer\n"
        "server = MCPServer('s')\n"
        "server.add_tool(lambda text: text, name='echo')\n"
        "import jsonrpc_core\n"
        "jsonrpc_core.stdio_server\n"
    )
    assert "mcp_layer._server" in loaded
    assert not loaded & (HEAVY | {"mcp_layer._client", "mcp_layer._connect"})


def test_a_stdio_client_skips_http_and_the_server() -> None:
    loaded = _loaded_after("from mcp_layer import connect_stdio, ClientSession")
    assert "mcp_layer._client" in loaded
    server_side = {"mcp_layer._server", "mcp_layer._session", "mcp_layer._registry"}
    assert not loaded & (HEAVY | server_side | {"mcp_layer._functions", "mcp_layer._tasks"})


def test_an_http_app_loads_the_http_server() -> None:
    loaded = _loaded_after("from mcp_layer import MCPServer\nMCPServer('s').asgi_app()")
    assert {"jsonrpc_core._http_server", "mcp_layer._http"} <= loaded


@pytest.mark.parametrize(
    "package", ["jsonrpc_core", "jsonrpc_core.http", "jsonrpc_core.telemetry", "mcp_layer"]
)
def test_every_exported_name_resolves(package: str) -> None:
    optional = {"PostgresEventStore", "PostgresSubscriptionBus"}  # need the postgres extra
    code = (
        f"import importlib, {package} as p\n"
        "missing = []\n"
        f"for name in p.__all__:\n"
        f"    if name in {sorted(optional)!r}:\n"
        "        continue\n"
        "    ns = {}\n"
        f"    exec(f'from {package} import {{name}} as value', ns)\n"
        "    if ns['value'] is not getattr(p, name):\n"
        "        missing.append(name)\n"
        "    if name not in dir(p):\n"
        "        missing.append(name)\n"
        "print(missing)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("package", ["jsonrpc_core", "mcp_layer"])
def test_unknown_names_raise_attribute_error(package: str) -> None:
    module = __import__(package)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec(f"from {package} import no_such_name")


def test_names_are_the_defining_modules_objects() -> None:
    import jsonrpc_core
    import mcp_layer
    from jsonrpc_core._peer import Peer
    from mcp_layer import types
    from mcp_layer._server import MCPServer

    assert jsonrpc_core.Peer is Peer
    assert mcp_layer.MCPServer is MCPServer
    assert mcp_layer.types is types
