"""Where SSE events are kept so that a dropped stream can be resumed.

Rules: an event id names its stream (``<stream>:<sequence>``), so a ``Last-Event-ID``
leads back to exactly one stream and only that stream's later events are replayed.
The in-memory store is bounded in streams and in events per stream; what falls out
of the window can no longer be replayed, and a replay that would skip events says so
rather than pretending the stream is complete.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["EventStore", "InMemoryEventStore", "Replay", "SharedEventStore"]


@dataclass(slots=True)
class Replay:
    """The events of ``stream_id`` after the requested id; ``complete`` is ``False``
    when some events in between were already evicted."""

    stream_id: str
    events: list[tuple[str, bytes]]
    complete: bool = True


class EventStore(Protocol):
    """Storage for resumable SSE streams (in memory by default; shared stores scale out)."""

    async def append(self, stream_id: str, data: bytes) -> str:
        """Store one event's data; return its event id."""
        ...

    async def replay_after(self, last_event_id: str) -> Replay | None:
        """The stream and events after ``last_event_id``; ``None`` if it is unknown."""
        ...

    async def forget(self, stream_id: str) -> None:
        """Drop a stream that can never be resumed again."""
        ...


@runtime_checkable
class SharedEventStore(EventStore, Protocol):
    """An event store several server processes share (e.g. `PostgresEventStore`): a
    stream can then be resumed on any of them, even while another one still writes it.

    The server registers each session it opens (with its principal) and forgets it when
    the session ends (deleted or reaped); a replica that does not hold a session serves
    a ``GET`` with ``Last-Event-ID`` for it only if the store knows the session with the
    same principal.
    It marks the end of each request stream (`end`), so that a follower stops there.
    """

    async def register_session(self, session_id: str, principal: Any) -> None:
        """Remember a session opened by this process."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """The session was terminated: no replica may resume its streams any more."""
        ...

    async def session_known(self, session_id: str, principal: Any) -> bool:
        """Whether a session with this id was opened (by any process) for ``principal``."""
        ...

    async def end(self, stream_id: str) -> None:
        """No more events will be appended to ``stream_id``."""
        ...

    def follow(
        self, last_event_id: str
    ) -> AbstractAsyncContextManager[AsyncIterator[tuple[str, bytes]] | None]:
        """The events after ``last_event_id`` and then the new ones until the stream
        ends (or the store gives up waiting); ``None`` if the id is unknown."""
        ...


def split_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream_id, sequence)`` of an id made by `InMemoryEventStore`."""
    stream_id, sep, seq = event_id.rpartition(":")
    if not sep or not stream_id or not seq.isdigit():
        return None
    return stream_id, int(seq)


class InMemoryEventStore:
    """Keeps the last ``max_events_per_stream`` events of the last ``max_streams`` streams."""

    def __init__(self, *, max_streams: int = 10_000, max_events_per_stream: int = 1_000) -> None:
        self.max_streams = max_streams
        self.max_events_per_stream = max_events_per_stream
        self._streams: OrderedDict[str, tuple[list[int], deque[tuple[int, bytes]]]] = OrderedDict()

    async def append(self, stream_id: str, data: bytes) -> str:
        entry = self._streams.get(stream_id)
        if entry is None:
            entry = ([0], deque(maxlen=self.max_events_per_stream))
            self._streams[stream_id] = entry
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)
        else:
            self._streams.move_to_end(stream_id)
        counter, events = entry
        counter[0] += 1
        events.append((counter[0], data))
        return f"{stream_id}:{counter[0]}"

    async def replay_after(self, last_event_id: str) -> Replay | None:
        parsed = split_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        entry = self._streams.get(stream_id)
        if entry is None:
            return None
        counter, events = entry
        if seq > counter[0]:
            return None
        later = [(f"{stream_id}:{n}", data) for n, data in events if n > seq]
        oldest = events[0][0] if events else counter[0] + 1
        return Replay(stream_id, later, complete=oldest <= seq + 1)

    async def forget(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)

    def __len__(self) -> int:
        return len(self._streams)
