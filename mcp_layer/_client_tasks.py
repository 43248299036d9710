"""Tasks on the client side: task-augmented ``tools/call`` in the handshake era
(2025-11-25 tasks), and `TaskMethods`, the session's ``tasks/*`` calls in both eras.

`ClientSession.call_tool` sends ``task`` in the params when the tool's
``execution.taskSupport`` is ``"required"`` (or ``"optional"`` and the caller asked),
and the server declared ``tasks.requests.tools.call``; `follow_task` then takes the
`CreateTaskResult` to the tool's own `CallToolResult`.

Rules:

1. Polling: ``tasks/get`` every ``pollInterval`` (the server's, else 1 s; at most 5 s),
   sooner when a ``notifications/tasks/status`` arrives, whose task is taken as the
   current state (it need not come: polling never stops for want of one).
2. On ``input_required``, ``completed`` or ``failed``, ``tasks/result`` is called: it
   blocks while the server asks its questions (they arrive as requests the session
   answers from its handlers) and answers exactly what a plain call would have: a
   `CallToolResult` (``isError`` included) or the call's JSON-RPC error, raised.
   While it blocks, ``tasks/get`` goes on at the same pace for the status updates.
3. A task the server cancels raises `TaskCancelled`.
4. A caller that gives up before the end (its scope cancelled, a timeout, any error
   but the task's own result) sends ``tasks/cancel``, shielded and bounded by
   `CANCEL_TIMEOUT` seconds, before the exception goes on.
5. Every distinct status (status and message) goes to the caller's ``on_status``, the
   created one first.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from jsonrpc_core import JsonRpcError, LocalError, RequestContext, ResultValidationError

from ._client_era import ClientEra
from ._methods import TASKS_CANCEL, TASKS_CANCEL_V2, TASKS_GET, TASKS_GET_V2, TASKS_LIST, TOOLS_CALL
from .types import (
    CancelTaskResult,
    CreateTaskResult,
    DetailedTask,
    GetTaskResult,
    ListTasksResult,
    Task,
)

__all__ = [
    "CANCEL_TIMEOUT",
    "TaskCancelled",
    "TaskMethods",
    "TaskStatusCallback",
    "follow_task",
]

TaskStatusCallback = Callable[[Task], Awaitable[None] | None]
"""Receives each new state of a task (`Task`: status, status message, timestamps)."""

logger = logging.getLogger("mcp_layer.client")

CANCEL_TIMEOUT = 5.0
"""How long an abandoned task's ``tasks/cancel`` may take."""

DEFAULT_POLL_INTERVAL = 1.0
MAX_POLL_INTERVAL = 5.0


class TaskCancelled(LocalError):
    """The server cancelled the task before it ended (``status: "cancelled"``)."""


class _Watch:
    """One followed task: its latest known state, and a wake-up for the poller."""

    def __init__(self, task: Task, on_status: TaskStatusCallback | None) -> None:
        self.task = task
        self.on_status = on_status
        self.seen: tuple[str, str | None] | None = None
        self.notified = anyio.Event()

    async def update(self, task: Task) -> None:
        self.task = task
        key = (task.status, task.status_message)
        if key != self.seen:
            self.seen = key
            if self.on_status is not None:
                await _call(self.on_status, task)

    async def notify(self, task: Task) -> None:
        await self.update(task)
        self.notified.set()

    async def wait(self) -> None:
        """Until the next poll is due, or a status notification came."""
        interval = self.task.poll_interval
        delay = interval / 1000 if interval is not None and interval > 0 else DEFAULT_POLL_INTERVAL
        with anyio.move_on_after(min(delay, MAX_POLL_INTERVAL)):
            await self.notified.wait()


async def _call(callback: Callable[..., Any], *args: Any) -> Any:
    result = callback(*args)
    return await result if inspect.isawaitable(result) else result


async def follow_task(
    client: TaskMethods,
    created: CreateTaskResult,
    *,
    timeout: float | None,
    on_status: TaskStatusCallback | None,
) -> dict[str, Any]:
    """Take a created task to its end; the raw result of ``tasks/result`` (module rules)."""
    watch = _Watch(created.task, on_status)
    task_id = created.task.task_id
    client.task_watches[task_id] = watch.notify
    finished = False
    try:
        await watch.update(created.task)
        while watch.task.status == "working":
            await _poll(client, watch, timeout)
        if watch.task.status == "cancelled":
            finished = True
            raise TaskCancelled(f"task {task_id} was cancelled by the server")
        try:
            raw = await _result_while_polling(client, watch, timeout)
        except JsonRpcError as exc:
            finished = exc.received  # the call's own error: the task is over
            raise
        finished = True
        return raw
    except BaseException:
        if not finished and not watch.task.is_terminal:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT):
                try:
                    await client.peer.request(
                        TASKS_CANCEL, {"taskId": task_id}, timeout=CANCEL_TIMEOUT
                    )
                except Exception:  # already ended, or the connection is gone
                    pass
        raise
    finally:
        client.task_watches.pop(task_id, None)


async def _poll(client: TaskMethods, watch: _Watch, timeout: float | None) -> None:
    watch.notified = anyio.Event()
    await watch.wait()
    if watch.notified.is_set():
        return  # the notification brought the new state
    state = await client.peer.request(
        TASKS_GET, {"taskId": watch.task.task_id}, timeout=client._timeout(timeout)
    )
    await watch.update(state)


async def _result_while_polling(
    client: TaskMethods, watch: _Watch, timeout: float | None
) -> dict[str, Any]:
    outcome: list[Any] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as task_group:
        if not watch.task.is_terminal:

            async def keep_polling() -> None:
                try:
                    while not watch.task.is_terminal:
                        await _poll(client, watch, timeout)
                except Exception:  # status updates only: tasks/result decides the outcome
                    logger.debug("tasks/get failed while tasks/result waits", exc_info=True)

            task_group.start_soon(keep_polling)
        # tasks/result blocks until the task ends, by design: no deadline of its own
        # unless the caller gave one. Its failure is raised bare, not in a group.
        try:
            outcome.append(
                await client.peer.request(
                    "tasks/result",
                    {"taskId": watch.task.task_id},
                    timeout=timeout if timeout is not None else math.inf,
                )
            )
        except Exception as exc:
            failure.append(exc)
        task_group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    raw = outcome[0]
    if not isinstance(raw, dict):
        raise ResultValidationError("tasks/result: the result is not an object")
    return raw


class TaskMethods(ClientEra):
    """``tasks/get``, ``tasks/cancel``, ``tasks/result`` and ``tasks/list``, and the
    handshake era's ``notifications/tasks/status`` for the tasks `follow_task` follows."""

    task_watches: dict[str, Callable[[Task], Awaitable[None]]]
    """The handshake-era tasks being followed, by id: where their status goes."""

    async def get_task(self, task_id: str) -> DetailedTask | GetTaskResult:
        """``tasks/get``: the task's state; in the 2026 era (tasks extension) a
        `DetailedTask` (its result inlined when done), in the handshake era a
        `GetTaskResult` (2025-11-25 tasks; the result comes from `get_task_result`)."""
        if not self.modern:
            result: GetTaskResult = await self.peer.request(
                TASKS_GET, {"taskId": task_id}, timeout=self._timeout(None)
            )
            return result
        raw = await self._modern_request(TASKS_GET_V2.method, {"taskId": task_id}, timeout=None)
        return DetailedTask.model_validate(raw)

    async def cancel_task(self, task_id: str) -> CancelTaskResult | None:
        """``tasks/cancel``: ask the server to stop a task; in the handshake era the
        answer is the task, now ``cancelled`` (a terminal task is refused, -32602)."""
        if not self.modern:
            cancelled: CancelTaskResult = await self.peer.request(
                TASKS_CANCEL, {"taskId": task_id}, timeout=self._timeout(None)
            )
            return cancelled
        await self._modern_request(TASKS_CANCEL_V2.method, {"taskId": task_id}, timeout=None)
        return None

    async def get_task_result(self, task_id: str, *, timeout: float | None = None) -> Any:
        """``tasks/result`` (handshake era): wait for a task's end and return its result
        (a `CallToolResult` for a tool call), or raise its JSON-RPC error."""
        raw = await self.peer.request(
            "tasks/result", {"taskId": task_id}, timeout=self._timeout(timeout)
        )
        return TOOLS_CALL.validate_result(raw)

    async def list_tasks(self, cursor: str | None = None) -> ListTasksResult:
        """``tasks/list`` (handshake era): one page of this client's tasks."""
        params = {"cursor": cursor} if cursor else {}
        result: ListTasksResult = await self.peer.request(
            TASKS_LIST, params, timeout=self._timeout(None)
        )
        return result

    async def _task_status_legacy(self, params: Any, ctx: RequestContext) -> None:
        watch = self.task_watches.get(params.task_id)
        if watch is not None:
            await watch(params)
