"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) for 2026-07-28.

Not the experimental tasks of 2025-11-25 (`mcp_layer._types._tasks`): the server alone
decides to answer a ``tools/call`` with a task (``resultType: "task"``), the client
polls ``tasks/get`` (the final result is inlined there), answers the task's input
requests with ``tasks/update`` and asks to stop it with ``tasks/cancel``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import SerializerFunctionWrapHandler, model_serializer

from ._base import MCPModel, NotificationParams, RequestParams, Result
from ._modern import TASKS_EXTENSION

__all__ = [
    "TASKS_EXTENSION",
    "CreateTaskResultV2",
    "DetailedTask",
    "TaskIdParams",
    "TaskStatusNotificationParamsV2",
    "TaskStatusV2",
    "TaskV2",
    "UpdateTaskRequestParams",
]

TaskStatusV2: TypeAlias = Literal["working", "input_required", "completed", "cancelled", "failed"]


class TaskV2(MCPModel):
    """A task's state (SEP-2663 ``Task``); ``ttl_ms`` is written even when ``null``."""

    task_id: str
    status: TaskStatusV2
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None

    @model_serializer(mode="wrap")
    def _always_write_ttl(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            data.setdefault("ttlMs", None)
        return data

    @property
    def is_terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in ("completed", "failed", "cancelled")


class DetailedTask(TaskV2, Result):
    """A task with what its status carries: ``input_requests``, ``result`` or ``error``.

    The answer to ``tasks/get`` (``resultType: "complete"``) and the params of
    ``notifications/tasks``.
    """

    input_requests: dict[str, dict[str, Any]] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class CreateTaskResultV2(TaskV2, Result):
    """``resultType: "task"``: the request goes on as a task with this seed state."""


class TaskIdParams(RequestParams):
    """Parameters for ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


class UpdateTaskRequestParams(RequestParams):
    """Parameters for ``tasks/update``: answers to the task's input requests."""

    task_id: str
    input_responses: dict[str, Any]


class TaskStatusNotificationParamsV2(DetailedTask, NotificationParams):
    """Parameters of ``notifications/tasks``: the full task, as ``tasks/get`` shows it."""
