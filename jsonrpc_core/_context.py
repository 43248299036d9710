"""What a handler knows about the request it serves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from ._peer import Peer
    from ._wire import RequestId

__all__ = ["RequestContext"]

NO_ANSWER: Any = object()
"""No answer named by `RequestContext.cancel`: the cancellation error answers the request."""


@dataclass(slots=True)
class RequestContext:
    """Passed to every handler beside its typed params.

    ``peer`` calls back the other side (its requests and notifications are tied to
    this request, so HTTP transports deliver them on this request's stream);
    ``request_id`` is ``None`` for notifications; ``raw_params`` are the params as
    received; ``info`` is what the transport knows (HTTP headers, session, principal);
    ``cancel_scope`` is cancelled when the caller cancels the request.
    """

    peer: Peer
    method: str
    request_id: RequestId | None
    raw_params: Any
    info: Any = None
    cancel_scope: anyio.CancelScope | None = None
    _cancel_answer: Any = field(default=NO_ANSWER, init=False, repr=False)

    @property
    def cancelled(self) -> bool:
        """Whether the caller has cancelled this request."""
        return self.cancel_scope is not None and self.cancel_scope.cancel_called

    def cancel(self, answer: Any = NO_ANSWER) -> None:
        """Cancel the handler serving this request, as the caller's cancellation would.

        With ``answer``, a handler that ends by this cancellation gets the request
        answered with ``answer`` as its result instead of the cancellation error (a
        handler that still returns or raises answers as usual).
        """
        if answer is not NO_ANSWER:
            self._cancel_answer = answer
        if self.cancel_scope is not None:
            self.cancel_scope.cancel()
