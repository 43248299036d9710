"""Requests and responses of the message and task methods of ``A2AService``."""

from __future__ import annotations

from pydantic import Field

from ._base import A2AModel, HistoryLength, Int32, Struct, Timestamp
from ._enums import TaskState
from ._message import Message
from ._push import TaskPushNotificationConfig
from ._task import Task

__all__ = [
    "CancelTaskRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskRequest",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SubscribeToTaskRequest",
]


class SendMessageConfiguration(A2AModel):
    """Configuration of a send message request.

    ``return_immediately=False`` (the default) makes SendMessage wait until the task is
    terminal or interrupted (spec 3.2.2); it has no effect on streaming.
    """

    accepted_output_modes: list[str] | None = None
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: HistoryLength | None = None
    return_immediately: bool = False


class SendMessageRequest(A2AModel):
    """Represents a request for the `SendMessage` and `SendStreamingMessage` methods."""

    tenant: str | None = None
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: Struct | None = None


class GetTaskRequest(A2AModel):
    """Represents a request for the `GetTask` method."""

    tenant: str | None = None
    id: str
    history_length: HistoryLength | None = None


class ListTasksRequest(A2AModel):
    """Parameters for listing tasks with optional filtering criteria and paging."""

    tenant: str | None = None
    context_id: str | None = None
    status: TaskState | None = None
    # "The minimum value is 1. The maximum value is 100." (unset: at most 50)
    page_size: Int32 | None = Field(default=None, ge=1, le=100)
    page_token: str | None = None
    history_length: HistoryLength | None = None
    status_timestamp_after: Timestamp | None = None
    include_artifacts: bool | None = None


class ListTasksResponse(A2AModel):
    """Result of `ListTasks`: one page of tasks and pagination information.

    Every member is always written: ``next_page_token`` is ``""`` on the last page
    (spec 3.1.4).
    """

    tasks: list[Task] = Field(default_factory=list)
    next_page_token: str = ""
    page_size: Int32 = 0
    total_size: Int32 = 0


class CancelTaskRequest(A2AModel):
    """Represents a request for the `CancelTask` method."""

    tenant: str | None = None
    id: str
    metadata: Struct | None = None


class SubscribeToTaskRequest(A2AModel):
    """Represents a request for the `SubscribeToTask` method."""

    tenant: str | None = None
    id: str


class GetExtendedAgentCardRequest(A2AModel):
    """Represents a request for the `GetExtendedAgentCard` method."""

    tenant: str | None = None
