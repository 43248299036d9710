"""HTTP sessions: a bounded table of live connections, each with its own Peer.

Rules: a session enters the table only after its first request was validated and
answered without error (`SessionTable.add` is called then, never earlier); the table
never holds more than ``max_sessions``; a session idle for ``idle_timeout`` seconds
with no request in flight and no open stream is closed by the reaper. A request counts
as in flight from the moment its session is looked up (so it cannot be reaped under
it). ``stream_ids`` lists the event-store streams a session wrote; when the session
ends they are forgotten (``JsonRpcHTTPApp``), since a resumption names its session.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from ._http_channel import Outbox, ServerChannel
from ._http_common import SESSION_HEADER, HTTPRequestInfo

__all__ = ["HTTPSession", "SessionPolicy", "SessionTable"]


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
