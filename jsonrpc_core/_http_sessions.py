"""HTTP sessions: a bounded table of live connections, each with its own Peer.

Rules: a session enters the table only after its first request was validated and
answered without error (`SessionTable.add` is called then, never earlier); the table
never holds more than ``max_sessions``; a session idle for ``idle_timeout`` seconds
with no request in flight and no open stream is closed by the reaper. A request counts
as in flight from the moment its session is looked up (so it cannot be reaped under
it). ``stream_ids`` lists the event-store streams a session wrote; when the session
ends they are forgotten (`SessionRunner.forget_streams`), since a resumption names its
session; a shared store forgets the whole session, except while the app is stopping
(another replica may still resume its streams then).

`SessionRunner` runs each session's connection in the app's task group (and the one
shared connection of requests without a session), reaps idle sessions and ends them.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from ._http_channel import Outbox, ServerChannel
from ._http_common import SESSION_HEADER, HTTPRequestInfo
from ._transport import MessageStream

if TYPE_CHECKING:
    from ._event_store import EventStore, SharedEventStore

__all__ = ["HTTPSession", "SessionPolicy", "SessionRunner", "SessionTable", "shared_store_of"]

logger = logging.getLogger("jsonrpc_core.http")

_FORGET_TIMEOUT = 5.0
"""How long an ended session's streams may take to leave the event store."""


@dataclass(slots=True)
class SessionPolicy:
    """How a protocol names and starts its HTTP sessions.

    ``is_start`` tells whether a parsed payload opens a session (MCP: an
    ``initialize`` request). ``header`` carries the session id both ways (the client
    transport's ``session_header`` must name the same).
    ``is_sessionless``, when given, picks the POSTs served without any session
    (a session id header on them is ignored) by one shared connection, as in
    stateless mode: a server can speak a sessionless protocol revision beside a
    session-based one on the same endpoint (MCP 2026-07-28 beside 2025-11-25). It is
    also asked about GET and DELETE (payload ``None``): those get 405 when it says yes.
    """

    header: str = SESSION_HEADER
    is_start: Callable[[Any], bool] = lambda payload: False
    is_sessionless: Callable[[HTTPRequestInfo, Any], bool] | None = None
    new_id: Callable[[], str] = lambda: secrets.token_hex(16)


@dataclass(eq=False)
class HTTPSession:
    """One live session: its channel, standalone stream and bookkeeping."""

    id: str
    channel: ServerChannel
    standalone: Outbox
    cancel_scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    last_active: float = field(default_factory=time.monotonic)
    active_requests: int = 0
    principal: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    stream_ids: set[str] = field(default_factory=set)

    def touch(self) -> None:
        """Mark the session as used now."""
        self.last_active = time.monotonic()

    @property
    def idle(self) -> bool:
        """No request in flight and no stream open."""
        return self.active_requests == 0 and not self.standalone.attached

    def close(self) -> None:
        """End the session: its Peer stops and its streams end."""
        self.channel.close_inbound()
        self.standalone.finish()
        self.standalone.detach()
        self.cancel_scope.cancel()


class SessionTable:
    """The live sessions, bounded in number and idle time."""

    def __init__(self, *, max_sessions: int, idle_timeout: float) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, HTTPSession] = {}
        # Sessions being opened hold a slot too, so concurrent starts cannot overshoot.
        self._reserved: set[str] = set()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> HTTPSession | None:
        """The live session with this id."""
        return self._sessions.get(session_id)

    @property
    def full(self) -> bool:
        """Whether no further session may be opened."""
        return len(self._sessions) + len(self._reserved) >= self.max_sessions

    def reserve(self, session_id: str) -> None:
        """Hold a slot for a session that is being opened."""
        self._reserved.add(session_id)

    def release(self, session_id: str) -> None:
        """Give back a reserved slot (the session was registered or abandoned)."""
        self._reserved.discard(session_id)

    def add(self, session: HTTPSession) -> None:
        """Register a validated session."""
        self._reserved.discard(session.id)
        self._sessions[session.id] = session

    def remove(self, session_id: str) -> HTTPSession | None:
        """Take a session out of the table (it is not closed here)."""
        return self._sessions.pop(session_id, None)

    def expired(self) -> list[HTTPSession]:
        """Idle sessions past the idle timeout."""
        deadline = time.monotonic() - self.idle_timeout
        return [s for s in self._sessions.values() if s.idle and s.last_active < deadline]

    def all(self) -> list[HTTPSession]:
        """Every live session."""
        return list(self._sessions.values())


def shared_store_of(store: EventStore | None) -> SharedEventStore | None:
    """``store`` if several processes can share it (``_http_resume``, loaded only for a
    server with an event store)."""
    if store is None:
        return None
    from ._http_resume import shared_store

    return shared_store(store)


class SessionRunner:
    """Runs the sessions of one app in its task group, and ends them.

    ``serve`` serves one connection until its stream ends. The task group is given by
    `begin` (the app entering lifespan or ``running``) and taken back by `end`;
    ``stopping`` is set from `end` on, so that a shared store keeps the sessions of a
    stopping app for the other replicas.
    """

    def __init__(
        self,
        serve: Callable[[MessageStream], Awaitable[None]],
        table: SessionTable,
        *,
        event_store: EventStore | None,
    ) -> None:
        self._serve = serve
        self._table = table
        self._event_store = event_store
        self.task_group: TaskGroup | None = None
        self.shared: ServerChannel | None = None
        self.stopping = False

    def begin(self, task_group: TaskGroup, *, reap: bool) -> None:
        """Start running in ``task_group`` (reaping idle sessions if ``reap``)."""
        self.task_group = task_group
        self.stopping = False
        if reap:
            task_group.start_soon(self._reap_idle_sessions)

    def end(self, *, unregister: bool) -> None:
        """Close every session (taking each out of the table if ``unregister``) and the
        shared connection; later sessions cannot start."""
        self.stopping = True
        for session in self._table.all():
            if unregister:
                self._table.remove(session.id)
            session.close()
        if self.shared is not None:
            self.shared.close_inbound()
        self.task_group = None
        self.shared = None

    def shared_channel(self) -> ServerChannel:
        """The one connection serving every request without a session (made on first use
        when the app also has sessions)."""
        if self.shared is None:
            assert self.task_group is not None
            shared = ServerChannel(standalone=None, remap_ids=True, max_buffered=256)
            self.shared = shared

            async def serve_shared() -> None:
                await self._serve(shared)

            self.task_group.start_soon(serve_shared)
        return self.shared

    def start(self, session: HTTPSession) -> None:
        """Serve ``session``'s connection until it ends (then it is unregistered)."""
        assert self.task_group is not None
        self.task_group.start_soon(self._run, session)

    async def _run(self, session: HTTPSession) -> None:
        try:
            with session.cancel_scope:
                await self._serve(session.channel)
        finally:
            if self._table.get(session.id) is session:
                self._table.remove(session.id)
            self._table.release(session.id)
            session.close()
            await self.forget_streams(session)

    async def _reap_idle_sessions(self) -> None:
        interval = max(0.05, min(self._table.idle_timeout / 4, 30.0))
        while True:
            await anyio.sleep(interval)
            for session in self._table.expired():
                logger.info(
                    "session %s expired after %.0f s idle", session.id, self._table.idle_timeout
                )
                self._table.remove(session.id)
                session.close()
                await self.forget_streams(session)

    async def forget_streams(self, session: HTTPSession) -> None:
        """The session has ended: no one may resume its streams, so drop them (once).

        A shared store forgets the whole session, except while the app is stopping
        (another replica may still resume its streams then)."""
        if not session.stream_ids:
            return
        stream_ids, session.stream_ids = session.stream_ids, set()
        store = self._event_store
        shared = shared_store_of(store)
        if store is None or (shared is not None and self.stopping):
            return
        with anyio.move_on_after(_FORGET_TIMEOUT, shield=True):
            try:
                if shared is not None:
                    await shared.forget_session(session.id)
                else:
                    for stream_id in stream_ids:
                        await store.forget(stream_id)
            except Exception:
                logger.warning("could not forget session %s's streams", session.id, exc_info=True)
