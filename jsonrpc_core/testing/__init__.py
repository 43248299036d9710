"""Test helpers for applications built on jsonrpc_core."""

from __future__ import annotations

from jsonrpc_core.testing._asgi_transport import (
    ASGIApp,
    ASGIMessage,
    ASGIReceive,
    ASGIScope,
    ASGISend,
    StreamingASGITransport,
)

__all__ = [
    "ASGIApp",
    "ASGIMessage",
    "ASGIReceive",
    "ASGIScope",
    "ASGISend",
    "StreamingASGITransport",
]
