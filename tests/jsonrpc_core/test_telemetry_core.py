"""OpenTelemetry in the protocol-neutral core: a SERVER span's parent is only the trace
context its message carries (never what the worker task running the handler has
current), and the CLIENT span of `Peer.request_stream` (one span per stream, its items
as events, ended when the stream ends, fails or is abandoned)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _http_fixtures import BASE, HTTPTestServer, client_for, count_to
from _otel import Recorded, child_of, otel
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, StatusCode

from jsonrpc_core import (
    InvalidParams,
    MethodRegistry,
    Notification,
    NotificationType,
    Peer,
    StreamableHTTPTransport,
    memory_pair,
)
from jsonrpc_core.telemetry import TelemetryConventions

pytestmark = pytest.mark.anyio

__all__ = ["otel"]

CLIENT, SERVER = SpanKind.CLIENT, SpanKind.SERVER
TRACE_A, SPAN_A = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
TRACE_B, SPAN_B = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


def hex_ids(span: Any) -> tuple[str, str | None]:
    """A span's trace id and its parent's span id, as hex."""
    parent = f"{span.parent.span_id:016x}" if span.parent is not None else None
    return f"{span.context.trace_id:032x}", parent


def worker_registry() -> MethodRegistry:
    registry = MethodRegistry()

    async def work(params: Any, ctx: Any) -> Any:
        # An outgoing call from the handler: its CLIENT span is a child of this
        # request's SERVER span, whichever request the worker served before.
        await ctx.peer.request("client/echo", {"tag": params["tag"]})
        return params["tag"]

    registry.on("work", work)
    return registry


async def test_a_server_span_has_only_its_messages_context_as_parent(otel: Recorded) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    client_end, server_end = memory_pair()
    echo = MethodRegistry()
    echo.on("client/echo", lambda params, ctx: params)
    # The caller is not traced: the trace context of each message is exactly what the
    # test puts in its ``_meta``.
    client = Peer(client_end, echo, name="caller")
    # One worker serves every request, one after the other.
    server = Peer(
        server_end,
        worker_registry(),
        name="served",
        max_concurrency=1,
        telemetry=TelemetryConventions("server"),
    )
    async with anyio.create_task_group() as task_group:
        # The server runs (and starts its worker) while a span is current: the worker
        # task inherits it as its ambient context.
        with tracer.start_as_current_span("ambient", context=Context()) as ambient:
            task_group.start_soon(server.run)
        async with client:
            a = {"tag": "a", "_meta": {"traceparent": traceparent(TRACE_A, SPAN_A)}}
            b = {"tag": "b", "_meta": {"traceparent": traceparent(TRACE_B, SPAN_B)}}
            assert await client.request("work", a) == "a"
            assert await client.request("work", b) == "b"
            assert await client.request("work", {"tag": "c"}) == "c"
            assert await client.request("work", {"tag": "d", "_meta": {}}) == "d"
        task_group.cancel_scope.cancel()
    served = otel.named("work", SERVER)
    assert len(served) == 4
    first, second, third, fourth = sorted(served, key=lambda s: s.start_time or 0)
    assert hex_ids(first) == (TRACE_A, SPAN_A)
    assert hex_ids(second) == (TRACE_B, SPAN_B)
    # A message without a trace context starts a trace of its own, under no span.
    ambient_trace = f"{ambient.get_span_context().trace_id:032x}"
    roots = {hex_ids(span)[0] for span in (third, fourth)}
    for span in (third, fourth):
        assert span.parent is None, span.attributes
    assert len(roots) == 2 and not roots & {TRACE_A, TRACE_B, ambient_trace}
    # Each handler's outgoing call continues its own request's span.
    callbacks = sorted(otel.named("client/echo", CLIENT), key=lambda s: s.start_time or 0)
    assert len(callbacks) == 4
    for callback, handled in zip(callbacks, (first, second, third, fourth), strict=True):
        assert child_of(callback, handled)


# -- the client side of request_stream ---------------------------------------------------

STREAMING = frozenset({"count", "endless", "fails"})
URL = BASE + "/rpc"


class StreamingServer(HTTPTestServer):
    """`HTTPTestServer` with methods answered by a stream of results over SSE."""

    def __init__(self) -> None:
        self.abandoned = anyio.Event()
        super().__init__(streaming_methods=STREAMING)

    def registry(self) -> MethodRegistry:
        registry = super().registry()
        server = self

        async def endless(params: Any, ctx: Any) -> AsyncIterator[Any]:
            async def results() -> AsyncGenerator[Any, None]:
                try:
                    for n in range(100_000):  # bounded; the reader leaves after two
                        yield {"n": n + 1}
                        await anyio.lowlevel.checkpoint()
                finally:
                    server.abandoned.set()

            return results()

        async def fails(params: Any, ctx: Any) -> AsyncIterator[Any]:
            async def results() -> AsyncGenerator[Any, None]:
                yield {"n": 1}
                raise InvalidParams("no second result")

            return results()

        def cancel(params: Any, ctx: Any) -> None:
            ctx.peer.cancel_incoming(params["requestId"])

        registry.on("count", count_to)
        registry.on("endless", endless)
        registry.on("fails", fails)
        registry.on(NotificationType("$/cancel_request"), cancel)
        return registry


def cancel_hook(request_id: Any, reason: str) -> Notification:
    """How the client tells the server it abandoned a request."""
    return Notification("$/cancel_request", {"requestId": request_id})


async def test_request_stream_is_one_client_span_with_an_event_per_result(
    otel: Recorded,
) -> None:
    server = StreamingServer()
    async with client_for(server) as http:
        async with StreamableHTTPTransport(URL, client=http) as transport:
            telemetry = TelemetryConventions("client")
            async with Peer(transport, on_outgoing_cancel=cancel_hook, telemetry=telemetry) as peer:
                assert await peer.request("echo", ["open"]) == ["open"]  # the session
                got = [item async for item in peer.request_stream("count", {"to": 3})]
                assert got == [{"n": 1}, {"n": 2}, {"n": 3}]
                seen = []
                async with aclosing(peer.request_stream("endless")) as results:
                    async for item in results:
                        seen.append(item)
                        if len(seen) == 2:
                            break
                with anyio.fail_after(10):
                    await server.abandoned.wait()
                failed = []
                with pytest.raises(InvalidParams):
                    async for item in peer.request_stream("fails", {}):
                        failed.append(item)
                assert failed == [{"n": 1}]
    streams = [span for span in otel.spans() if span.name in STREAMING]
    assert [span.name for span in streams] == ["count", "endless", "fails"]
    for span, items in zip(streams, (3, 2, 1), strict=True):
        assert span.kind is CLIENT and span.end_time is not None
        assert span.attributes is not None
        assert span.attributes["rpc.method"] == span.name
        assert isinstance(span.attributes["jsonrpc.request.id"], str)
        assert [event.name for event in span.events] == [f"{span.name} result"] * items
    counted, abandoned, broken = streams
    # A stream that ends, and one its reader leaves early, are no errors.
    for span in (counted, abandoned):
        assert span.status.status_code is StatusCode.UNSET
        assert "error.type" not in (span.attributes or {})
    # The peer's error ends the stream and is recorded with its code.
    assert broken.attributes is not None
    assert broken.attributes["error.type"] == str(InvalidParams.code)
    assert broken.attributes["rpc.response.status_code"] == str(InvalidParams.code)
    assert broken.status.status_code is StatusCode.ERROR
    # One duration measurement per stream.
    durations = otel.histograms()["jsonrpc.client.operation.duration"]
    measured = [point for point in durations if point.attributes["rpc.method"] in STREAMING]
    assert sum(point.count for point in measured) == 3
