"""`Deadline`: the total deadline of one client call, however slowly the server sends.

httpx's timeouts bound each phase (connect, write, pool) and each wait for bytes (read),
so a server sending one byte every few seconds never trips them. A client call is bounded
as a whole instead::

    with Deadline(timeout, url, method):
        response = await client.send(request, stream=True)
        ...

Rules:

1. The deadline is fixed when the `Deadline` is made: every ``with`` block under it (a
   stream reads several, between the results it yields) ends at the same instant. With
   ``timeout=None`` (or after `lift`) a block is not bounded.
2. When it passes, the block is cancelled (one cancel scope, no task) and `RequestTimeout`
   is raised in its place; the cancellation closes whatever HTTP response the block was
   reading, so its connection is closed, not returned to the pool.
3. Blocks under one `Deadline` run one after another, never nested.
"""

from __future__ import annotations

from types import TracebackType

import anyio

from ._errors import RequestTimeout

__all__ = ["Deadline"]


class Deadline:
    """``timeout`` seconds from now for whatever runs under ``with`` (module rules).

    ``url`` and ``what`` (a method, "agent card", ...) name the call in the
    `RequestTimeout`: ``no answer from URL within T s (WHAT)``.
    """

    __slots__ = ("_scope", "at", "timeout", "url", "what")

    def __init__(self, timeout: float | None, url: str, what: str) -> None:
        self.timeout = timeout
        self.url = url
        self.what = what
        self.at: float | None = None if timeout is None else anyio.current_time() + timeout
        self._scope: anyio.CancelScope | None = None

    def lift(self) -> None:
        """No deadline from now on (a stream that reached its first result)."""
        self.at = None

    def __enter__(self) -> Deadline:
        if self.at is not None:
            scope = self._scope = anyio.CancelScope(deadline=self.at)
            scope.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        scope, self._scope = self._scope, None
        if scope is None:
            return False
        suppressed = scope.__exit__(exc_type, exc, tb)
        if scope.cancelled_caught:
            raise RequestTimeout(
                f"no answer from {self.url} within {self.timeout:g} s ({self.what})"
            ) from None
        return bool(suppressed)
