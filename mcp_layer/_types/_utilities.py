"""Base utilities: progress and cancellation notifications (ping needs no own types)."""

from __future__ import annotations

from ._base import NotificationParams, ProgressToken, RequestId

__all__ = ["CancelledNotificationParams", "ProgressNotificationParams"]


class ProgressNotificationParams(NotificationParams):
    """Parameters for a ``notifications/progress`` notification."""

    progress_token: ProgressToken
    """The token given in the original request's ``_meta.progressToken``."""
    progress: float
    """Progress so far; it should increase with every notification."""
    total: float | None = None
    """Total progress required, if known."""
    message: str | None = None
    """A human-readable description of the current progress (since 2025-03-26)."""


class CancelledNotificationParams(NotificationParams):
    """Parameters for a ``notifications/cancelled`` notification."""

    request_id: RequestId | None = None
    """The id of the request to cancel (required before 2025-11-25; tasks use tasks/cancel)."""
    reason: str | None = None
    """An optional reason, which may be logged or shown to the user."""
