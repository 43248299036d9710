"""Tasks (experimental in 2025-11-25): durable, pollable wrappers around a request.

A requestor adds ``task`` (a `TaskMetadata`) to the params of ``tools/call``,
``sampling/createMessage`` or ``elicitation/create``; the receiver answers at once with
a `CreateTaskResult`, and the real result is fetched later with ``tasks/result``.

``Task.ttl`` is required by the schema but may be ``null`` ("unlimited"): the model
accepts a missing ``ttl`` as ``None`` and always writes the member, ``null`` included.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import SerializerFunctionWrapHandler, model_serializer

from ._base import MCPModel, NotificationParams, PaginatedResult, RequestParams, Result
from ._task_params import TaskAugmentedRequestParams, TaskMetadata

__all__ = [
    "MODEL_IMMEDIATE_RESPONSE_META_KEY",
    "RELATED_TASK_META_KEY",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequestParams",
    "GetTaskResult",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
]

RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"
"""``_meta`` key (value: a `RelatedTaskMetadata`) on every message tied to a task."""

MODEL_IMMEDIATE_RESPONSE_META_KEY = "io.modelcontextprotocol/model-immediate-response"
"""Optional ``_meta`` key of a `CreateTaskResult`: a string to hand the model at once."""

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""The status of a task; ``completed``, ``failed`` and ``cancelled`` are terminal."""


class RelatedTaskMetadata(MCPModel):
    """Metadata associating a message with a task (under `RELATED_TASK_META_KEY`)."""

    task_id: str


class Task(MCPModel):
    """Data associated with a task."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    """Human-readable message describing the current state (any status)."""
    created_at: str
    """ISO 8601 timestamp when the task was created."""
    last_updated_at: str
    """ISO 8601 timestamp when the task was last updated."""
    ttl: int | None = None
    """Retention from creation in milliseconds; ``None`` (``null``) means unlimited."""
    poll_interval: int | None = None
    """Suggested polling interval in milliseconds."""

    @model_serializer(mode="wrap")
    def _always_write_ttl(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            data.setdefault("ttl", None)
        return data

    @property
    def is_terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in ("completed", "failed", "cancelled")


class CreateTaskResult(Result):
    """The immediate response to a task-augmented request."""

    task: Task


class GetTaskRequestParams(RequestParams):
    """Parameters for a ``tasks/get`` request."""

    task_id: str


class GetTaskResult(Task, Result):
    """The response to a ``tasks/get`` request: the task itself."""


class GetTaskPayloadRequestParams(RequestParams):
    """Parameters for a ``tasks/result`` request."""

    task_id: str


class GetTaskPayloadResult(Result):
    """The response to ``tasks/result``: the original request's result, members kept as-is.

    Validate it into the original result type, e.g.
    ``CallToolResult.model_validate(payload.model_dump())``.
    """


class ListTasksResult(PaginatedResult):
    """The response to a ``tasks/list`` request."""

    tasks: list[Task]


class CancelTaskRequestParams(RequestParams):
    """Parameters for a ``tasks/cancel`` request."""

    task_id: str


class CancelTaskResult(Task, Result):
    """The response to a ``tasks/cancel`` request: the task, now ``cancelled``."""


class TaskStatusNotificationParams(Task, NotificationParams):
    """Parameters for ``notifications/tasks/status``: the full, updated task."""
