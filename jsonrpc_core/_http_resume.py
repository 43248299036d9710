"""Resuming, on this process, a stream whose session lives in another one.

With a `SharedEventStore`, a ``GET`` that carries ``Last-Event-ID`` for a session this
process does not hold is answered from the store (`resume_elsewhere`): the events after
that id, then the new ones while the owning process writes them, until the stream ends.
Only the stream is served here: requests of the session still go to the process that
holds it (session affinity), which is why the store must know the session, for the
same principal, before anything is replayed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from ._event_store import EventStore, SharedEventStore
from ._http_common import HTTPError, HTTPRequestInfo
from ._sse import SSEEvent, encode_comment, encode_event

__all__ = ["resume_elsewhere", "shared_store"]

ASGIReceive = Callable[[], Awaitable[MutableMapping[str, Any]]]
ASGISend = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def shared_store(store: EventStore | None) -> SharedEventStore | None:
    """``store`` if several processes can share it."""
    return store if isinstance(store, SharedEventStore) else None


async def resume_elsewhere(
    store: SharedEventStore,
    send: ASGISend,
    receive: ASGIReceive,
    info: HTTPRequestInfo,
    *,
    session_id: str,
    last_event_id: str,
    event_name: str | None,
) -> None:
    """Serve the resumption (see module docstring); `HTTPError` 404 when the store does
    not know the session for this principal, or the stream."""
    if not last_event_id.startswith(session_id + ".") or not await store.session_known(
        session_id, info.principal
    ):
        raise HTTPError(404, "Session not found: it has expired or was terminated")
    async with store.follow(last_event_id) as events:
        if events is None:
            raise HTTPError(404, "Unknown Last-Event-ID: nothing to resume")
        info.session_id = session_id
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        async with anyio.create_task_group() as task_group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                task_group.cancel_scope.cancel()

            task_group.start_soon(watch_disconnect)
            await send(_chunk(encode_comment()))
            async for event_id, data in events:
                if data:  # the priming event of a stream carries no data
                    event = SSEEvent(data.decode("utf-8"), event_name, event_id)
                    await send(_chunk(encode_event(event)))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            task_group.cancel_scope.cancel()


def _chunk(data: bytes) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": True}
