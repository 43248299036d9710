"""`StreamableHTTPTransport` and `HTTPSSETransport` with `Peer`, against in-process apps.

The server is a `JsonRpcHTTPApp` reached through `StreamingASGITransport`; a small ASGI
wrapper records every HTTP request the client makes, so tests can check what went on
the wire (session ids, headers, DELETE on close) as well as what the calls returned.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncGenerator, AsyncIterator, Generator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from _http_fixtures import BASE, SESSION, TIMEOUT, HTTPTestServer, client_for, count_to, wait_until

from jsonrpc_core import (
    BearerAuth,
    ConnectionClosed,
    ErrorResponse,
    HTTPError,
    HTTPSSETransport,
    HTTPStatusError,
    InMemoryEventStore,
    InvalidParams,
    MethodRegistry,
    Notification,
    NotificationType,
    Peer,
    SessionExpired,
    StreamableHTTPTransport,
    TransportError,
    encode,
)

pytestmark = pytest.mark.anyio

URL = BASE + "/rpc"
LEGACY_URL = BASE + "/sse"


def cancel_hook(request_id: Any, reason: str) -> Notification:
    return Notification("$/cancel_request", {"requestId": request_id})


@dataclass
class Seen:
    """One HTTP request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]


class Server(HTTPTestServer):
    """`HTTPTestServer` with streaming methods and a log of the HTTP requests it got."""

    def __init__(self, **options: Any) -> None:
        self.seen: list[Seen] = []
        self.stream_finished: list[Any] = []
        streaming = frozenset({"count", "forever", "count_closing"})
        super().__init__(**{"streaming_methods": streaming, **options})

    def registry(self) -> MethodRegistry:
        registry = super().registry()
        server = self

        async def ask(params: Any, ctx: Any) -> Any:
            return {"answer": await ctx.peer.request("client/answer", params, timeout=TIMEOUT)}

        async def forever(params: Any, ctx: Any) -> AsyncIterator[Any]:
            async def results() -> AsyncGenerator[Any, None]:
                n = 0
                try:
                    while True:
                        n += 1
                        yield {"n": n}
                        await anyio.sleep(0.01)  # paced on purpose: endless, not a flood
                finally:
                    server.stream_finished.append(ctx.request_id)

            return results()

        async def count_closing(params: Any, ctx: Any) -> AsyncIterator[Any]:
            """Streams 1..to, closing its SSE stream (to be resumed) after the first."""

            async def results() -> AsyncGenerator[Any, None]:
                for n in range(params["to"]):
                    yield {"n": n + 1}
                    if n == 0:
                        ctx.info.close_sse_stream()

            return results()

        def cancel(params: Any, ctx: Any) -> None:
            ctx.peer.cancel_incoming(params["requestId"])

        registry.on("ask", ask)
        registry.on("count", count_to)
        registry.on("forever", forever)
        registry.on("count_closing", count_closing)
        registry.on(NotificationType("$/cancel_request"), cancel)
        return registry

    def saw(self, scope: Any) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(Seen(scope["method"], scope["path"], headers))


def client_registry(answers: list[Any] | None = None) -> MethodRegistry:
    registry = MethodRegistry()

    def answer(params: Any, ctx: Any) -> Any:
        if answers is not None:
            answers.append(params)
        return f"answer to {params['question']}"

    registry.on("client/answer", answer)
    return registry


# -- sessions -----------------------------------------------------------------------


async def test_session_id_captured_sent_and_deleted_on_close() -> None:
    server = Server()
    async with client_for(server) as client:
        transport = StreamableHTTPTransport(URL, client=client)
        async with transport, Peer(transport) as peer:
            assert transport.session_id is None
            assert await peer.request("echo", [1]) == [1]
            session = transport.session_id
            assert session is not None
            assert server.app.sessions.get(session) is not None
            result = await peer.request("whoami")
            assert result["session"] == session
            await peer.notify("echo", [2])
            # the standalone stream is opened with the session id
            await wait_until(lambda: any(s.method == "GET" for s in server.seen))
        assert len(server.app.sessions) == 0
    posts = [s for s in server.seen if s.method == "POST"]
    assert SESSION not in posts[0].headers
    assert all(s.headers.get(SESSION) == session for s in posts[1:])
    assert len(posts) == 3
    gets = [s for s in server.seen if s.method == "GET"]
    assert gets and all(s.headers[SESSION] == session for s in gets)
    assert all("text/event-stream" in s.headers["accept"] for s in gets)
    deletes = [s for s in server.seen if s.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].headers[SESSION] == session
    assert server.seen[-1].method == "DELETE"
    for post in posts:
        assert "application/json" in post.headers["accept"]
        assert "text/event-stream" in post.headers["accept"]
        assert post.headers["content-type"] == "application/json"


async def test_no_delete_without_session_or_when_disabled() -> None:
    server = Server(sessions=None)
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport, Peer(transport) as p:
            assert await p.request("echo", [1]) == [1]
            assert transport.session_id is None
    stateful = Server()
    async with client_for(stateful) as client:
        transport = StreamableHTTPTransport(URL, client=client, terminate_on_close=False)
        async with transport, Peer(transport) as peer:
            assert await peer.request("echo", [1]) == [1]
        assert len(stateful.app.sessions) == 1
    assert all(s.method != "DELETE" for s in server.seen + stateful.seen)


async def test_session_expired_on_404_with_a_session() -> None:
    server = Server(json_response=True)
    async with client_for(server) as client:
        transport = StreamableHTTPTransport(URL, client=client, terminate_on_close=False)
        async with transport, Peer(transport) as peer:
            assert await peer.request("echo", [1]) == [1]
            # the server ends the session behind the client's back
            ended = await client.delete("/rpc", headers={SESSION: transport.session_id or ""})
            assert ended.status_code == 200
            with pytest.raises(SessionExpired) as expired:
                await peer.request("echo", [2])
            assert expired.value.status == 404
            assert isinstance(expired.value, HTTPStatusError)


# -- server-initiated messages ------------------------------------------------------


@pytest.mark.parametrize("json_response", [False, True])
async def test_standalone_stream_carries_server_request_and_answer(json_response: bool) -> None:
    server = Server(json_response=json_response)
    answers: list[Any] = []
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport, client_registry(answers)) as peer:
                assert await peer.request("echo", ["open"]) == ["open"]
                # the server calls the client outside any request of the client's
                result = await server.peer.request("client/answer", {"question": "q1"})
                assert result == "answer to q1"
                await server.peer.notify("server/hello")
                result = await server.peer.request("client/answer", {"question": "q2"})
                assert result == "answer to q2"
    assert answers == [{"question": "q1"}, {"question": "q2"}]
    answered = [s for s in server.seen if s.method == "POST"][1:]
    assert len(answered) == 2  # the two responses, posted back with the session id
    assert all(s.headers[SESSION] for s in answered)


async def test_server_calls_client_during_a_call() -> None:
    server = Server()
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport, client_registry()) as peer:
                result = await peer.request("ask", {"question": "why?"})
    assert result == {"answer": "answer to why?"}


# -- headers, auth, errors ----------------------------------------------------------


class TokenAuth(httpx.Auth):
    def __init__(self, token: str) -> None:
        self.token = token
        self.calls = 0

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.calls += 1
        request.headers["authorization"] = f"Bearer {self.token}"
        yield request


async def verify(token: str) -> Any:
    return {"secret": "alice"}.get(token)


async def test_custom_headers_on_every_request() -> None:
    server = Server()
    async with client_for(server) as client:
        transport = StreamableHTTPTransport(URL, client=client, headers={"x-client": "rpcweave"})
        async with transport:
            async with Peer(transport) as peer:
                assert await peer.request("echo", [0]) == [0]
                # headers is a live dict: layers add headers after negotiation
                transport.headers["mcp-protocol-version"] = "2025-11-25"
                assert await peer.request("echo", [1]) == [1]
                await peer.notify("echo", [2])
                await wait_until(lambda: any(s.method == "GET" for s in server.seen))
    assert {s.method for s in server.seen} == {"POST", "GET", "DELETE"}
    assert all(s.headers["x-client"] == "rpcweave" for s in server.seen)
    assert "mcp-protocol-version" not in server.seen[0].headers
    after = [s for s in server.seen[1:] if s.method != "GET"]
    assert len(after) == 3
    assert all(s.headers["mcp-protocol-version"] == "2025-11-25" for s in after)


async def test_custom_headers_with_http_sse() -> None:
    server = Server(legacy_sse_path="/sse")
    async with client_for(server) as client:
        transport = HTTPSSETransport(LEGACY_URL, client=client, headers={"x-client": "legacy"})
        async with transport, Peer(transport) as peer:
            assert await peer.request("echo", [1]) == [1]
            await peer.notify("echo", [2])
    assert [s.method for s in server.seen] == ["GET", "POST", "POST"]
    assert all(s.headers["x-client"] == "legacy" for s in server.seen)


@pytest.mark.parametrize("legacy", [False, True])
async def test_httpx_auth_on_every_request_with_a_given_client(legacy: bool) -> None:
    """``auth`` must apply to every request, also when the httpx client is given
    (as with `StreamingASGITransport`); the transport must not drop it silently."""
    server = Server(auth=BearerAuth(verify), legacy_sse_path="/sse")
    auth = TokenAuth("secret")
    async with client_for(server) as client:
        transport: Any
        if legacy:
            transport = HTTPSSETransport(LEGACY_URL, client=client, auth=auth)
        else:
            transport = StreamableHTTPTransport(URL, client=client, auth=auth)
        async with transport, Peer(transport) as peer:
            assert (await peer.request("whoami"))["principal"] == "alice"
            assert await peer.request("echo", [1]) == [1]
    assert server.seen
    assert all(s.headers.get("authorization") == "Bearer secret" for s in server.seen)
    assert auth.calls == len(server.seen)


def refusing_validate(info: Any, payload: Any, session: Any) -> None:
    method = getattr(payload, "method", None)
    if method == "forbidden":
        raise HTTPError(403, "Forbidden by policy")
    if method == "explained":
        body = encode(ErrorResponse(payload.id, InvalidParams("bad version header")))
        raise HTTPError(400, "Bad Request", body=body)
    if method == "plain":
        raise HTTPError(418, "teapot", body=b"I'm a teapot")


@pytest.mark.parametrize("legacy", [False, True])
async def test_http_error_status_is_raised_from_request(legacy: bool) -> None:
    server = Server(validate=refusing_validate, legacy_sse_path="/sse")
    async with client_for(server) as client:
        transport: Any
        if legacy:
            transport = HTTPSSETransport(LEGACY_URL, client=client)
        else:
            transport = StreamableHTTPTransport(URL, client=client)
        async with transport, Peer(transport) as peer:
            assert await peer.request("echo", [1]) == [1]
            with pytest.raises(HTTPStatusError) as forbidden:
                await peer.request("forbidden")
            assert forbidden.value.status == 403
            assert forbidden.value.error is not None
            assert "Forbidden by policy" in str(forbidden.value)
            with pytest.raises(InvalidParams, match="bad version header"):
                await peer.request("explained")
            with pytest.raises(HTTPStatusError) as teapot:
                await peer.request("plain")
            assert teapot.value.status == 418
            assert "teapot" in str(teapot.value)
            # the connection is still usable
            assert await peer.request("echo", [2]) == [2]


async def test_auth_failure_is_http_status_error_401() -> None:
    server = Server(auth=BearerAuth(verify))
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport) as peer:
                with pytest.raises(HTTPStatusError) as refused:
                    await peer.request("echo", [1])
    assert refused.value.status == 401
    assert not isinstance(refused.value, SessionExpired)


# -- resumption and failures --------------------------------------------------------


async def test_automatic_resumption_after_server_closes_the_stream() -> None:
    server = Server(event_store=InMemoryEventStore(), retry_interval_ms=30)
    notes: list[Any] = []
    registry = MethodRegistry()
    registry.on(NotificationType("progress"), lambda params, ctx: notes.append(params))
    async with client_for(server) as client:
        transport = StreamableHTTPTransport(URL, client=client, default_retry_ms=5000)
        async with transport, Peer(transport, registry) as peer:
            assert await peer.request("echo", ["open"]) == ["open"]
            ops = ["note", "close", "note", "note", "wait:go", "note"]
            async with anyio.create_task_group() as tg:

                async def release() -> None:
                    # let the client reconnect while the handler is still going
                    await wait_until(lambda: sum(s.method == "GET" for s in server.seen) >= 2)
                    server.gate("go").set()

                tg.start_soon(release)
                result = await peer.request("script", {"ops": ops})
            assert result == {"notes": 4}
            # a second early close, with everything sent before the client is back
            again = await peer.request("script", {"ops": ["note", "close", "note"]})
            assert again == {"notes": 2}
    assert notes == [
        {"n": 1},
        {"n": 2},
        {"n": 3},
        {"n": 4},
        {"n": 1},
        {"n": 2},
    ]
    resumed = [s for s in server.seen if s.method == "GET" and "last-event-id" in s.headers]
    assert len(resumed) >= 2


@pytest.mark.parametrize("event_store", [False, True])
async def test_server_killed_mid_stream_fails_the_call_promptly(event_store: bool) -> None:
    server = Server(event_store=InMemoryEventStore() if event_store else None)
    async with client_for(server) as client:
        transport = StreamableHTTPTransport(URL, client=client, default_retry_ms=20)
        async with transport, Peer(transport) as peer:
            assert await peer.request("echo", [1]) == [1]
            failures: list[BaseException] = []

            async def pending() -> None:
                try:
                    await peer.request("script", {"ops": ["note", "wait:never"]})
                except Exception as exc:
                    failures.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(pending)
                await wait_until(lambda: len(server.app.sessions.all()) == 1 and server.http_calls)
                await anyio.wait_all_tasks_blocked()  # the handler waits, the call is pending
                server.app.close()
            assert len(failures) == 1
            assert isinstance(failures[0], TransportError), repr(failures[0])
            with pytest.raises((TransportError, ConnectionClosed)):
                await peer.request("echo", [2])


# -- streamed results ---------------------------------------------------------------


async def test_request_stream_yields_results_in_order_and_ends() -> None:
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport) as peer:
                assert await peer.request("echo", ["open"]) == ["open"]
                got: list[Any] = [item async for item in peer.request_stream("count", {"to": 5})]
                assert got == [{"n": n} for n in range(1, 6)]
                # twice, to see the first one left nothing behind
                got = [item async for item in peer.request_stream("count", {"to": 2})]
                assert got == [{"n": 1}, {"n": 2}]
                assert peer._result_streams == {}


async def test_request_stream_resumes_after_the_server_closes_it_early() -> None:
    """Streamed results whose SSE stream the server closes early (with ``retry``) are
    resumed like any other stream: every result arrives once, none is lost."""
    server = Server(event_store=InMemoryEventStore(), retry_interval_ms=20)
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport) as peer:
                assert await peer.request("echo", ["open"]) == ["open"]
                got = [item async for item in peer.request_stream("count_closing", {"to": 4})]
    assert got == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]


async def test_request_stream_stateless() -> None:
    server = Server(sessions=None)
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport) as peer:
                got = [item async for item in peer.request_stream("count", {"to": 3})]
    assert got == [{"n": 1}, {"n": 2}, {"n": 3}]


async def test_leaving_request_stream_early_abandons_the_request() -> None:
    server = Server()
    async with client_for(server) as client:
        async with StreamableHTTPTransport(URL, client=client) as transport:
            async with Peer(transport, on_outgoing_cancel=cancel_hook) as peer:
                assert await peer.request("echo", ["open"]) == ["open"]
                got = []
                async with aclosing(peer.request_stream("forever")) as results:
                    async for item in results:
                        got.append(item)
                        if len(got) == 2:
                            break
                assert got == [{"n": 1}, {"n": 2}]
                assert peer._result_streams == {}
                # the server was told and stopped producing
                await wait_until(lambda: len(server.stream_finished) == 1)
                assert await peer.request("echo", ["after"]) == ["after"]
                # a plain ``break`` abandons it too, once the generator is finalized
                got = []
                async for item in peer.request_stream("forever"):
                    got.append(item)
                    if len(got) == 3:
                        break
                assert got == [{"n": 1}, {"n": 2}, {"n": 3}]
                await wait_until(lambda: len(server.stream_finished) == 2)
                assert peer._result_streams == {}
                assert await peer.request("echo", ["after"]) == ["after"]


# -- unreachable servers ------------------------------------------------------------


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_url_raises_transport_error_promptly() -> None:
    url = f"http://127.0.0.1:{closed_port()}/rpc"
    with anyio.fail_after(TIMEOUT):
        async with StreamableHTTPTransport(url, timeout=5) as transport, Peer(transport) as peer:
            with pytest.raises(TransportError):
                await peer.request("echo", [1])


async def test_unreachable_url_http_sse_raises_transport_error_promptly() -> None:
    url = f"http://127.0.0.1:{closed_port()}/sse"
    with anyio.fail_after(TIMEOUT), pytest.raises(TransportError):
        async with HTTPSSETransport(url, timeout=5):
            pass


async def test_http_sse_transport_round_trips_and_server_calls_client() -> None:
    server = Server(legacy_sse_path="/sse")
    async with client_for(server) as client:
        async with HTTPSSETransport(LEGACY_URL, client=client) as transport:
            assert transport.endpoint is not None
            assert transport.endpoint.startswith(BASE + "/messages?session_id=")
            async with Peer(transport, client_registry()) as peer:
                assert await peer.request("echo", {"x": 1}) == {"x": 1}
                assert await peer.request("ask", {"question": "q"}) == {"answer": "answer to q"}
                result = await server.peer.request("client/answer", {"question": "srv"})
                assert result == "answer to srv"
        await wait_until(lambda: len(server.app.sessions) == 0)


async def test_a_message_handed_to_a_waiting_reader_is_not_overtaken_by_a_direct_dispatch() -> None:
    """A notification handed straight to the waiting reader is in no buffer; an answer
    after it must still queue behind it, not be dispatched to its caller first (a
    progress callback sees every step before ``call_tool`` returns)."""
    from jsonrpc_core import Notification, Response, StreamableHTTPTransport

    transport = StreamableHTTPTransport("http://127.0.0.1:1/rpc")
    dispatched: list[Any] = []

    def dispatch(received: Any) -> bool:  # as the Peer: answers directly, the rest queued
        if isinstance(received.payload, Response):
            dispatched.append(received)
            return True
        return False

    transport._attach_dispatcher(dispatch)
    got: list[Any] = []

    async def reader() -> None:
        for _ in range(2):
            got.append((await transport.receive()).payload)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(reader)
            await anyio.wait_all_tasks_blocked()  # the reader waits on the empty stream
            await transport._deliver(Notification("note", {}))
            await transport._deliver(Response(1, "answer"))
    assert dispatched == []
    assert got == [Notification("note", {}), Response(1, "answer")]
