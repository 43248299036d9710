"""Writing SSE responses: the server's streams, their priming and their resumption.

`SSEWriter` writes one outbox's queue as an SSE response (the answer to a POST, the
standalone stream, the HTTP+SSE event stream) and resumes a stored stream from a
``Last-Event-ID``. `DisconnectWatch` guards a block against the client leaving, and
`stream_route_events` writes the events of an extra route's `SSEResponse`.

Rules (module rule 5 of ``_http_server``):

1. A stream that is complete before its response starts is written whole, with a
   ``Content-Length`` and no disconnect watcher; otherwise the response starts at once
   (a priming event where there is an event store, else a comment) and the client is
   watched until it ends.
2. The events already queued when the queue is looked at go out together, in one body
   message (at most `COALESCE_EVENTS` of them, `COALESCE_BYTES` or so); none waits
   for a later one.
3. A resumption attaches to the live outbox first and replays the store second, so
   nothing stored meanwhile is lost, and skips the replayed ids from the live queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from ._http_channel import Outbox
from ._http_common import ASGIReceive, ASGISend, HTTPError, SSEResponse
from ._http_sessions import HTTPSession
from ._sse import SSEEvent, encode_comment, encode_event

if TYPE_CHECKING:
    from ._event_store import EventStore

__all__ = [
    "COALESCE_BYTES",
    "COALESCE_EVENTS",
    "DisconnectWatch",
    "EventQueue",
    "SSEWriter",
    "body_chunk",
    "stream_route_events",
    "wait_or_disconnect",
    "watch_for",
]

_SSE_HEADERS = {
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
}

COALESCE_EVENTS = 16
COALESCE_BYTES = 64 * 1024
"""Queued SSE events joined into one body message: at most this many, this many bytes
or so (the event that crosses the byte bound still goes in)."""

_COMMENT = encode_comment()

EventQueue = MemoryObjectReceiveStream[tuple[str | None, bytes]]


def body_chunk(data: bytes) -> dict[str, Any]:
    """An ASGI body message that more body follows."""
    return {"type": "http.response.body", "body": data, "more_body": True}


def _sse_headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    raw_headers = [(b"content-type", b"text/event-stream")]
    for name, value in {**_SSE_HEADERS, **headers}.items():
        raw_headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    return raw_headers


class SSEWriter:
    """Writes the server's SSE streams (see module rules).

    ``retry_interval_ms`` goes out in priming events and after a stream the server
    closed early; ``event_name`` names the events of a replayed stream that has ended.
    """

    def __init__(self, *, retry_interval_ms: int | None, event_name: str | None) -> None:
        self.retry_interval_ms = retry_interval_ms
        self.event_name = event_name

    async def write(
        self,
        send: ASGISend,
        receive: ASGIReceive,
        outbox: Outbox,
        queue: EventQueue,
        headers: dict[str, str],
        *,
        generation: int,
        prime: bool,
        priming_id: str | None = None,
        before: Sequence[bytes] = (),
        skip_ids: frozenset[str] = frozenset(),
        disconnected: anyio.Event | None = None,
        watched: bool = False,
    ) -> None:
        """Stream ``queue`` (consumer ``generation`` of ``outbox``) as SSE; ``prime``
        starts with an id-only event (``priming_id`` if one was stored already) when
        there is an event store. ``watched``: the caller guards this call with a
        `DisconnectWatch` of its own (`watch_for` of ``outbox``), so none is started here."""
        raw_headers = _sse_headers(headers)
        # Everything is queued already (a quick answer): write it all at once, with
        # nothing left to watch the client for.
        complete = outbox.done.is_set() and not outbox.standalone
        watch = DisconnectWatch(
            receive, _disconnect_handler(outbox, disconnected), enabled=not (complete or watched)
        )
        async with watch:
            if not complete:
                await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            # The stream begins at once (priming event or comment), then goes on with
            # every event as soon as it is queued (rule 2). The last events also end
            # the response.
            pending = [await self._opening(outbox, prime, priming_id), *before]
            if not complete:
                await send(body_chunk(b"".join(pending)))
                pending.clear()
            await _drain(send, queue, pending, skip_ids, complete=complete)
            if not outbox.ended_normally(generation) and self.retry_interval_ms is not None:
                # Closed early by the server: tell the client when to resume.
                pending.append(f"retry: {self.retry_interval_ms}\n\n".encode())
            body = b"".join(pending)
            if complete:
                # The whole stream is known: one sized body, no chunked framing.
                raw_headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _opening(self, outbox: Outbox, prime: bool, priming_id: str | None) -> bytes:
        """The first event of a stream: the priming event if it is stored, else a comment."""
        store = outbox.event_store
        if not prime or store is None:
            return _COMMENT
        if priming_id is None:
            priming_id = await store.append(outbox.stream_id, b"")
        return encode_event(SSEEvent("", None, priming_id, self.retry_interval_ms))

    async def resume(
        self,
        send: ASGISend,
        receive: ASGIReceive,
        session: HTTPSession,
        last_event_id: str,
        store: EventStore,
    ) -> None:
        """Replay ``session``'s stream after ``last_event_id`` from ``store``, then go on
        with it live if it has not ended (rule 3)."""
        if not last_event_id.startswith(session.id + "."):
            # Another session's stream (or not ours at all): never replay across sessions.
            raise HTTPError(404, "Unknown Last-Event-ID: nothing to resume")
        outbox = _find_outbox(session, last_event_id)
        # Attach first, replay second: anything stored meanwhile is in both, and the
        # replayed ids are skipped from the live queue.
        queue = outbox.attach(with_backlog=False) if outbox is not None else None
        replay = await store.replay_after(last_event_id)
        if replay is None:
            if outbox is not None:
                outbox.detach()
            raise HTTPError(404, "Unknown Last-Event-ID: nothing to resume")
        if outbox is None:
            # The stream already ended: replay what is stored, then end normally.
            outbox = Outbox(replay.stream_id, json_mode=False, event_name=self.event_name)
            outbox.finish()
            queue = outbox.attach(with_backlog=False)
        assert queue is not None
        generation = outbox.generation
        events = [outbox.render(event_id, data) for event_id, data in replay.events if data]
        skip = frozenset(event_id for event_id, _ in replay.events)
        session.active_requests += 1
        try:
            await self.write(
                send,
                receive,
                outbox,
                queue,
                {},
                generation=generation,
                prime=False,
                before=events,
                skip_ids=skip,
            )
        finally:
            outbox.detach_if_current(generation)
            session.active_requests -= 1
            session.touch()


def watch_for(
    outbox: Outbox, receive: ASGIReceive, disconnected: anyio.Event | None, *, enabled: bool
) -> DisconnectWatch:
    """The watch (if ``enabled``) of a response that writes ``outbox``: a client that
    leaves before the outbox is done sets ``disconnected`` (its handler stops), and the
    block is cancelled."""
    return DisconnectWatch(receive, _disconnect_handler(outbox, disconnected), enabled=enabled)


def _disconnect_handler(
    outbox: Outbox, disconnected: anyio.Event | None
) -> Callable[[], None] | None:
    if disconnected is None:
        return None

    def on_disconnect() -> None:
        if not outbox.done.is_set():
            disconnected.set()

    return on_disconnect


async def _drain(
    send: ASGISend,
    queue: EventQueue,
    pending: list[bytes],
    skip_ids: frozenset[str],
    *,
    complete: bool,
) -> None:
    """Send ``queue``'s events as they come (rule 2) until it ends; what is still in
    ``pending`` then is for the caller to send, with the end of the response."""
    async with queue:
        receive_nowait = queue.receive_nowait
        size = 0  # bytes in pending (events not sent yet)
        while True:
            try:
                event_id, data = receive_nowait()
            except anyio.WouldBlock:
                if pending:
                    await send(body_chunk(b"".join(pending)))
                    pending.clear()
                    size = 0
                try:
                    event_id, data = await queue.receive()
                except anyio.EndOfStream:
                    break
            except anyio.EndOfStream:
                break
            if event_id is not None and event_id in skip_ids:
                continue
            if not complete and (len(pending) >= COALESCE_EVENTS or size >= COALESCE_BYTES):
                # Bounded, so that a transport whose back-pressure counts body
                # messages (not bytes) still holds a stalled reader's backlog down.
                await send(body_chunk(b"".join(pending)))
                pending.clear()
                size = 0
            pending.append(data)
            size += len(data)


def _find_outbox(session: HTTPSession, last_event_id: str) -> Outbox | None:
    stream_id = last_event_id.rpartition(":")[0]
    if session.standalone.stream_id == stream_id:
        return session.standalone
    for outbox in session.channel.routes.values():
        if outbox.stream_id == stream_id:
            return outbox
    return None


async def stream_route_events(send: ASGISend, receive: ASGIReceive, response: SSEResponse) -> None:
    """Write an extra route's SSE answer; a client that leaves ends it."""
    raw_headers = _sse_headers(response.headers)
    async with anyio.create_task_group() as task_group:

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            task_group.cancel_scope.cancel()

        task_group.start_soon(watch_disconnect)
        await send(
            {"type": "http.response.start", "status": response.status, "headers": raw_headers}
        )
        async for data in response.events:
            await send(body_chunk(data))
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        task_group.cancel_scope.cancel()


async def wait_or_disconnect(wait: Callable[[], Awaitable[Any]], receive: ASGIReceive) -> bool:
    """Wait for ``wait()``; ``True`` if the client disconnected first."""
    async with DisconnectWatch(receive) as watch:
        await wait()
    return watch.disconnected


class DisconnectWatch:
    """Cancels the block it guards once the client disconnects (then ``disconnected``).

    The watcher is a task in a task group of the guarded block's own, so it ends with the
    block and no task outlives the request. What the block raises comes out as it is (not
    in an exception group), and so does an error of the watcher's ``receive``. The watcher
    is stopped through a scope of its own, inside it, so that it ends normally: a task that
    ended cancelled would keep its exception, whose frames reference the task again (a
    reference cycle per request).
    """

    __slots__ = (
        "_enabled",
        "_error",
        "_on_disconnect",
        "_receive",
        "_task_group",
        "_watching",
        "disconnected",
    )

    def __init__(
        self,
        receive: ASGIReceive,
        on_disconnect: Callable[[], None] | None = None,
        *,
        enabled: bool = True,
    ) -> None:
        self._enabled = enabled
        self._receive = receive
        self._on_disconnect = on_disconnect
        self._task_group: TaskGroup | None = None
        self._watching: anyio.CancelScope | None = None
        self._error: Exception | None = None
        self.disconnected = False

    async def __aenter__(self) -> DisconnectWatch:
        if self._enabled:
            task_group = self._task_group = anyio.create_task_group()
            await task_group.__aenter__()
            self._watching = anyio.CancelScope()
            task_group.start_soon(self._watch, self._watching, task_group.cancel_scope)
        return self

    async def _watch(self, watching: anyio.CancelScope, block: anyio.CancelScope) -> None:
        with watching:
            try:
                while (await self._receive())["type"] != "http.disconnect":
                    pass
            except Exception as exc:  # raised in the guarded block's task, by __aexit__
                self._error = exc
                block.cancel()
                return
            self.disconnected = True
            if self._on_disconnect is not None:
                self._on_disconnect()
            block.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return None  # not enabled
        assert self._watching is not None
        self._watching.cancel()  # the block is done: stop watching
        self._watching = None
        if exc is not None and not isinstance(exc, anyio.get_cancelled_exc_class()):
            # The block's own error: the group only waits for the watcher to end, and
            # the error goes on unwrapped.
            await task_group.__aexit__(None, None, None)
            return None
        swallowed = await task_group.__aexit__(exc_type, exc, tb)
        error, self._error = self._error, None
        if error is not None:
            raise error
        return swallowed
