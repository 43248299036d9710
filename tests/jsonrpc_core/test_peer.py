"""The bidirectional Peer over paired in-memory streams."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from jsonrpc_core import (
    ConnectionClosed,
    ErrorResponse,
    InternalError,
    InvalidParams,
    JsonRpcError,
    MemoryMessageStream,
    Message,
    MethodRegistry,
    Notification,
    NotificationType,
    Peer,
    Received,
    RequestContext,
    RequestId,
    RequestTimeout,
    RequestType,
    Response,
    ResultValidationError,
    ServerError,
    memory_pair,
    register_error,
)

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pair(
    server_registry: MethodRegistry, client_registry: MethodRegistry | None = None, **server_kw: Any
) -> AsyncIterator[tuple[Peer, Peer]]:
    a, b = memory_pair()
    async with Peer(b, server_registry, name="server", **server_kw) as server:
        async with Peer(a, client_registry, name="client") as client:
            yield client, server


@asynccontextmanager
async def raw_client(
    server_registry: MethodRegistry, **server_kw: Any
) -> AsyncIterator[MemoryMessageStream]:
    a, b = memory_pair()
    async with Peer(b, server_registry, name="server", **server_kw):
        yield a


class Point(BaseModel):
    x: int
    y: int


MOVE = RequestType("move", Point, Point)


async def test_typed_descriptors_validate_both_ends() -> None:
    registry = MethodRegistry()
    registry.on(MOVE, lambda p, ctx: Point(x=p.x + 1, y=p.y + 1))
    async with pair(registry) as (client, _):
        moved = await client.request(MOVE, Point(x=1, y=2))
        assert moved == Point(x=2, y=3)
        with pytest.raises(InvalidParams, match=r"params\.y"):
            await client.request(MOVE, {"x": 1})
        bad_result = RequestType("move", Point, int)
        with pytest.raises(ResultValidationError):
            await client.request(bad_result, {"x": 1, "y": 1})


async def test_nested_callbacks_in_both_directions() -> None:
    server_registry = MethodRegistry()
    client_registry = MethodRegistry()

    async def server_outer(params: Any, ctx: RequestContext) -> Any:
        inner = await ctx.peer.request("client/inner", {"depth": params["depth"]})
        return {"server": inner}

    async def client_inner(params: Any, ctx: RequestContext) -> Any:
        if params["depth"] == 0:
            return "bottom"
        deeper = await ctx.peer.request("server/outer", {"depth": params["depth"] - 1})
        return {"client": deeper}

    server_registry.on("server/outer", server_outer)
    client_registry.on("client/inner", client_inner)
    async with pair(server_registry, client_registry) as (client, server):
        with anyio.fail_after(5):
            result = await client.request("server/outer", {"depth": 2})
            # and the server can start calls of its own at the same time
            assert await server.request("client/inner", {"depth": 0}) == "bottom"
    assert result == {"server": {"client": {"server": {"client": {"server": "bottom"}}}}}


async def test_concurrency_limit_is_respected() -> None:
    registry = MethodRegistry()
    running = 0
    peak = 0
    release = anyio.Event()
    two_started = anyio.Event()

    async def slow(params: Any, ctx: RequestContext) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 2:
            two_started.set()
        await release.wait()
        running -= 1
        return 1

    registry.on("slow", slow)
    async with pair(registry, max_concurrency=2) as (client, _):
        results: list[int] = []

        async def call() -> None:
            results.append(await client.request("slow"))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(call)
                await two_started.wait()
                for _ in range(20):
                    await anyio.lowlevel.checkpoint()
                assert running == 2
                release.set()
    assert results == [1] * 6
    assert peak == 2


async def test_too_many_queued_requests_are_refused_at_once() -> None:
    registry = MethodRegistry()
    release = anyio.Event()
    first_started = anyio.Event()

    async def block(params: Any, ctx: RequestContext) -> str:
        first_started.set()
        await release.wait()
        return "done"

    registry.on("block", block)
    async with raw_client(registry, max_concurrency=1, max_queued=2) as stream:
        with anyio.fail_after(5):
            await stream.send_raw(b'{"jsonrpc":"2.0","id":0,"method":"block"}')
            await first_started.wait()
            # one running, two waiting: the fourth is refused at once
            for i in range(1, 4):
                await stream.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"block"}' % i)
            refused = (await stream.receive()).payload
            assert isinstance(refused, ErrorResponse)
            assert refused.id == 3
            assert isinstance(refused.error, ServerError)
            assert "overloaded" in refused.error.message
            release.set()
            done = {(await stream.receive()).payload.id for _ in range(3)}  # type: ignore[union-attr]
    assert done == {0, 1, 2}


async def test_cancelled_request_without_answer_when_protocol_says_so() -> None:
    registry = MethodRegistry()
    registry.on("sleep", lambda p, ctx: anyio.sleep_forever())
    registry.on("echo", lambda p, ctx: ctx.raw_params)

    def cancel(params: Any, ctx: RequestContext) -> None:
        ctx.peer.cancel_incoming(params["id"])

    registry.on(NotificationType("cancel"), cancel)
    async with raw_client(registry, answer_cancelled=False) as stream:
        with anyio.fail_after(5):
            await stream.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"sleep"}')
            await stream.send_raw(b'{"jsonrpc":"2.0","method":"cancel","params":{"id":1}}')
            await stream.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}')
            first = (await stream.receive()).payload
    assert isinstance(first, Response)
    assert first.id == 2


async def test_response_for_unknown_id_is_logged_and_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = MethodRegistry()
    registry.on("echo", lambda p, ctx: ctx.raw_params)
    with caplog.at_level(logging.WARNING, logger="jsonrpc_core.peer"):
        async with raw_client(registry) as stream:
            with anyio.fail_after(5):
                await stream.send_raw(b'{"jsonrpc":"2.0","id":999,"result":"stray"}')
                await stream.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}')
                answer = (await stream.receive()).payload
    assert isinstance(answer, Response) and answer.id == 1
    assert any("unknown request id 999" in r.getMessage() for r in caplog.records)


@register_error
class QuotaExceeded(JsonRpcError):
    code = -32099
    default_message = "Quota exceeded"


async def test_error_class_and_data_travel_to_the_caller() -> None:
    registry = MethodRegistry()

    def over_quota(params: Any, ctx: RequestContext) -> None:
        raise QuotaExceeded(data={"limit": 10, "used": 11})

    def grouped(params: Any, ctx: RequestContext) -> None:
        raise ExceptionGroup("from a task group", [InvalidParams("inner problem")])

    registry.on("quota", over_quota)
    registry.on("grouped", grouped)
    async with pair(registry) as (client, _):
        with pytest.raises(QuotaExceeded) as caught:
            await client.request("quota")
        assert caught.value.data == {"limit": 10, "used": 11}
        assert caught.value.code == -32099
        with pytest.raises(InvalidParams, match="inner problem"):
            await client.request("grouped")


async def test_unserialisable_result_becomes_internal_error() -> None:
    registry = MethodRegistry()
    registry.on("weird", lambda p, ctx: {"value": object()})
    registry.on("echo", lambda p, ctx: ctx.raw_params)
    async with pair(registry) as (client, _):
        with pytest.raises(InternalError, match="serialised"):
            await client.request("weird")
        assert await client.request("echo", [1]) == [1]


async def test_notifications_are_handled_in_order_and_never_answered() -> None:
    registry = MethodRegistry()
    seen: list[int] = []
    registry.on(NotificationType("tick"), lambda p, ctx: seen.append(p["n"]))
    registry.on("seen", lambda p, ctx: list(seen))
    async with pair(registry) as (client, _):
        for n in range(200):
            await client.notify("tick", {"n": n})
        assert await client.request("seen") == list(range(200))


async def test_failing_notification_handler_does_not_break_the_connection() -> None:
    registry = MethodRegistry()

    def explode(params: Any, ctx: RequestContext) -> None:
        raise RuntimeError("boom")

    registry.on(NotificationType("explode"), explode)
    registry.on(NotificationType("typed", Point), lambda p, ctx: None)
    registry.on("echo", lambda p, ctx: ctx.raw_params)
    async with pair(registry) as (client, _):
        await client.notify("explode")
        await client.notify("typed", {"x": "not a number"})
        assert await client.request("echo", [3]) == [3]


async def test_fallbacks_and_request_filter() -> None:
    registry = MethodRegistry()
    extension_calls: list[Any] = []
    registry.fallback = lambda params, ctx: {"fallback": ctx.method}
    registry.notification_fallback = lambda params, ctx: extension_calls.append(ctx.method)
    registry.on("echo", lambda p, ctx: ctx.raw_params)

    def only_echo_when_locked(request: Any, ctx: RequestContext) -> None:
        if request.method == "_locked":
            raise JsonRpcError("locked", code=-32042)

    async with pair(registry, request_filter=only_echo_when_locked) as (client, _):
        assert await client.request("_vendor/thing") == {"fallback": "_vendor/thing"}
        await client.notify("_vendor/note")
        with pytest.raises(JsonRpcError) as refused:
            await client.request("_locked")
        assert refused.value.code == -32042
    assert extension_calls == ["_vendor/note"]


async def test_timeouts_and_default_timeout() -> None:
    registry = MethodRegistry()
    registry.on("sleep", lambda p, ctx: anyio.sleep_forever())
    a, b = memory_pair()
    async with Peer(b, registry), Peer(a, request_timeout=0.05) as client:
        with pytest.raises(RequestTimeout, match="sleep"):
            await client.request("sleep")
        with pytest.raises(RequestTimeout):
            await client.request("sleep", timeout=0.05)


async def test_closing_fails_pending_and_later_calls() -> None:
    registry = MethodRegistry()
    registry.on("sleep", lambda p, ctx: anyio.sleep_forever())
    async with pair(registry) as (client, _):
        errors: list[BaseException] = []

        async def call() -> None:
            try:
                await client.request("sleep")
            except ConnectionClosed as exc:
                errors.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(call)
                await anyio.wait_all_tasks_blocked()  # all three requests are pending
                await client.aclose()
        assert len(errors) == 3
        assert client.closed
        with pytest.raises(ConnectionClosed):
            await client.notify("anything")


class RecordingStream:
    """Wraps a stream and records which request each sent message relates to."""

    def __init__(self, inner: MemoryMessageStream) -> None:
        self.inner = inner
        self.sent: list[tuple[str, RequestId | None]] = []
        self._sent_changed = anyio.Event()

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        label = getattr(payload, "method", type(payload).__name__)
        self.sent.append((label, related_request_id))
        await self.inner.send(payload, related_request_id=related_request_id)
        self._sent_changed.set()
        self._sent_changed = anyio.Event()

    async def wait_sent(self, entry: tuple[str, RequestId | None]) -> None:
        """Return once ``entry`` (label, related request id) has been sent."""
        while entry not in self.sent:
            await self._sent_changed.wait()

    async def receive(self) -> Received:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_messages_sent_by_a_handler_are_tied_to_its_request() -> None:
    registry = MethodRegistry()

    async def work(params: Any, ctx: RequestContext) -> str:
        await ctx.peer.notify("progress", {"done": 1})
        return "ok"

    registry.on("work", work)
    a, b = memory_pair()
    recording = RecordingStream(b)
    async with Peer(recording, registry) as server, Peer(a) as client:
        assert await client.request("work") == "ok"
        await server.notify("unrelated")
    assert ("progress", 1) in recording.sent
    assert ("Response", 1) in recording.sent
    assert ("unrelated", None) in recording.sent


async def test_outgoing_params_must_be_structured() -> None:
    a, _ = memory_pair()
    peer = Peer(a)
    with pytest.raises(TypeError):
        await peer.request("x", 5)
    with pytest.raises(TypeError):
        await peer.notify("x", "text")


async def test_cancel_hook_message_is_sent_when_a_call_is_abandoned() -> None:
    registry = MethodRegistry()
    cancelled: list[Any] = []
    registry.on("sleep", lambda p, ctx: anyio.sleep_forever())
    registry.on(NotificationType("cancelled"), lambda p, ctx: cancelled.append(p["id"]))
    registry.on("echo", lambda p, ctx: ctx.raw_params)
    a, b = memory_pair()

    def hook(request_id: RequestId, reason: str) -> Notification:
        return Notification("cancelled", {"id": request_id, "reason": reason})

    async with Peer(b, registry), Peer(a, on_outgoing_cancel=hook) as client:
        with anyio.move_on_after(0.05):
            await client.request("sleep")
        with pytest.raises(RequestTimeout):
            await client.request("sleep", timeout=0.05)
        assert await client.request("echo", [0]) == [0]
    assert cancelled == [1, 2]


async def test_late_answer_to_an_abandoned_request_is_not_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = anyio.Event()
    registry = MethodRegistry()
    registry.on("slow", lambda p, ctx: release.wait())
    registry.on("echo", lambda p, ctx: ctx.raw_params)
    a, b = memory_pair()
    server_stream = RecordingStream(b)
    with caplog.at_level(logging.WARNING, logger="jsonrpc_core.peer"):
        async with Peer(server_stream, registry), Peer(a) as client:
            with pytest.raises(RequestTimeout):
                await client.request("slow", timeout=0.01)
            release.set()
            with anyio.fail_after(5):
                await server_stream.wait_sent(("Response", 1))
            # The late answer is on the pipe ahead of the echo's answer and the client reads
            # in order, so once the echo is answered the late answer has been handled.
            assert await client.request("echo", [1]) == [1]
    assert ("Response", 1) in server_stream.sent
    assert not [r for r in caplog.records if "unknown request id" in r.getMessage()]


async def test_peer_turns_error_codes_into_its_protocols_classes() -> None:
    from jsonrpc_core import STANDARD_ERRORS, ErrorTable

    table = ErrorTable("test", parent=STANDARD_ERRORS)

    @table.register
    class Busy(JsonRpcError):
        code = -32077

    registry = MethodRegistry()

    def busy(params: Any, ctx: RequestContext) -> None:
        raise JsonRpcError("busy now", code=-32077, data={"retry": 1})

    registry.on("busy", busy)
    a, b = memory_pair()
    async with Peer(b, registry), Peer(a, errors=table) as client:
        with pytest.raises(Busy) as caught:
            await client.request("busy")
    assert caught.value.data == {"retry": 1}


async def test_errors_from_the_other_side_are_marked_received() -> None:
    registry = MethodRegistry()

    def refuse(params: Any, ctx: RequestContext) -> None:
        raise InvalidParams("no")

    registry.on("refuse", refuse)
    async with pair(registry) as (client, _):
        with pytest.raises(InvalidParams) as caught:
            await client.request("refuse")
    assert caught.value.received
    assert not InvalidParams("raised here").received
