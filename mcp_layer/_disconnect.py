"""Cancelling a 2026-era request when its client closes the HTTP response stream.

Over Streamable HTTP a 2026-07-28 client cancels a request by closing its response
stream; the HTTP server sets the request's ``disconnected`` event and cancels nothing
itself (`jsonrpc_core.HTTPRequestInfo`). `unless_disconnected` runs a handler so that
the event cancels it.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from jsonrpc_core import RequestCancelled, RequestContext

if TYPE_CHECKING:
    from ._era import RequestScope

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

__all__ = ["unless_disconnected"]


async def unless_disconnected(
    disconnected: anyio.Event,
    handler: Callable[[Any, RequestContext, RequestScope], Awaitable[Any] | Any],
    params: Any,
    ctx: RequestContext,
    scope: RequestScope,
    task_group: anyio.abc.TaskGroup | None,
) -> Any:
    """Run a 2026-era handler; the client closing its HTTP stream cancels it.

    A cancellation can only reach a handler where it waits, so the watcher starts when
    the handler first suspends (`_on_first_suspension`): one that answers without
    waiting (most tool calls) costs no task. The watcher runs in the session's task
    group, the handler in the caller's task: the answer goes out as soon as the
    handler returns, without waiting for the watcher to end (a task group per request
    would hold every answer back a turn of the event loop, past the turn in which the
    HTTP server writes a quick answer whole). Outside a served session
    (``task_group`` None) a task group of its own is the fallback.
    """
    if task_group is None:
        return await _with_task_group_of_its_own(disconnected, handler, params, ctx, scope)
    handler_scope = anyio.CancelScope()
    # Made only when the handler suspends: `CancelScope.cancel` formats the current
    # task's repr (anyio's cancel reason), a cost a quick answer need not pay.
    watcher_scope: anyio.CancelScope | None = None

    async def watch(watcher: anyio.CancelScope) -> None:
        with watcher:
            await disconnected.wait()
            handler_scope.cancel()

    def start_watching() -> None:
        nonlocal watcher_scope
        watcher_scope = anyio.CancelScope()
        task_group.start_soon(watch, watcher_scope)

    try:
        with handler_scope:
            result = handler(params, ctx, scope)
            if not inspect.isawaitable(result):
                return result
            return await _on_first_suspension(result, start_watching)
    finally:
        if watcher_scope is not None:
            watcher_scope.cancel()
    raise RequestCancelled("the client closed the response stream")


@types.coroutine
def _on_first_suspension(
    awaitable: Awaitable[Any], callback: Callable[[], None]
) -> Generator[Any, Any, Any]:
    """``await awaitable``, calling ``callback`` once if and when it first suspends.

    The delegation is what ``yield from`` does (PEP 380): every value the awaitable
    yields goes to the event loop, and what the loop sends or throws goes back in.
    """
    inner = awaitable.__await__()
    try:
        yielded = inner.send(None)
    except StopIteration as done:
        return done.value
    callback()
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            inner.close()
            raise
        except BaseException as exc:
            try:
                yielded = inner.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                yielded = inner.send(sent)
            except StopIteration as done:
                return done.value


async def _with_task_group_of_its_own(
    disconnected: anyio.Event,
    handler: Callable[[Any, RequestContext, RequestScope], Awaitable[Any] | Any],
    params: Any,
    ctx: RequestContext,
    scope: RequestScope,
) -> Any:
    """`unless_disconnected` with a task group of its own."""
    outcome: list[Any] = []
    try:
        async with anyio.create_task_group() as task_group:

            async def watch() -> None:
                await disconnected.wait()
                task_group.cancel_scope.cancel()

            task_group.start_soon(watch)
            result = handler(params, ctx, scope)
            outcome.append(await result if inspect.isawaitable(result) else result)
            task_group.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    if not outcome:
        raise RequestCancelled("the client closed the response stream")
    return outcome[0]
