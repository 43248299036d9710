"""The core's hot path: quick HTTP answers written whole, SSE answers read in the calling
task, requests and answers handed over without a hop (the queues' own shortcuts are in
``test_core_handoff_queue``).

Each fast path has a test that shows it is taken and one that shows the slow path it
skips still behaves (slow handlers, disconnects, ordering, cancellation).

Tests the private units `jsonrpc_core._http_channel.Outbox`, `LazyEvent` and
`ServerChannel`, and the client transport's inline read (`_send_request`, `_inbound`), on
purpose: their fast paths are the point.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from _http_fixtures import ASGIPost, peer_app

from jsonrpc_core import (
    JsonRpcHTTPApp,
    MethodRegistry,
    Notification,
    NotificationType,
    Peer,
    Received,
    Request,
    RequestContext,
    RequestType,
    Response,
    StreamableHTTPTransport,
    TapRecord,
    WireTap,
)
from jsonrpc_core._http_channel import LazyEvent, Outbox, ServerChannel
from jsonrpc_core.http import DEFAULT_MAX_BODY_SIZE, SSEEvent, encode_event, read_body
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

ECHO = RequestType[Any, Any]("echo")
URL = "http://127.0.0.1/mcp"
SLOW = RequestType[Any, Any]("slow")
TIMEOUT = 10


# -- the HTTP server: quick answers written whole -----------------------------------------


def echo_registry(gate: anyio.Event | None = None) -> MethodRegistry:
    registry = MethodRegistry()

    @registry.method(ECHO)
    def echo(params: Any, ctx: RequestContext) -> Any:
        return ctx.raw_params

    @registry.method(SLOW)
    async def slow(params: Any, ctx: RequestContext) -> Any:
        assert gate is not None
        await gate.wait()
        return "late"

    return registry


def make_app(registry: MethodRegistry, *, json_response: bool) -> JsonRpcHTTPApp:
    return peer_app(registry, path="/mcp", json_response=json_response)


def in_process_client(app: Any) -> httpx.AsyncClient:
    """An HTTP client of ``app`` in this process (streamed, as over a socket)."""
    return httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1")


def rpc_over(http: httpx.AsyncClient) -> StreamableHTTPTransport:
    """A client transport to the app's ``/mcp`` over ``http``, with no standalone stream."""
    return StreamableHTTPTransport(URL, client=http, standalone_stream=False)


ECHO_BODY = b'{"jsonrpc":"2.0","id":7,"method":"echo","params":{"text":"hi"}}'
SLOW_BODY = b'{"jsonrpc":"2.0","id":8,"method":"slow"}'
ECHO_ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"text":"hi"}}'


async def echo_posted_when_warm(*, json_response: bool) -> ASGIPost:
    """An echo POST, answered by an app whose peer and worker were already up and idle."""
    app = make_app(echo_registry(), json_response=json_response)
    post = ASGIPost(ECHO_BODY, path="/mcp")
    async with app.running():
        await ASGIPost(ECHO_BODY, path="/mcp").run(app)  # the peer and a worker are up now
        await post.run(app)
    return post


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_quick_sse_answer_goes_out_in_one_body_message() -> None:
    post = await echo_posted_when_warm(json_response=False)
    assert [m["type"] for m in post.sent] == ["http.response.start", "http.response.body"]
    body = b": \n\nevent: message\ndata: " + ECHO_ANSWER + b"\n\n"
    assert post.body_messages[0]["body"] == body
    assert not post.body_messages[0].get("more_body", False)
    headers = dict(post.sent[0]["headers"])
    assert headers[b"content-type"] == b"text/event-stream"
    assert headers[b"content-length"] == str(len(body)).encode()  # sized, not chunked
    assert post.listens == 0  # complete before anything was written: no watcher


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_quick_json_answer_needs_no_disconnect_watcher() -> None:
    post = await echo_posted_when_warm(json_response=True)
    assert post.body_messages[-1]["body"] == ECHO_ANSWER
    assert post.listens == 0


async def test_quick_answers_are_the_same_bytes_on_every_backend() -> None:
    for json_response in (False, True):
        app = make_app(echo_registry(), json_response=json_response)
        post = ASGIPost(ECHO_BODY, path="/mcp")
        async with app.running():
            await post.run(app)
        body = b"".join(m.get("body", b"") for m in post.body_messages)
        expected = (
            ECHO_ANSWER
            if json_response
            else b": \n\nevent: message\ndata: " + ECHO_ANSWER + b"\n\n"
        )
        assert body == expected


async def test_slow_sse_answer_begins_at_once_and_ends_with_its_event() -> None:
    gate = anyio.Event()
    app = make_app(echo_registry(gate), json_response=False)
    post = ASGIPost(SLOW_BODY, path="/mcp")

    async def on_send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message.get("more_body"):
            gate.set()  # the stream has begun before the handler answered

    post.on_send = on_send
    async with app.running():
        await post.run(app)
    assert gate.is_set()
    assert [m["body"] for m in post.body_messages] == [
        b": \n\n",
        b'event: message\ndata: {"jsonrpc":"2.0","id":8,"result":"late"}\n\n',
    ]
    assert [m.get("more_body", False) for m in post.body_messages] == [True, False]
    assert b"content-length" not in dict(post.sent[0]["headers"])  # streamed
    assert post.listens == 1  # the client was watched while the handler ran


@pytest.mark.parametrize("json_response", [False, True])
async def test_disconnect_during_a_slow_answer_is_still_noticed(json_response: bool) -> None:
    gate = anyio.Event()
    seen: list[Any] = []
    registry = echo_registry(gate)

    @registry.method(RequestType[Any, Any]("watch"))
    async def watch(params: Any, ctx: RequestContext) -> Any:
        seen.append(ctx.info.disconnected)
        await gate.wait()
        return "late"

    app = make_app(registry, json_response=json_response)
    post = ASGIPost(b'{"jsonrpc":"2.0","id":9,"method":"watch"}', disconnect=True, path="/mcp")
    async with app.running():
        await post.run(app)  # returns although the handler has not answered
        assert len(seen) == 1 and seen[0].is_set()
        gate.set()
    assert all(b"late" not in m.get("body", b"") for m in post.body_messages)


# -- the Peer: direct hand-over keeps the order -------------------------------------------


async def test_request_does_not_overtake_a_notification_still_being_handled() -> None:
    order: list[str] = []
    gate = anyio.Event()
    registry = MethodRegistry()

    @registry.method(NotificationType[Any]("note"))
    async def note(params: Any, ctx: RequestContext) -> None:
        order.append("note begins")
        await gate.wait()
        order.append("note ends")

    @registry.method(ECHO)
    def echo(params: Any, ctx: RequestContext) -> Any:
        order.append("request")
        return params

    channel = ServerChannel(standalone=None)
    outbox = Outbox("s", json_mode=True)
    request = Request(1, "echo", {"n": 1})
    channel.route(request, outbox)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(Peer(channel, registry).run)
            await anyio.wait_all_tasks_blocked()
            await channel.deliver_inbound(Received(Notification("note", {})))
            await anyio.wait_all_tasks_blocked()
            await channel.deliver_inbound(Received(request))
            await anyio.wait_all_tasks_blocked()
            gate.set()
            await outbox.done.wait()
            channel.close_inbound()
    assert order == ["note begins", "note ends", "request"]


async def test_idle_peer_takes_a_request_without_the_inbound_queue() -> None:
    channel = ServerChannel(standalone=None)
    outbox = Outbox("s", json_mode=True)
    request = Request(1, "echo", {"n": 1})
    channel.route(request, outbox)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(Peer(channel, echo_registry()).run)
            await anyio.wait_all_tasks_blocked()
            await channel.deliver_inbound(Received(request))
            assert not channel._inbound.statistics().current_buffer_used  # handed to a worker
            await outbox.done.wait()
            channel.close_inbound()
    assert outbox.responses == [b'{"jsonrpc":"2.0","id":1,"result":{"n":1}}']


async def test_an_outbox_answered_before_anyone_waits_makes_no_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[object] = []
    real_event = anyio.Event

    class CountedEvent(real_event):  # type: ignore[misc,valid-type]
        def __new__(cls) -> Any:
            made.append(cls)
            return real_event()

    monkeypatch.setattr(anyio, "Event", CountedEvent)
    outbox = Outbox("s", json_mode=True)
    outbox.pending.add(1)
    await outbox.deliver(Response(1, "ok"), completes=1)
    assert outbox.first_message.is_set() and outbox.progressed.is_set() and outbox.done.is_set()
    await outbox.done.wait()  # set: a checkpoint, nothing to make
    assert made == []


async def test_a_lazy_event_wakes_the_task_that_waited_before_it_was_set() -> None:
    event = LazyEvent()
    woke: list[bool] = []

    async def waiter() -> None:
        await event.wait()
        woke.append(event.is_set())

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            assert woke == []
            event.set()
    assert woke == [True]


async def test_waiting_on_a_set_lazy_event_is_still_a_checkpoint() -> None:
    event = LazyEvent()
    event.set()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await event.wait()
        raise AssertionError("a cancelled wait must not return")  # pragma: no cover
    assert scope.cancelled_caught


# -- the HTTP client: an SSE answer read in the calling task ------------------------------


async def test_send_request_returns_with_the_sse_answer_in() -> None:
    app = make_app(echo_registry(), json_response=False)
    async with app.running():
        async with in_process_client(app) as http:
            async with rpc_over(http) as stream:
                with anyio.fail_after(TIMEOUT):
                    await stream._send_request(Request(3, "echo", {"x": 1}))
                received = stream._inbound.receive_nowait()  # no background reader needed
                assert received.payload.result == {"x": 1}  # type: ignore[union-attr]


async def test_cancelled_or_closed_inline_reads_end_the_call() -> None:
    gate = anyio.Event()
    app = make_app(echo_registry(gate), json_response=False)
    async with app.running():
        async with in_process_client(app) as http:
            stream = rpc_over(http)
            async with stream, Peer(stream) as peer:
                with anyio.fail_after(TIMEOUT):
                    async with anyio.create_task_group() as task_group:
                        task_group.start_soon(peer.request, SLOW)
                        await anyio.wait_all_tasks_blocked()
                        task_group.cancel_scope.cancel()  # cancelled while reading inline
                    assert await peer.request(ECHO, {"after": 1}) == {"after": 1}
                    failure: list[BaseException] = []

                    async def call() -> None:
                        try:
                            await peer.request(SLOW)
                        except Exception as exc:
                            failure.append(exc)

                    async with anyio.create_task_group() as task_group:
                        task_group.start_soon(call)
                        await anyio.wait_all_tasks_blocked()
                        await stream.aclose()  # stops the read in the caller's task
                    assert len(failure) == 1
            gate.set()


class LoggingTransport(StreamableHTTPTransport):
    """A subclass that overrides ``send`` and ``receive``: the fast paths must not skip them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[str] = []

    async def send(self, payload: Any, *, related_request_id: Any = None) -> None:
        self.log.append("send")
        await super().send(payload, related_request_id=related_request_id)

    async def receive(self) -> Received:
        received = await super().receive()
        self.log.append("receive")
        return received


async def test_wrappers_and_subclasses_see_every_message() -> None:
    app = make_app(echo_registry(), json_response=False)
    records: list[TapRecord] = []
    async with app.running():
        async with in_process_client(app) as http:
            with anyio.fail_after(TIMEOUT):
                inner = rpc_over(http)
                # TappedStream forwards unknown attributes to the stream it wraps.
                tapped = WireTap(records.append).wrap(
                    inner, local="client", remote="server", transport="http"
                )
                async with inner, Peer(tapped) as peer:
                    assert await peer.request(ECHO, {"n": 1}) == {"n": 1}
                subclassed = LoggingTransport(URL, client=http, standalone_stream=False)
                async with subclassed, Peer(subclassed) as peer:
                    assert await peer.request(ECHO, {"n": 2}) == {"n": 2}
    assert [r.direction for r in records] == ["send", "receive"]
    assert subclassed.log[:2] == ["send", "receive"]  # then the end of the stream


# -- SSE rendering ------------------------------------------------------------------------


@pytest.mark.parametrize("event_name", ["message", None])
@pytest.mark.parametrize("event_id", [None, "s:1"])
@pytest.mark.parametrize(
    "data", [b'{"a":1}', b"", b"two\nlines", b"cr\rhere", '{"t":"\u00e9\U0001f642"}'.encode()]
)
async def test_rendered_events_match_the_encoder(
    event_name: str | None, event_id: str | None, data: bytes
) -> None:
    outbox = Outbox("s", json_mode=False, event_name=event_name)
    for _ in range(2):  # the cached prefix too
        assert outbox.render(event_id, data) == encode_event(
            SSEEvent(data.decode("utf-8"), event_name, event_id)
        )


def open_ended_sse_app(*, answer_on: str) -> Callable[..., Awaitable[None]]:
    """A Streamable HTTP server that keeps an SSE stream open after the answer: on the
    POST itself (``answer_on="post"``), or, like the conformance suite's sse-retry
    scenario, on the GET that resumes a POST stream it closed after a priming event."""
    pending: list[Any] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive, DEFAULT_MAX_BODY_SIZE)
        headers = [(b"content-type", b"text/event-stream"), (b"session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if scope["method"] == "POST":
            request_id = json.loads(body)["id"]
            if answer_on == "post":
                answer = {"jsonrpc": "2.0", "id": request_id, "result": "done"}
                event = f"id: p1\ndata: {json.dumps(answer)}\n\n".encode()
                await send({"type": "http.response.body", "body": event, "more_body": True})
            else:
                pending.append(request_id)
                priming = b"id: p1\nretry: 10\ndata: \n\n"
                await send({"type": "http.response.body", "body": priming, "more_body": False})
                return
        else:
            answer = {"jsonrpc": "2.0", "id": pending.pop(), "result": "done"}
            event = f"id: g1\ndata: {json.dumps(answer)}\n\n".encode()
            await send({"type": "http.response.body", "body": event, "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass  # open until the client goes away

    return app


@pytest.mark.parametrize("answer_on", ["post", "resumed get"])
async def test_an_answer_on_a_stream_left_open_returns_to_the_caller(answer_on: str) -> None:
    app = open_ended_sse_app(answer_on=answer_on)
    async with in_process_client(app) as http:
        stream = rpc_over(http)
        async with stream, Peer(stream) as peer:
            with anyio.fail_after(TIMEOUT):
                assert await peer.request("work") == "done"
