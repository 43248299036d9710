"""An HTTP server does not load what it is not configured to use until it uses it.

A basic MCP or A2A server, serving requests, does not import the event store and the
cross-process resumption (``jsonrpc_core._event_store``, ``_http_resume``), the MCP
URI templates, subscription bus, `Context` and multi round-trip requests
(``mcp_layer._uri_template``, ``_subscriptions``, ``_context``, ``_mrtr``), nor the A2A
replication over a shared store (``a2a_layer._shared``, ``_fanout``); each loads as soon
as it is needed and then works as before. The MCP server also answers ``tools/list``
without building `ListToolsResult`. The import checks run in a fresh interpreter, so
what this process imported does not count.

Tests the private units `a2a_layer._runtime.TaskRuntime` and `_fanout.Replication` on
purpose: replication must still load for a shared store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from a2a_layer import InMemoryTaskStore, MessageRecord, SharedTaskStore
from a2a_layer._runtime import TaskRuntime
from mcp_layer import InMemorySubscriptionBus, MCPServer

pytestmark = pytest.mark.anyio


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter
    (``code`` must print ``OK`` once what it served was right)."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    lines = done.stdout.strip().splitlines()
    assert "OK" in lines, done.stdout + done.stderr
    return set(json.loads(lines[-1]))


# Drives an ASGI app in process: lifespan startup, then each POST in turn (the headers of
# an answer that names a session are kept), then lifespan shutdown.
DRIVE = """
import asyncio, json

async def drive(app, path, posts, headers):
    to_app, from_app = asyncio.Queue(), asyncio.Queue()
    await to_app.put({"type": "lifespan.startup"})
    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, to_app.get, from_app.put)
    )
    assert (await from_app.get())["type"] == "lifespan.startup.complete"
    headers = dict(headers)
    bodies = []
    for post in posts:
        sent = []
        pending = [{"type": "http.request", "body": json.dumps(post).encode()}]

        async def receive():
            if pending:
                return pending.pop(0)
            await asyncio.Event().wait()  # no more body; the client stays

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5),
            "server": ("127.0.0.1", 80),
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
        await app(scope, receive, send)
        for message in sent:
            if message["type"] == "http.response.start":
                for name, value in message["headers"]:
                    if name == b"mcp-session-id":
                        headers["mcp-session-id"] = value.decode()
        parts = [m.get("body", b"") for m in sent if m["type"] == "http.response.body"]
        bodies.append(b"".join(parts))
    await to_app.put({"type": "lifespan.shutdown"})
    await lifespan
    return bodies
"""

MCP_SERVER = (
    DRIVE
    + """
from mcp_layer import MCPServer

server = MCPServer("s")

@server.tool()
def echo(text: str) -> str:
    return text

headers = {"accept": "application/json, text/event-stream",
           "content-type": "application/json", "host": "127.0.0.1"}
posts = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "echo", "arguments": {"text": "hi there"}}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
]
bodies = asyncio.run(drive(server.asgi_app(), "/mcp", posts, headers))
assert b'"text":"hi there"' in bodies[2], bodies
assert b'"name":"echo"' in bodies[3], bodies
from mcp_layer.types import ListToolsResult
assert not ListToolsResult.__pydantic_complete__  # tools/list answered without it
print("OK")
"""
)

A2A_SERVER = (
    DRIVE
    + """
from a2a_layer import A2AServer
from a2a_layer.types import AgentCapabilities, AgentCard

card = AgentCard(name="a", description="d", version="1",
    capabilities=AgentCapabilities(streaming=True, push_notifications=False),
    default_input_modes=["text/plain"], default_output_modes=["text/plain"])

async def agent(context, updater):
    await updater.add_artifact("done " + context.text)
    await updater.complete()

server = A2AServer(card, agent, url="http://127.0.0.1:1", rest_path=None, compat_v03=False)
headers = {"content-type": "application/json", "a2a-version": "1.0", "host": "127.0.0.1"}
posts = [{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "role": "ROLE_USER", "parts": [{"text": "hi"}], "messageId": "m1"}}}]
bodies = asyncio.run(drive(server.asgi_app(), "/", posts, headers))
assert b"TASK_STATE_COMPLETED" in bodies[0] and b"done hi" in bodies[0], bodies
print("OK")
"""
)

EVENT_STORE_PARTS = {"jsonrpc_core._event_store", "jsonrpc_core._http_resume"}


def test_a_serving_mcp_server_with_tools_only_skips_the_unused_parts() -> None:
    loaded = _loaded_after(MCP_SERVER)
    assert {"mcp_layer._server", "mcp_layer._http", "jsonrpc_core._http_server"} <= loaded
    unused = EVENT_STORE_PARTS | {
        "mcp_layer._uri_template",
        "mcp_layer._subscriptions",
        "mcp_layer._context",
        "mcp_layer._mrtr",
    }
    assert not loaded & unused


def test_a_serving_a2a_server_on_a_plain_store_skips_replication() -> None:
    loaded = _loaded_after(A2A_SERVER)
    assert {"a2a_layer._runtime", "jsonrpc_core._http_server"} <= loaded
    assert not loaded & (EVENT_STORE_PARTS | {"a2a_layer._shared", "a2a_layer._fanout"})


def test_an_event_store_loads_the_resumption_once_a_session_starts() -> None:
    code = MCP_SERVER.replace(
        "server.asgi_app()",
        "server.asgi_app(event_store=__import__('jsonrpc_core').InMemoryEventStore())",
    )
    assert code != MCP_SERVER
    assert EVENT_STORE_PARTS <= _loaded_after(code)


def test_a_resource_loads_the_uri_templates() -> None:
    code = (
        "from mcp_layer import MCPServer\n"
        "server = MCPServer('s')\n"
        "@server.resource('file:///{name}')\n"
        "def read(name: str) -> str:\n"
        "    return name\n"
        "assert server.templates\n"
        "print('OK')\n"
    )
    assert "mcp_layer._uri_template" in _loaded_after(code)


def test_a_context_parameter_is_found_when_resolving_its_annotation_loads_context() -> None:
    code = (
        "from __future__ import annotations\n"
        "import sys\n"
        "import mcp_layer\n"
        "server = mcp_layer.MCPServer('s')\n"
        "def tool(text: str, ctx: mcp_layer.Context) -> str:\n"
        "    return text\n"
        "assert 'mcp_layer._context' not in sys.modules\n"
        "entry = server.add_tool(tool)\n"
        "assert entry.signature.context_param == 'ctx', entry.signature.context_param\n"
        "assert list(entry.tool.input_schema['properties']) == ['text']\n"
        "print('OK')\n"
    )
    assert "mcp_layer._context" in _loaded_after(code)


def test_the_request_state_sealer_is_made_once_and_a_bad_key_still_refused_at_once() -> None:
    server = MCPServer("s", request_state_ttl=5.0)
    sealer = server.request_state
    assert server.request_state is sealer and sealer.ttl == 5.0
    token = sealer.seal({"x": 1})
    assert server.request_state.unseal(token)["x"] == 1
    keyed = MCPServer("s", request_state_key="k" * 16)
    assert keyed.request_state.unseal(keyed.request_state.seal({"y": 2}))["y"] == 2
    with pytest.raises(ValueError, match="16 bytes"):
        MCPServer("s", request_state_key="short")


# -- the subscription bus, made on first use -------------------------------------------


def test_the_default_bus_is_made_once_and_a_given_one_is_kept() -> None:
    server = MCPServer("s")
    bus = server.subscriptions
    assert isinstance(bus, InMemorySubscriptionBus)
    assert server.subscriptions is bus
    given = InMemorySubscriptionBus()
    assert MCPServer("s", subscriptions=given).subscriptions is given
    server.subscriptions = given
    assert server.subscriptions is given


async def test_a_change_reaches_a_subscriber_of_the_default_bus() -> None:
    server = MCPServer("s")
    await server.notify_tools_changed()  # no bus yet: nobody to tell, nothing made
    assert server._subscriptions is None
    async with server.subscriptions.subscribe() as events:
        await server.notify_tools_changed()
        await server.notify_resource_updated("file:///a")
        first, second = await events.receive(), await events.receive()
    assert (first.kind, second.kind, second.uri) == ("tools", "resource", "file:///a")


# -- replication, when the store is shared ---------------------------------------------


async def test_a_shared_store_still_gets_replication() -> None:
    from a2a_layer._fanout import Replication

    class Shared(SharedTaskStore, InMemoryTaskStore):
        async def load_task(self, task_id: str, *, tenant: str = "") -> Any:
            return None

        async def append(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def changes_after(self, *args: Any, **kwargs: Any) -> Any:
            return []

        async def claim_message(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def get_claim(self, message_id: str, *, tenant: str = "") -> Any:
            return None

        async def fail_claim(self, *args: Any, **kwargs: Any) -> None:
            return None

        async def release_claim(self, *args: Any, **kwargs: Any) -> None:
            return None

        async def listen(self, *args: Any, **kwargs: Any) -> None:
            return None

    async def agent(context: Any, updater: Any) -> None:
        await updater.complete()

    shared = TaskRuntime(agent, Shared())
    assert isinstance(shared.replication, Replication)
    assert shared.replication.store is shared.store
    assert TaskRuntime(agent, InMemoryTaskStore()).replication is None


# -- message ids, per tenant -------------------------------------------------------------


async def test_message_ids_of_different_tenants_stay_apart() -> None:
    store = InMemoryTaskStore()
    await store.save_message("m", MessageRecord(task_id="t-default"))
    await store.save_message("m", MessageRecord(task_id="t-a"), tenant="a")
    await store.save_message("a", MessageRecord(task_id="t-other"))
    assert await store.get_message("m") == MessageRecord(task_id="t-default")
    assert await store.get_message("m", tenant="a") == MessageRecord(task_id="t-a")
    assert await store.get_message("a") == MessageRecord(task_id="t-other")
    assert await store.get_message("a", tenant="m") is None
    assert await store.get_message("m", tenant="b") is None
    # The default tenant's ids are kept as they are, with no tuple per message.
    assert {"m", "a", ("a", "m")} == set(store._messages)
