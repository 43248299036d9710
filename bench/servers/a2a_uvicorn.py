"""Serve an A2A benchmark app with uvicorn on 127.0.0.1, the same way for every contender.

`serve_app` is `_uvicorn.serve` (socket bound first, ``LISTENING <port>`` once started,
the settings of `jsonrpc_core.serve`) with the access log off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _uvicorn import serve

__all__ = ["serve_app"]


def serve_app(build: Callable[[str], Any]) -> None:
    """Bind 127.0.0.1:0, build the app with ``build(base_url)``, serve until stopped."""
    serve(build, access_log=False)
