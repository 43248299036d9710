"""MCP 2026-07-28 interop with the official Python SDK (PyPI ``mcp``), both directions.

(a) The official ``mcp.Client`` (``mode="auto"`` probes with ``server/discover``, or pinned
    to ``"2026-07-28"``) against rpcweave's everything server: over Streamable HTTP on a
    real uvicorn and over stdio. Its multi round-trip driver answers our input requests.
(b) rpcweave's `ClientSession` in the 2026 era (pinned, and ``"auto"``) against a server
    written with the official SDK (tests/fixtures/official_mcp_server_2026.py), over
    Streamable HTTP and stdio: our envelope, headers (``x-mcp-header`` included) and
    retries meet the official server's checks; its resolver-driven ``InputRequiredResult``
    is answered by our host handlers.

What our side emits over HTTP is validated against the 2026-07-28 schema; what the
official side emits is checked too and kept in ``peer_errors``. The handshake era with
the same SDK is tests/mcp_layer/test_mcp_interop.py.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp.types as official
import pytest
from mcp import Client, StdioServerParameters
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema

from jsonrpc_core import running_server, spawn_stdio
from mcp_layer import ClientSession, connect_http
from mcp_layer.types import ElicitResult, TextContent

pytestmark = [
    pytest.mark.anyio,
    requires_schema,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

VERSION = "2026-07-28"
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"
OFFICIAL_SERVER = FIXTURES / "official_mcp_server_2026.py"


@pytest.fixture
def anyio_backend() -> str:
    # The official SDK targets asyncio (see tests/mcp_layer/test_mcp_interop.py); rpcweave's own
    # trio support in this era is covered by test_mcp_2026_server.py and _client.py.
    return "asyncio"


def _load(path: Path, name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ours_serve() -> Iterator[WireChecker]:
    checker = WireChecker(ours={"server"}, revision=VERSION)
    yield checker
    checker.assert_clean()


@pytest.fixture
def ours_call() -> Iterator[WireChecker]:
    checker = WireChecker(ours={"client"}, revision=VERSION)
    yield checker
    checker.assert_clean()


# -- (a) the official client against rpcweave ------------------------------------------


class OfficialHost:
    """The official client's callbacks, and what they were asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicitation(self, context: Any, params: Any) -> official.ElicitResult:
        self.asked.append(params.message)
        return official.ElicitResult(action="accept", content={"name": "Ada", "ok": True})

    async def sampling(
        self, context: Any, params: official.CreateMessageRequestParams
    ) -> official.CreateMessageResult:
        self.asked.append("sampling")
        text = official.TextContent(type="text", text="Paris")
        return official.CreateMessageResult(role="assistant", content=text, model="official-m")

    async def roots(self, context: Any) -> official.ListRootsResult:
        self.asked.append("roots")
        return official.ListRootsResult(roots=[official.Root(uri="file:///official")])

    def options(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicitation,
            "sampling_callback": self.sampling,
            "list_roots_callback": self.roots,
        }


def _text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, official.TextContent)
    return block.text


async def exercise_everything(client: Client, host: OfficialHost, *, probed: bool = True) -> None:
    assert client.protocol_version == VERSION
    if probed:  # pinned to a version, the official client sends no server/discover
        assert client.server_info is not None
        assert client.server_info.name == "mcp-conformance-test-server"
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"test_simple_text", "test_input_required_result_multiple_inputs"} <= names
    assert _text(await client.call_tool("test_simple_text", {})) == (
        "This is a simple text response for testing."
    )
    # Our input requests, answered by the official client's multi round-trip driver.
    assert _text(await client.call_tool("test_input_required_result_elicitation", {})) == (
        "Hello, Ada!"
    )
    multiple = _text(await client.call_tool("test_input_required_result_multiple_inputs", {}))
    assert multiple == "Paris Ada (roots: file:///official)"
    multi_round = _text(await client.call_tool("test_input_required_result_multi_round", {}))
    assert multi_round.startswith("Ada likes")
    read = await client.read_resource("test://static-text")
    content = read.contents[0]
    assert isinstance(content, official.TextResourceContents)
    assert content.text == "This is the content of the static text resource."
    prompt = await client.get_prompt("test_input_required_result_prompt")
    message = prompt.messages[0].content
    assert isinstance(message, official.TextContent)
    assert message.text == "Use this context: none"  # the answer had no "context" field
    # x-mcp-header: the official client mirrors "region" into Mcp-Param-Region.
    assert _text(await client.call_tool("test_x_mcp_header", {"region": "eu", "query": "q"})) == (
        "Ran 'q' in eu"
    )
    assert "What is your name?" in host.asked and "sampling" in host.asked


@pytest.mark.parametrize("mode", ["auto", VERSION])
async def test_official_client_with_our_server_over_streamable_http(
    ours_serve: WireChecker, mode: str
) -> None:
    everything = _load(EVERYTHING, "everything_server_example")
    app = SchemaCheckingASGI(everything.build_server().asgi_app(), ours_serve)
    host = OfficialHost()
    with anyio.fail_after(60):
        async with running_server(app) as base:
            async with Client(f"{base}/mcp", mode=mode, **host.options()) as client:
                await exercise_everything(client, host, probed=mode == "auto")
    assert ours_serve.checked["DiscoverResult"] == (1 if mode == "auto" else 0)
    assert ours_serve.checked["InputRequiredResult"] >= 4
    assert ours_serve.peer_errors == []  # the official client's requests fit the schema
    assert ours_serve.sent_by("client", "initialize") == []


async def test_official_client_with_our_server_over_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING), "--stdio"])
    host = OfficialHost()
    with anyio.fail_after(60):
        async with Client(params, **host.options()) as client:  # mode="auto"
            await exercise_everything(client, host)


# -- (b) rpcweave's client against the official server -----------------------------------


class OurHost:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def elicitation(self, params: Any) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action="accept", content={"nickname": "Ace"})

    def options(self, **extra: Any) -> dict[str, Any]:
        return {"elicitation": self.elicitation, **extra}


async def exercise_official(client: ClientSession, host: OurHost) -> None:
    assert client.modern and client.protocol_version == VERSION
    assert client.server_info is not None and client.server_info.name == "official-fixture"
    assert client.discovery is not None and VERSION in client.discovery.supported_versions
    tools = {tool.name for tool in await client.list_all_tools()}
    assert {"add", "weather", "welcome", "route"} <= tools
    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert added.structured_content == {"result": 5}
    weather = await client.call_tool("weather", {"city": "Oslo"})
    assert weather.structured_content == {"city": "Oslo", "temperature": 21.5}
    failed = await client.call_tool("fail", {"reason": "nope"})
    assert failed.is_error
    progress: list[float] = []
    stepped = await client.call_tool("steps", {"n": 2}, progress=lambda p, t, m: progress.append(p))
    assert stepped.content[0] == TextContent(text="2 steps")
    assert progress == [1, 2]
    # The official server's resolver asks through an InputRequiredResult; our host answers.
    welcomed = await client.call_tool("welcome", {})
    assert welcomed.content[0] == TextContent(text="Welcome, Ace!")
    assert [p.message for p in host.asked] == ["What should I call you?"]
    routed = await client.call_tool("route", {"region": "Zürich"})
    assert routed.content[0] == TextContent(text="routed to Zürich")
    (resource,) = (await client.read_resource("test://static")).contents
    assert getattr(resource, "text", None) == "hello, world"
    prompt = await client.get_prompt("greet", {"name": "Ada"})
    assert "Ada" in str(prompt.messages[0].content)
    completion = await client.complete(
        {"type": "ref/prompt", "name": "greet"}, {"name": "style", "value": "f"}
    )
    assert completion.completion.values == ["formal", "friendly"]


@pytest.mark.parametrize("mode", [VERSION, "auto"])
async def test_our_client_with_official_server_over_streamable_http(
    ours_call: WireChecker, mode: str
) -> None:
    fixture = _load(OFFICIAL_SERVER, "official_mcp_server_2026_fixture")
    app = SchemaCheckingASGI(fixture.build().streamable_http_app(), ours_call)
    host = OurHost()
    with anyio.fail_after(60):
        async with running_server(app) as base:
            async with connect_http(f"{base}/mcp", **host.options(protocol_version=mode)) as client:
                await exercise_official(client, host)
    assert ours_call.sent_by("client", "initialize") == []
    assert ours_call.checked["CallToolRequest"] == 7  # welcome takes two rounds


async def test_our_client_with_official_server_over_stdio() -> None:
    host = OurHost()
    with anyio.fail_after(60):
        async with spawn_stdio([sys.executable, str(OFFICIAL_SERVER)]) as process:
            async with ClientSession(process, **host.options(protocol_version="auto")) as client:
                await exercise_official(client, host)
