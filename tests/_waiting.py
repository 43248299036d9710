"""Waiting for a condition without sleeping: `until` lets every other task run as far as
it can between two checks, so it waits exactly as long as the work takes.

For conditions that tasks of this process bring about, or I/O on 127.0.0.1 that the
kernel delivers at once (a FIN, bytes a server sent). Not for state that only time
changes (an idle timeout, a reaper's interval): with nothing left to run it checks again
at once, so it would spin until the timer fired; poll those with a short sleep.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

__all__ = ["until"]


async def until(condition: Callable[[], object], *, timeout: float = 10.0) -> None:
    """Return once ``condition()`` is true; fail with TimeoutError after ``timeout`` s.

    Between two checks every other task runs until it blocks, on another task or on I/O
    (each round also lets the event loop poll its sockets)."""
    # A cancel scope of its own, not `fail_after`: some tests patch that one.
    with anyio.CancelScope(deadline=anyio.current_time() + timeout):
        while not condition():
            await anyio.wait_all_tasks_blocked()
        return
    raise TimeoutError(f"not true within {timeout} s: {condition}")
