"""Calling a user function, sync or async (shared by the server and the client).

A module of its own so that a client, which calls its handlers the same way, does not
import the server's tool machinery (`mcp_layer._registry`) to get it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["call"]


async def call(func: Callable[..., Any], kwargs: dict[str, Any], *, in_thread: bool = False) -> Any:
    """Call a sync or async function; sync ones in a worker thread when asked."""
    if inspect.iscoroutinefunction(func):
        return await func(**kwargs)
    if in_thread:
        import functools

        import anyio.to_thread

        return await anyio.to_thread.run_sync(functools.partial(func, **kwargs))
    result = func(**kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result
