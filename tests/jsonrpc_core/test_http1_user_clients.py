"""A user's own HTTP client under MCP `connect` and `A2AClient`: httpx's and httpx2's.

httpx2 (Pydantic's continuation of httpx) goes in through `as_httpx_client`
(``jsonrpc_core/_http1_httpx2.py``): a thin `httpx.AsyncClient` in front of the user's
client, which does the sending. Real servers on 127.0.0.1 (uvicorn in a thread via
`running_server`), and raw ones (`test_http1_transport.raw_server`) where the bytes on
the wire matter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from test_http1_transport import LIMIT, ServerConn, keep_answering, ok, raw_server

from a2a_layer import A2AClient, A2AServer, ExecutionContext, TaskUpdater, text_of
from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill, Task, TaskState
from jsonrpc_core import running_server
from jsonrpc_core.http import as_httpx_client
from mcp_layer import MCPServer, connect
from mcp_layer.types import CallToolResult, TextContent

pytestmark = pytest.mark.anyio

USER_CLIENTS: dict[str, Callable[[], Any]] = {
    "httpx": lambda: httpx.AsyncClient(timeout=LIMIT),
    "httpx2": lambda: httpx2.AsyncClient(timeout=LIMIT),
}


@pytest.fixture(params=sorted(USER_CLIENTS))
async def user_client(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with USER_CLIENTS[request.param]() as client:
        yield client


def echo(text: str) -> str:
    """Say it back."""
    return text


def text(result: CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


async def reverse_agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.add_artifact(context.text[::-1], name="reversed")
    await updater.complete()


def agent_card() -> AgentCard:
    return AgentCard(
        name="reverser",
        description="Reverses the text.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="rev", name="Reverse", description="Reverse", tags=["t"])],
    )


@asynccontextmanager
async def mcp_server() -> AsyncIterator[str]:
    server = MCPServer("user-clients", "1.0.0")
    server.add_tool(echo)
    async with running_server(server.asgi_app(path="/mcp")) as base:
        yield base + "/mcp"


async def test_mcp_connect_works_on_the_users_client(user_client: Any) -> None:
    async with mcp_server() as url:
        with anyio.fail_after(LIMIT):
            async with connect(url, client=user_client) as session:
                result = await session.call_tool("echo", {"text": "hello"})
                results = []

                async def call(index: int) -> None:
                    results.append(await session.call_tool("echo", {"text": str(index)}))

                async with anyio.create_task_group() as group:
                    for index in range(8):
                        group.start_soon(call, index)
    assert text(result) == "hello"
    assert sorted(map(text, results)) == [str(i) for i in range(8)]
    assert not user_client.is_closed  # the user's client stays the user's


async def test_a2a_client_works_on_the_users_client(user_client: Any) -> None:
    server = A2AServer(agent_card(), reverse_agent)
    async with running_server(server.asgi_app()) as base:
        with anyio.fail_after(LIMIT):
            async with A2AClient.connect(base, http=user_client) as client:
                task = await client.send("stressed")
                events = [event async for event in client.stream("abc")]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.artifacts and text_of(task.artifacts[0]) == "desserts"
    last = events[-1].status_update
    assert last is not None and last.status.state is TaskState.COMPLETED
    assert not user_client.is_closed


async def test_an_httpx_client_is_used_as_it_is() -> None:
    async with httpx.AsyncClient() as client:
        assert as_httpx_client(client) is client


def test_anything_else_is_refused_with_the_type_named() -> None:
    with pytest.raises(TypeError, match=r"httpx2\.AsyncClient, got str"):
        as_httpx_client("http://example.invalid")  # type: ignore[arg-type]


class Recorder:
    """Records each request (line, headers, body) and answers with ``answer``."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.requests: list[tuple[bytes, dict[bytes, bytes], bytes]] = []

    async def __call__(self, conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            self.requests.append(request)
            await conn.send(self.answer)


async def test_the_httpx2_client_sends_with_its_own_headers_cookies_and_auth() -> None:
    recorder = Recorder(ok(b"fine", b"Set-Cookie: session=abc; Path=/\r\n"))
    async with raw_server(recorder) as server:
        user = httpx2.AsyncClient(
            headers={"User-Agent": "mine/1", "X-Team": "blue"}, auth=("ann", "secret")
        )
        async with user:
            front = as_httpx_client(user)
            with anyio.fail_after(LIMIT):
                first = await front.post(server.url + "/a", content=b"one", headers={"X-A": "1"})
                user.headers["X-Team"] = "green"  # changed after the front was made
                await front.post(server.url + "/b", content=b"two")
            await front.aclose()  # closing the front leaves the user's client open
            assert not user.is_closed
            assert user.cookies.get("session") == "abc"  # the user's jar took it
    assert first.status_code == 200 and first.content == b"fine"
    (line, headers, body), (_, second, _) = recorder.requests
    assert (line, body) == (b"POST /a HTTP/1.1", b"one")
    assert headers[b"user-agent"] == b"mine/1" and headers[b"x-team"] == b"blue"
    assert headers[b"x-a"] == b"1" and headers[b"authorization"].startswith(b"Basic ")
    assert second[b"cookie"] == b"session=abc" and second[b"x-team"] == b"green"
    assert b"x-a" not in second


async def test_a_streamed_body_reaches_the_server_through_the_httpx2_client() -> None:
    recorder = Recorder(ok())

    async def chunks() -> AsyncIterator[bytes]:
        yield b"part one, "
        yield b"part two"

    async with raw_server(recorder) as server, httpx2.AsyncClient() as user:
        with anyio.fail_after(LIMIT):
            await as_httpx_client(user).post(server.url, content=chunks())
    assert recorder.requests[0][2] == b"part one, part two"


async def test_httpx2_errors_come_back_as_the_httpx_errors_of_the_same_name() -> None:
    answered = anyio.Event()

    async def never_answers(conn: ServerConn) -> None:
        await conn.read_request()
        answered.set()
        await anyio.sleep_forever()  # the client's read timeout ends the exchange

    async with raw_server(never_answers) as server, httpx2.AsyncClient() as user:
        front = as_httpx_client(user)
        with anyio.fail_after(LIMIT), pytest.raises(httpx.ReadTimeout) as raised:
            await front.get(server.url, timeout=httpx.Timeout(LIMIT, read=0.2))
    assert isinstance(raised.value.__cause__, httpx2.ReadTimeout)
    assert answered.is_set()


async def test_a_response_read_in_chunks_comes_whole_through_the_httpx2_client() -> None:
    body = b"x" * 200_000
    async with raw_server(keep_answering(ok(body))) as server, httpx2.AsyncClient() as user:
        front = as_httpx_client(user)
        with anyio.fail_after(LIMIT):
            async with front.stream("GET", server.url) as response:
                received = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert received == body
