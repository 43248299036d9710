"""`Task`, the core unit of action, and its `TaskStatus`."""

from __future__ import annotations

from ._base import A2AModel, Struct, Timestamp
from ._enums import TaskState
from ._message import Artifact, Message

__all__ = ["Task", "TaskStatus"]


class TaskStatus(A2AModel):
    """A container for the status of a task."""

    state: TaskState
    message: Message | None = None
    timestamp: Timestamp | None = None


class Task(A2AModel):
    """The core unit of action for A2A: a status, output artifacts and history.

    ``artifacts`` and ``history`` stay ``None`` (absent on the wire) unless set: ListTasks
    MUST omit ``artifacts`` when not asked for them (spec 3.1.4), and ``historyLength: 0``
    SHOULD omit ``history`` (spec 3.2.4).
    """

    id: str
    context_id: str | None = None
    status: TaskStatus
    artifacts: list[Artifact] | None = None
    history: list[Message] | None = None
    metadata: Struct | None = None
