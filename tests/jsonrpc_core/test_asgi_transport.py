from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, TypeVar, cast

import anyio
import anyio.lowlevel
import httpx
import pytest

from jsonrpc_core.testing import (
    ASGIApp,
    ASGIMessage,
    ASGIReceive,
    ASGIScope,
    ASGISend,
    StreamingASGITransport,
)

pytestmark = pytest.mark.anyio

BASE_URL = "http://testserver"

T = TypeVar("T")


def client_for(app: ASGIApp, **kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=StreamingASGITransport(app, **kwargs), base_url=BASE_URL)


def closing(iterator: AsyncIterator[T]) -> aclosing[AsyncGenerator[T, None]]:
    """Close httpx's ``aiter_*`` generators deterministically when breaking out early."""
    return aclosing(cast(AsyncGenerator[T, None], iterator))


async def read_body(receive: ASGIReceive) -> bytes:
    body = b""
    while True:
        message = await receive()
        assert message["type"] == "http.request"
        body += bytes(message.get("body", b""))
        if not message.get("more_body", False):
            return body


async def send_json(send: ASGISend, payload: Any, status: int = 200) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(handler: ASGIApp) -> ASGIApp:
    """``handler`` for HTTP requests; any other scope (lifespan) returns at once."""

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "http":
            await handler(scope, receive, send)

    return app


async def lifespan_error(app: ASGIApp, match: str) -> pytest.ExceptionInfo[RuntimeError]:
    """The error opening (and closing) a transport on ``app`` raises."""
    with pytest.raises(RuntimeError, match=match) as excinfo:
        async with StreamingASGITransport(app):
            pass
    return excinfo


async def start_body(send: ASGISend, *chunks: bytes) -> None:
    """Start a 200 response without headers and send ``chunks``, more body to follow."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for chunk in chunks:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})


class Ending:
    """How an app's request ended: ``observed`` holds the types of the messages the app
    received after the request body, ``finished`` is set once the app returned."""

    def __init__(self) -> None:
        self.observed: list[str] = []
        self.finished = anyio.Event()

    def app(self, handler: ASGIApp) -> ASGIApp:
        """``handler`` for HTTP requests, called once the request body was read."""

        @http_app
        async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
            try:
                await read_body(receive)
                await handler(scope, receive, send)
            finally:
                self.finished.set()

        return app

    async def observe(self, receive: ASGIReceive) -> None:
        self.observed.append((await receive())["type"])

    async def assert_disconnected(self) -> None:
        """The app ends (within 5 s) having received only ``http.disconnect``."""
        with anyio.fail_after(5):
            await self.finished.wait()
        assert self.observed == ["http.disconnect"]


async def http_only(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
    # Like many minimal apps: no lifespan support at all.
    assert scope["type"] == "http"
    await read_body(receive)
    await send_json(send, {"ok": True})


# --- plain request/response ------------------------------------------------------


async def test_plain_json_app() -> None:
    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        body = await read_body(receive)
        await send_json(send, {"method": scope["method"], "echo": json.loads(body or b"null")})

    async with client_for(app) as client:
        response = await client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {
            "method": "POST",
            "echo": {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        }
        # The same client handles several requests, also concurrently.
        results: list[int] = []

        async def get() -> None:
            results.append((await client.get("/")).status_code)

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(get)
        assert results == [200] * 5


async def test_scope_carries_method_path_query_headers() -> None:
    scopes: list[ASGIScope] = []

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "http":
            scopes.append(scope)
            await send_json(send, {})

    async with client_for(app, client=("10.0.0.7", 4567), root_path="/api") as client:
        await client.request(
            "PATCH", "/api/p%20ath/x?q=1&r=a%20b", headers={"X-Custom": "Yes", "Accept": "a/b"}
        )
        await client.get("https://example.org:8443/")

    scope = scopes[0]
    assert scope["type"] == "http"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.3"}
    assert scope["http_version"] == "1.1"
    assert scope["method"] == "PATCH"
    assert scope["scheme"] == "http"
    assert scope["path"] == "/api/p ath/x"
    assert scope["raw_path"] == b"/api/p%20ath/x"
    assert scope["query_string"] == b"q=1&r=a%20b"
    assert scope["root_path"] == "/api"
    assert scope["client"] == ("10.0.0.7", 4567)
    assert scope["server"] == ("testserver", 80)
    headers = scope["headers"]
    assert all(name == name.lower() for name, _ in headers)
    assert (b"host", b"testserver") in headers
    assert (b"x-custom", b"Yes") in headers
    assert (b"accept", b"a/b") in headers

    assert scopes[1]["scheme"] == "https"
    assert scopes[1]["server"] == ("example.org", 8443)
    assert (b"host", b"example.org:8443") in scopes[1]["headers"]


async def test_head_response_has_no_body() -> None:
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "http":
            await send_json(send, {"big": "x" * 100})

    async with client_for(app) as client:
        response = await client.head("/")
        assert response.status_code == 200
        assert response.content == b""


# --- streaming responses -----------------------------------------------------------


async def test_sse_stream_closed_early_disconnects_app() -> None:
    ending = Ending()

    async def handler(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )

        async def produce() -> None:
            n = 0
            while True:
                n += 1
                event = f"id: {n}\ndata: event {n}\n\n".encode()
                await send({"type": "http.response.body", "body": event, "more_body": True})
                await anyio.sleep(0.01)  # paced on purpose: an endless stream, not a flood

        async with anyio.create_task_group() as tg:
            tg.start_soon(produce)
            await ending.observe(receive)
            tg.cancel_scope.cancel()

    async with client_for(ending.app(handler)) as client:
        data_lines: list[str] = []
        async with client.stream("GET", "/mcp", headers={"accept": "text/event-stream"}) as resp:
            assert resp.status_code == 200
            assert resp.headers["content-type"] == "text/event-stream"
            async with closing(resp.aiter_lines()) as lines:
                async for line in lines:
                    if line.startswith("data:"):
                        data_lines.append(line)
                        if len(data_lines) == 3:
                            break
        assert data_lines == ["data: event 1", "data: event 2", "data: event 3"]
        await ending.assert_disconnected()


async def test_app_ignoring_disconnect_does_not_block_and_is_cancelled_on_exit() -> None:
    sends_after_close = 0
    closed = False
    many_sends_after_close = anyio.Event()
    cancelled = anyio.Event()

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        nonlocal sends_after_close
        await start_body(send)
        try:
            while True:
                # Never calls receive(); sends must not block after the close.
                await send({"type": "http.response.body", "body": b"x" * 10, "more_body": True})
                if closed:
                    sends_after_close += 1
                    if sends_after_close == 50:
                        many_sends_after_close.set()
                await anyio.lowlevel.checkpoint()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    with anyio.fail_after(5):
        async with client_for(app) as client:
            async with client.stream("GET", "/") as response:
                async with closing(response.aiter_raw()) as chunks:
                    async for chunk in chunks:
                        assert chunk == b"x" * 10
                        # Let the app fill the buffer and block in send().
                        await anyio.wait_all_tasks_blocked()
                        break
            closed = True
            await many_sends_after_close.wait()
        assert cancelled.is_set()


async def test_slow_consumer_applies_backpressure() -> None:
    sent = 0
    all_sent = anyio.Event()

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        nonlocal sent
        await start_body(send)
        for i in range(100):
            await send({"type": "http.response.body", "body": b"%03d" % i, "more_body": True})
            sent += 1
        await send({"type": "http.response.body", "body": b""})
        all_sent.set()

    async with client_for(app) as client:
        async with client.stream("GET", "/") as response:
            await anyio.wait_all_tasks_blocked()  # the app has sent until the buffer is full
            assert 0 < sent <= 20  # bounded by the buffer, not by the body size
            body = b"".join([chunk async for chunk in response.aiter_raw()])
        assert body == b"".join(b"%03d" % i for i in range(100))
        with anyio.fail_after(5):
            await all_sent.wait()


async def test_receive_after_complete_response_returns_disconnect() -> None:
    messages: list[ASGIMessage] = []
    done = anyio.Event()

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await read_body(receive)
        await send_json(send, [1, 2])
        messages.append(await receive())
        done.set()

    async with client_for(app) as client:
        response = await client.get("/")
        assert response.json() == [1, 2]
        with anyio.fail_after(5):
            await done.wait()
    assert messages == [{"type": "http.disconnect"}]


async def test_chunks_are_delivered_as_sent() -> None:
    release = anyio.Event()

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await start_body(send, b"first")
        await release.wait()
        await send({"type": "http.response.body", "body": b"second", "more_body": False})

    async with client_for(app) as client:
        with anyio.fail_after(5):
            async with client.stream("GET", "/") as response:
                async with closing(response.aiter_raw()) as chunks:
                    assert await chunks.__anext__() == b"first"
                    release.set()
                    assert [chunk async for chunk in chunks] == [b"second"]


# --- request bodies ------------------------------------------------------------------


async def test_streaming_request_body_arrives_in_chunks() -> None:
    received: list[tuple[bytes, bool]] = []
    first_chunk_seen = anyio.Event()

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        while True:
            message = await receive()
            received.append((message["body"], message["more_body"]))
            first_chunk_seen.set()
            if not message["more_body"]:
                break
        await send_json(send, {"chunks": len(received)})

    async def body() -> AsyncIterator[bytes]:
        yield b"alpha"
        # Produced only after the app saw the first chunk: the transport must
        # not read ahead before delivering it.
        await first_chunk_seen.wait()
        yield b"beta"
        yield b"gamma"

    async with client_for(app) as client:
        with anyio.fail_after(5):
            response = await client.post("/upload", content=body())
    assert response.json() == {"chunks": 4}
    assert received == [(b"alpha", True), (b"beta", True), (b"gamma", True), (b"", False)]


async def test_fixed_body_arrives_in_one_message() -> None:
    received: list[ASGIMessage] = []

    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        received.append(await receive())
        await send_json(send, None)

    async with client_for(app) as client:
        await client.post("/", content=b"payload")
        await client.get("/")
    assert received == [
        {"type": "http.request", "body": b"payload", "more_body": False},
        {"type": "http.request", "body": b"", "more_body": False},
    ]


# --- errors ------------------------------------------------------------------------


class Boom(Exception):
    pass


async def test_exception_before_response_start_propagates() -> None:
    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        raise Boom("before start")

    async with client_for(app) as client:
        with pytest.raises(Boom, match="before start"):
            await client.get("/")
        # The transport is still usable afterwards.
        with pytest.raises(Boom):
            await client.get("/")


async def test_exception_after_response_start_ends_body_with_read_error() -> None:
    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await start_body(send, b"partial")
        raise Boom("after start")

    async with client_for(app) as client:
        async with client.stream("GET", "/") as response:
            assert response.status_code == 200
            chunks: list[bytes] = []
            with pytest.raises(httpx.ReadError) as excinfo:
                async for chunk in response.aiter_raw():
                    chunks.append(chunk)
            assert chunks == [b"partial"]
            assert isinstance(excinfo.value.__cause__, Boom)


async def test_app_returning_without_response_is_an_error() -> None:
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        return

    async with client_for(app) as client:
        with pytest.raises(RuntimeError, match=r"http\.response\.start"):
            await client.get("/")


async def test_app_returning_with_incomplete_body_is_a_read_error() -> None:
    @http_app
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await start_body(send, b"x")

    async with client_for(app) as client:
        with pytest.raises(httpx.ReadError, match="without completing"):
            await client.get("/")


async def test_transport_must_be_opened() -> None:
    client = httpx.AsyncClient(transport=StreamingASGITransport(http_only), base_url=BASE_URL)
    with pytest.raises(RuntimeError, match="not open"):
        await client.get("/")


# --- lifespan ------------------------------------------------------------------------


async def test_lifespan_startup_and_shutdown_run() -> None:
    events: list[str] = []

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                events.append(message["type"])
                if message["type"] == "lifespan.startup":
                    scope["state"]["db"] = "connected"
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await send_json(send, {"db": scope["state"]["db"]})

    transport = StreamingASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        assert events == ["lifespan.startup"]
        assert (await client.get("/")).json() == {"db": "connected"}
    assert events == ["lifespan.startup", "lifespan.shutdown"]


async def test_lifespan_unsupported_app_is_tolerated() -> None:
    async with client_for(http_only) as client:
        assert (await client.get("/")).json() == {"ok": True}


async def test_lifespan_startup_failure_raises() -> None:
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        assert scope["type"] == "lifespan"
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database"})

    await lifespan_error(app, "no database")


async def test_lifespan_exception_during_startup_raises() -> None:
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await receive()
        raise Boom("startup crashed")

    excinfo = await lifespan_error(app, "lifespan startup")
    assert isinstance(excinfo.value.__cause__, Boom)


async def test_lifespan_shutdown_failure_raises() -> None:
    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.failed", "message": "flush failed"})

    await lifespan_error(app, "flush failed")


async def test_transport_can_be_reopened() -> None:
    startups = 0

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        nonlocal startups
        if scope["type"] == "lifespan":
            await receive()
            startups += 1
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send_json(send, startups)

    transport = StreamingASGITransport(app)
    for expected in (1, 2):
        async with transport:
            client = httpx.AsyncClient(transport=transport, base_url=BASE_URL)
            assert (await client.get("/")).json() == expected


# --- cancellation --------------------------------------------------------------------


async def test_cancelled_request_disconnects_app() -> None:
    ending = Ending()

    async def handler(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        # Wait for the client instead of ever responding.
        await ending.observe(receive)
        # Sending to a client that went away is dropped, not an error.
        await send_json(send, "too late")

    async with client_for(ending.app(handler)) as client:
        with anyio.move_on_after(0.05) as scope:
            await client.get("/")
        assert scope.cancelled_caught
        await ending.assert_disconnected()


async def test_cancelled_during_lifespan_startup() -> None:
    cancelled = anyio.Event()

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        await receive()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    with anyio.fail_after(5):
        with anyio.move_on_after(0.05) as scope:
            async with StreamingASGITransport(app):
                pytest.fail("startup never completes")
    assert scope.cancelled_caught
    assert cancelled.is_set()


async def test_error_in_client_code_still_shuts_down() -> None:
    events: list[str] = []

    async def app(scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            events.append((await receive())["type"])
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send_json(send, None)

    with pytest.raises(Boom):
        async with client_for(app) as client:
            await client.get("/")
            raise Boom
    assert events == ["lifespan.shutdown"]
