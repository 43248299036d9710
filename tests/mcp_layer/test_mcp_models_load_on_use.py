"""A basic MCP server never loads the models of what it does not use (issue #10, peak RSS).

The elicitation, sampling, roots and tasks models (`mcp_layer._types`
submodules) load on first use: through `mcp_layer.types` (PEP 562), through the
descriptors of `mcp_layer._methods` that need them, and where `Context` asks the client.
Each check that counts modules runs in a fresh interpreter, so what this process
imported does not count.

Tests the private units `mcp_layer._types` and `_methods` on purpose: which of their
modules load, and when, is the behaviour under test.
"""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

DEFERRED = {
    "mcp_layer._types._elicitation",
    "mcp_layer._types._sampling",
    "mcp_layer._types._roots",
    "mcp_layer._types._tasks",
    "mcp_layer._types._tasks_ext",
}


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


# A server answering ``initialize``, ``tools/list`` and ``tools/call`` over an in-memory
# stream, with raw JSON-RPC messages (the client would load the deferred models itself).
SERVE_ONE_CONNECTION = """
import anyio
from jsonrpc_core import Notification, Request, memory_pair
from mcp_layer import MCPServer

server = MCPServer("s")

@server.tool()
def echo(text: str) -> str:
    return text

server.asgi_app()

async def main() -> None:
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, theirs)
        init = {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"}}
        await ours.send(Request(1, "initialize", init))
        await ours.receive()
        await ours.send(Notification("notifications/initialized", {}))
        await ours.send(Request(2, "tools/list", {}))
        await ours.receive()
        await ours.send(Request(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        answer = (await ours.receive()).payload
        assert answer.result["content"][0]["text"] == "hi", answer
        tg.cancel_scope.cancel()

anyio.run(main)
"""


def test_a_basic_server_skips_the_deferred_models() -> None:
    loaded = _loaded_after(SERVE_ONE_CONNECTION)
    assert {"mcp_layer._server", "mcp_layer._session", "mcp_layer._http"} <= loaded
    assert not DEFERRED & loaded


def test_importing_types_loads_the_deferred_models_only_when_named() -> None:
    loaded = _loaded_after("import mcp_layer.types")
    assert "mcp_layer._types._tools" in loaded
    assert not DEFERRED & loaded
    loaded = _loaded_after("from mcp_layer.types import ElicitResult")
    assert "mcp_layer._types._elicitation" in loaded
    assert "mcp_layer._types._sampling" not in loaded


def test_every_exported_type_resolves() -> None:
    import mcp_layer.types as types
    from mcp_layer._types import _elicitation, _roots, _sampling, _tasks, _tasks_ext

    for name in vars(types)["__all__"]:
        assert getattr(types, name) is not None, name
    assert set(vars(types)["__all__"]) <= set(dir(types))
    assert types.ElicitResult is _elicitation.ElicitResult
    assert types.Root is _roots.Root
    assert types.SamplingMessage is _sampling.SamplingMessage
    assert types.TaskV2 is _tasks_ext.TaskV2
    assert types.Task is _tasks.Task
    assert types.TaskMetadata is _tasks.TaskMetadata
    assert types.TaskAugmentedRequestParams is _tasks.TaskAugmentedRequestParams
    assert types.TASKS_EXTENSION == _tasks_ext.TASKS_EXTENSION == "io.modelcontextprotocol/tasks"
    with pytest.raises(AttributeError):
        _ = types.NoSuchModel  # type: ignore[attr-defined]
    namespace: dict[str, object] = {}
    exec("from mcp_layer.types import *", namespace)
    assert set(vars(types)["__all__"]) <= set(namespace)


def test_the_deferred_descriptors_are_one_object_wherever_listed() -> None:
    from mcp_layer import _methods as methods

    assert methods.SERVER_REQUESTS["elicitation/create"] is methods.ELICITATION_CREATE
    assert methods.SERVER_REQUESTS["sampling/createMessage"] is methods.SAMPLING_CREATE_MESSAGE
    assert methods.SERVER_REQUESTS["roots/list"] is methods.ROOTS_LIST
    assert methods.SERVER_REQUESTS["ping"] is methods.PING
    notifications = methods.SERVER_NOTIFICATIONS
    assert (
        notifications["notifications/elicitation/complete"]
        is methods.NOTIFICATIONS_ELICITATION_COMPLETE
    )
    assert methods.TASK_AUGMENTED_REQUESTS["tools/call"] is methods.TOOLS_CALL_TASK
    assert methods.MODERN_CLIENT_REQUESTS["tasks/get"] is methods.TASKS_GET_V2
    assert methods.MODERN_CLIENT_REQUESTS["tools/call"] is methods.TOOLS_CALL
    assert methods.CLIENT_REQUESTS["tasks/get"] is methods.TASKS_GET
    assert methods.SERVER_REQUESTS["tasks/get"] is methods.TASKS_GET
    assert methods.CLIENT_REQUESTS["tools/call"] is methods.TOOLS_CALL
    status = "notifications/tasks/status"
    assert methods.CLIENT_NOTIFICATIONS[status] is methods.SERVER_NOTIFICATIONS[status]
    assert methods.CLIENT_NOTIFICATIONS[status] is methods.NOTIFICATIONS_TASKS_STATUS
    assert methods.ELICITATION_CREATE.params_type is methods.ELICITATION_CREATE_TASK.params_type
    assert methods.ELICITATION_CREATE_TASK.result_type is methods.TOOLS_CALL_TASK.result_type
    with pytest.raises(AttributeError):
        _ = methods.NO_SUCH_METHOD  # type: ignore[attr-defined]


def test_a_context_request_loads_what_it_asks_for() -> None:
    prefix = "from mcp_layer import Context, InputRequest\n"
    assert not DEFERRED & _loaded_after(prefix)
    code = prefix + (
        "request = InputRequest.roots()\n"
        "assert request.method == 'roots/list'\n"
        "from mcp_layer.types import ClientCapabilities\n"
        "assert request.missing_capability(ClientCapabilities()) == {'roots': {}}\n"
        "assert request.wire(modern=True) == {'method': 'roots/list', 'params': {}}\n"
    )
    assert "mcp_layer._types._roots" in _loaded_after(code)


def test_url_elicitation_is_told_from_form_elicitation() -> None:
    from mcp_layer import InputRequest
    from mcp_layer.types import ClientCapabilities, ElicitationCapability

    url = InputRequest.elicit_url("go", "https://example.com/x", "e1")
    form = InputRequest.elicit("name?", {"type": "object", "properties": {}})
    assert url.wire(modern=True)["params"].get("elicitationId") is None
    assert url.wire(modern=False)["params"]["elicitationId"] == "e1"
    assert form.wire(modern=True)["params"]["mode"] == "form"
    form_only = ClientCapabilities(elicitation=ElicitationCapability(form={}))
    assert url.missing_capability(form_only) == {"elicitation": {"url": {}}}
    assert form.missing_capability(form_only) is None


def test_memory_pair_smoke() -> None:
    """The script above runs in this interpreter too (a failing script fails loudly)."""
    namespace: dict[str, object] = {"__name__": "footprint"}
    exec(SERVE_ONE_CONNECTION.replace("anyio.run(main)", ""), namespace)
    anyio.run(namespace["main"])  # type: ignore[arg-type]


def test_importing_the_server_builds_no_validator() -> None:
    # A validator built at import time costs memory and start-up time before any
    # request, and pydantic's first build loads `importlib.metadata` (its plugin scan).
    loaded = _loaded_after(
        "from mcp_layer import MCPServer\n"
        "import mcp_layer._context, mcp_layer._era, mcp_layer._http, mcp_layer._session\n"
        "import mcp_layer.types\n"
    )
    assert "mcp_layer._session" in loaded
    assert not {"pydantic.plugin._loader", "importlib.metadata"} & loaded
    assert "mimetypes" not in loaded


def test_a_tool_shares_its_schemas_with_its_signature() -> None:
    from mcp_layer import MCPServer

    server = MCPServer("s")

    def add(a: int, b: int = 1) -> int:
        return a + b

    entry = server.add_tool(add)
    assert entry.signature.input_schema is entry.tool.input_schema
    assert entry.signature.output_schema is entry.tool.output_schema
    assert entry.tool.input_schema["required"] == ["a"]


def test_threads_racing_for_the_deferred_descriptors_get_the_same_ones() -> None:
    code = (
        "import threading\n"
        "from mcp_layer import _methods as m\n"
        "seen = []\n"
        "def grab():\n"
        "    seen.append((m.TOOLS_CALL_TASK, m.TASK_AUGMENTED_REQUESTS['tools/call']))\n"
        "threads = [threading.Thread(target=grab) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "assert len({id(a) for a, _ in seen} | {id(b) for _, b in seen}) == 1, seen\n"
    )
    assert "mcp_layer._types._tasks" in _loaded_after(code)
