"""Logging: the client sets a level; the server sends log messages as notifications."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import SerializerFunctionWrapHandler, model_serializer

from ._base import NotificationParams, RequestParams

__all__ = [
    "LOGGING_LEVELS",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "SetLevelRequestParams",
]

LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""The severity of a log message (RFC 5424 syslog severities)."""

LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""Every `LoggingLevel`, least severe first (compare levels by index)."""


class SetLevelRequestParams(RequestParams):
    """Parameters for a ``logging/setLevel`` request."""

    level: LoggingLevel
    """The lowest level of messages the client wants to receive."""


class LoggingMessageNotificationParams(NotificationParams):
    """Parameters for a ``notifications/message`` notification."""

    level: LoggingLevel
    logger: str | None = None
    """An optional name of the logger issuing this message."""
    data: Any
    """The data to log: any JSON value. Always written, ``null`` included."""

    @model_serializer(mode="wrap")
    def _always_write_data(self, handler: SerializerFunctionWrapHandler) -> Any:
        out = handler(self)
        if isinstance(out, dict):
            out.setdefault("data", None)
        return out
