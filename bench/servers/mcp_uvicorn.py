"""Serve an ASGI app on 127.0.0.1 with uvicorn, the same way for both SDKs.

`serve_on_free_port` is `_uvicorn.serve` (socket bound first, ``LISTENING <port>`` once
started, the settings of `jsonrpc_core.serve`) with uvicorn's default access log setting.
"""

from __future__ import annotations

from typing import Any

from _uvicorn import serve

__all__ = ["serve_on_free_port"]


def serve_on_free_port(app: Any) -> None:
    """Bind 127.0.0.1:0, serve ``app`` until SIGINT/SIGTERM."""
    serve(lambda _base_url: app, access_log=True)
