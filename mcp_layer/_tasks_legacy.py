"""Tasks of the handshake era (2025-11-25, basic/utilities/tasks) on the server side.

The same `TaskManager` store serves both eras; a record made here is marked ``legacy``
and is seen only by handshake-era requests (a 2026-era task only by 2026-era ones).

Rules:

1. A ``tools/call`` with ``task`` in its params, to a tool declared with
   ``task_support``, answers at once with ``CreateTaskResult`` (``{"task": Task}``); the
   tool runs in the session's background. Without ``task``, a ``"required"`` tool is
   refused with -32601; with ``task``, a tool without task support is refused with
   -32601 (a server that declares no tasks at all ignores ``task``: no manager, no
   call here).
2. The requested ``ttl`` is honoured up to the manager's ``ttl_ms``.
3. Status: ``working`` -> ``input_required`` (while the tool waits for the client's
   answer to an elicitation or sampling request, which carries the
   ``io.modelcontextprotocol/related-task`` metadata) -> ``working`` -> ``completed`` |
   ``failed`` (a JSON-RPC error, or a result with ``isError``) | ``cancelled``. Every
   change is sent as ``notifications/tasks/status`` to the session that made the task.
4. ``tasks/result`` blocks until the task is terminal, then answers exactly what the
   plain call would have (the ``CallToolResult``, or its JSON-RPC error) with the
   related-task metadata in ``_meta``; a cancelled task's is an error.
5. ``tasks/cancel`` of a terminal task is -32602; otherwise the task is ``cancelled``
   before the answer (the tool's scope is cancelled, and nothing it does afterwards
   changes the status).
6. A task belongs to the authenticated principal that made it and, on a stateful
   connection, to that session: to any other requestor it does not exist (-32602).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jsonrpc_core import InternalError, InvalidParams, MethodNotFound, RequestContext

from ._context import Context
from ._methods import NOTIFICATIONS_TASKS_STATUS
from .types import RELATED_TASK_META_KEY, CallToolRequestParams

if TYPE_CHECKING:
    from ._context import InputRequest
    from ._era import RequestScope
    from ._session import ServerSession
    from ._tasks import TaskManager, TaskRecord

__all__ = [
    "LegacyTaskContext",
    "cancel_task",
    "get_task",
    "list_tasks",
    "start_task",
    "task_result",
    "task_wire",
]

LIST_PAGE_SIZE = 100
"""Tasks per ``tasks/list`` page."""


def task_wire(record: TaskRecord) -> dict[str, Any]:
    """The record as a 2025-11-25 ``Task`` (``ttl`` is written even when ``null``)."""
    task: dict[str, Any] = {"taskId": record.task_id, "status": record.status}
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    task["createdAt"] = record.created_at
    task["lastUpdatedAt"] = record.last_updated_at
    task["ttl"] = record.ttl_ms
    task["pollInterval"] = record.poll_interval_ms
    return task


def related(task_id: str) -> dict[str, Any]:
    """The ``_meta`` member that ties a message to task ``task_id``."""
    return {RELATED_TASK_META_KEY: {"taskId": task_id}}


class LegacyTaskContext(Context):
    """The `Context` of a handshake-era task: progress and logs go out as in a plain
    call; a question to the client marks the task ``input_required`` while it waits,
    and carries the related-task metadata (rule 3)."""

    record: TaskRecord

    async def ask(
        self, requests: Mapping[str, InputRequest], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask the client, as `Context.ask` does, with the task ``input_required``."""
        from dataclasses import replace

        meta = related(self.record.task_id)
        tagged = {
            key: replace(
                request, params=request.params.model_copy(update={"meta": _with(request, meta)})
            )
            for key, request in requests.items()
        }
        await self.record.set_status("input_required", "Waiting for input from the client")
        try:
            return await super().ask(tagged, timeout=timeout)
        finally:
            await self.record.set_status("working")


def _with(request: InputRequest, meta: dict[str, Any]) -> dict[str, Any]:
    return {**(getattr(request.params, "meta", None) or {}), **meta}


async def start_task(
    manager: TaskManager,
    session: ServerSession,
    entry: Any,
    params: CallToolRequestParams,
    ctx: RequestContext,
    scope: RequestScope,
) -> dict[str, Any] | None:
    """Answer a handshake-era ``tools/call`` with a task (rule 1); ``None`` to call the
    tool as usual."""
    requested = params.task
    if requested is None:
        if entry.task_support == "required":
            raise MethodNotFound(
                f"Tool {params.name!r} requires task augmentation: call it with 'task' "
                "in the params"
            )
        return None
    if entry.task_support is None:
        raise MethodNotFound(f"Tool {params.name!r} does not support task augmentation")
    if session.task_group is None:
        return None  # not serving (a direct call in a test): no background to run in
    ttl = manager.ttl_ms
    if requested.ttl is not None and requested.ttl >= 0:
        ttl = requested.ttl if ttl is None else min(requested.ttl, ttl)
    record = manager.new_record(session, ctx, legacy=True, ttl_ms=ttl)
    context = LegacyTaskContext(session, ctx, scope, None)
    context.record = record

    async def run() -> None:
        from ._tasks import run_task

        await run_task(session, record, entry, params, ctx, scope, context)

    session.task_group.start_soon(run)
    return {"task": task_wire(record)}


async def publish_status(session: ServerSession, record: TaskRecord) -> None:
    """Send ``notifications/tasks/status`` to the session that made the task."""
    peer = session.peer
    if peer is not None and not peer.closed:
        await peer.notify(NOTIFICATIONS_TASKS_STATUS, task_wire(record))


def get_task(record: TaskRecord) -> dict[str, Any]:
    """``tasks/get``: the task."""
    return task_wire(record)


async def task_result(record: TaskRecord) -> dict[str, Any]:
    """``tasks/result``: wait for the end, then what the plain call would have answered."""
    await record.settled.wait()
    if record.status == "cancelled":
        raise InternalError(f"Task {record.task_id} was cancelled")
    if record.error is not None:
        from ._errors import MCP_ERRORS

        raise MCP_ERRORS.from_object(record.error)
    result = dict(record.result or {})
    result["_meta"] = {**(result.get("_meta") or {}), **related(record.task_id)}
    return result


async def cancel_task(record: TaskRecord) -> dict[str, Any]:
    """``tasks/cancel``: -32602 for a terminal task, else ``cancelled`` now (rule 5)."""
    if record.terminal:
        raise InvalidParams(
            f"Cannot cancel task: already in terminal status {record.status!r}",
            data={"taskId": record.task_id},
        )
    record.cancel_requested = True
    record.cancel_scope.cancel()
    await record.set_status("cancelled", "The task was cancelled by request.")
    return task_wire(record)


def list_tasks(records: list[TaskRecord], cursor: str | None) -> dict[str, Any]:
    """``tasks/list``: one page of the requestor's tasks, oldest first."""
    from ._session import decode_cursor, encode_cursor

    start = decode_cursor(cursor)
    if start > len(records):
        raise InvalidParams(f"Invalid cursor: {cursor!r}")
    end = start + LIST_PAGE_SIZE
    page: dict[str, Any] = {"tasks": [task_wire(r) for r in records[start:end]]}
    if end < len(records):
        page["nextCursor"] = encode_cursor(end)
    return page
