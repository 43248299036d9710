"""Tools on the client side: listing, calling (with progress, as a task when it must).

Handshake era: a tool whose ``execution.taskSupport`` is ``"required"`` (or
``"optional"``, when asked) is called as a 2025-11-25 task (`mcp_layer._client_tasks`).
2026 era: tool definitions whose ``x-mcp-header`` annotations are invalid are left out
of ``tools/list`` over HTTP, and a call refused for a header mismatch relists the
tools and is sent once more.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from jsonrpc_core import LocalError, RequestContext, RequestType

from ._client_host import run_callback
from ._client_tasks import TaskMethods, TaskStatusCallback, follow_task
from ._errors import HeaderMismatch
from ._headers import invalid_x_mcp_header
from ._methods import TOOLS_CALL, TOOLS_CALL_TASK, TOOLS_LIST
from .types import CallToolResult, ListToolsResult, ProgressNotificationParams, Tool

__all__ = ["ProgressCallback", "ToolMethods"]

logger = logging.getLogger("mcp_layer.client")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

_TOOLS_CALL_RAW: RequestType[Any, Any] = RequestType("tools/call")
"""A task-augmented ``tools/call``, its answer read raw: a `CreateTaskResult`, or the
tool's result from a server that ran it at once."""


class ToolMethods(TaskMethods):
    """``tools/list`` and ``tools/call``, and the progress of a call (built on
    `TaskMethods`: a handshake-era call may run as a task, `follow_task`)."""

    _task_support: dict[str, str | None]
    """Each listed tool's ``execution.taskSupport`` (handshake era), by name."""
    _progress: dict[str | int, ProgressCallback]
    """The ``progress`` callback of each call in flight, by its progress token."""
    _tokens: itertools.count[int]

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools."""
        params = {"cursor": cursor} if cursor else {}
        result: ListToolsResult = await self._cached(TOOLS_LIST, cursor or "", params)
        if not self.modern:
            for tool in result.tools:
                execution = tool.execution
                self._task_support[tool.name] = execution.task_support if execution else None
            return result
        accepted = []
        for tool in result.tools:
            problem = invalid_x_mcp_header(tool.input_schema) if self._http else None
            if problem is not None:
                logger.warning("tool %r left out: %s", tool.name, problem)
                self._tool_schemas.pop(tool.name, None)
                continue
            self._tool_schemas[tool.name] = tool.input_schema
            accepted.append(tool)
        if len(accepted) == len(result.tools):
            return result
        return result.model_copy(update={"tools": accepted})

    async def list_all_tools(self) -> list[Tool]:
        """Every tool, following ``nextCursor``."""
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self.list_tools(cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
        as_task: bool | None = None,
        task_ttl: int | None = None,
        on_task_status: TaskStatusCallback | None = None,
    ) -> CallToolResult:
        """Call a tool; ``progress(progress, total, message)`` gets progress updates.

        Handshake era, on a server that declares ``tasks.requests.tools.call``
        (2025-11-25 tasks): a tool whose ``execution.taskSupport`` is ``"required"``
        runs as a task, and so does an ``"optional"`` one with ``as_task=True``
        (``as_task=False``: never). The result is the tool's, as for a plain call;
        ``on_task_status(task)`` gets each new state of the task (``working`` with
        the server's status message, ``input_required``, ...), ``task_ttl`` asks the
        server to keep the task that many milliseconds, and a call abandoned before
        the end cancels the task (``tasks/cancel``). ``as_task=True`` for a tool or a
        server without task support raises `jsonrpc_core.LocalError`. In the 2026 era
        the server decides (the session's ``tasks`` option).
        """
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if not self.modern and await self._as_task(name, as_task):
            params["task"] = {} if task_ttl is None else {"ttl": task_ttl}

            async def follow(answer: Any) -> CallToolResult:
                raw = answer
                if isinstance(answer, dict) and "task" in answer:
                    created = TOOLS_CALL_TASK.validate_result(answer)
                    raw = await follow_task(
                        self, created, timeout=timeout, on_status=on_task_status
                    )
                # else the server answered at once, as a plain call
                result: CallToolResult = TOOLS_CALL.validate_result(raw)
                return result

            task_result: CallToolResult = await self._with_progress(
                _TOOLS_CALL_RAW, params, timeout, progress, meta, then=follow
            )
            return task_result
        try:
            result: CallToolResult = await self._with_progress(
                TOOLS_CALL, params, timeout, progress, meta
            )
        except HeaderMismatch:
            if not (self.modern and self._http):
                raise
            # The tool's x-mcp-header annotations may have changed: relist, retry once.
            if self.cache is not None:
                self.cache.invalidate(TOOLS_LIST.method)
            await self.list_all_tools()
            result = await self._with_progress(TOOLS_CALL, params, timeout, progress, meta)
        return result

    async def _with_progress(
        self,
        descriptor: Any,
        params: dict[str, Any],
        timeout: float | None,
        progress: ProgressCallback | None,
        meta: dict[str, Any] | None,
        then: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> Any:
        meta = dict(meta or {})
        token: int | None = None
        if progress is not None:
            token = next(self._tokens)
            meta["progressToken"] = token
            self._progress[token] = progress
        if meta:
            params["_meta"] = meta
        try:
            result = await self._request(descriptor, params, timeout=timeout)
            # `then` (a task followed to its end) runs while the progress token holds.
            return result if then is None else await then(result)
        finally:
            if token is not None:
                self._progress.pop(token, None)

    async def _as_task(self, name: str, as_task: bool | None) -> bool:
        """Whether a handshake-era call of tool ``name`` goes as a task (see `call_tool`)."""
        if as_task is False:
            return False
        tasks = self.server_capabilities.tasks
        requests = tasks.requests if tasks is not None else None
        if requests is None or requests.tools is None or requests.tools.call is None:
            if as_task:
                raise LocalError("the server does not support task-augmented tools/call")
            return False
        if name not in self._task_support:
            await self.list_all_tools()  # learn the tool's execution.taskSupport
        support = self._task_support.get(name)
        if as_task and support not in ("optional", "required"):
            raise LocalError(f"tool {name!r} does not support running as a task")
        return support == "required" or (bool(as_task) and support == "optional")

    async def _progress_update(
        self, params: ProgressNotificationParams, ctx: RequestContext
    ) -> None:
        callback = self._progress.get(params.progress_token)
        if callback is not None:
            await run_callback(callback, params.progress, params.total, params.message)
