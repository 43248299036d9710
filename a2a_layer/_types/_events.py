"""Streaming events and the two ``oneof`` wrappers that carry results.

`StreamResponse` is what every SSE ``data:`` line and every push-notification body
carries (spec 3.2.3, 4.3.3); `SendMessageResponse` is the result of SendMessage.
"""

from __future__ import annotations

from typing import TypeAlias

from pydantic import model_validator
from typing_extensions import Self

from ._base import A2AModel, Struct
from ._message import Artifact, Message
from ._task import Task, TaskStatus

__all__ = [
    "SendMessageResponse",
    "StreamEvent",
    "StreamResponse",
    "TaskArtifactUpdateEvent",
    "TaskStatusUpdateEvent",
]


class TaskStatusUpdateEvent(A2AModel):
    """An event sent by the agent to notify the client of a change in a task's status."""

    task_id: str
    context_id: str
    status: TaskStatus
    metadata: Struct | None = None


class TaskArtifactUpdateEvent(A2AModel):
    """A task delta where an artifact has been generated.

    ``append``: add the parts to the artifact with the same id sent before;
    ``last_chunk``: this is the final chunk of the artifact.
    """

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Struct | None = None


StreamEvent: TypeAlias = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""Anything a stream can carry, unwrapped."""

_STREAM_MEMBERS = ("task", "message", "status_update", "artifact_update")


class StreamResponse(A2AModel):
    """A wrapper used in streaming operations: exactly one of the four payloads."""

    task: Task | None = None
    message: Message | None = None
    status_update: TaskStatusUpdateEvent | None = None
    artifact_update: TaskArtifactUpdateEvent | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        self._one_of(_STREAM_MEMBERS, "StreamResponse")
        return self

    @property
    def payload(self) -> StreamEvent:
        """The member that is set."""
        return getattr(self, self._one_of(_STREAM_MEMBERS, "StreamResponse"))  # type: ignore[no-any-return]

    @classmethod
    def wrap(cls, event: StreamEvent) -> StreamResponse:
        """Put ``event`` in the member its type calls for."""
        if isinstance(event, Task):
            return cls(task=event)
        if isinstance(event, Message):
            return cls(message=event)
        if isinstance(event, TaskStatusUpdateEvent):
            return cls(status_update=event)
        if isinstance(event, TaskArtifactUpdateEvent):
            return cls(artifact_update=event)
        raise TypeError(f"not a stream event: {type(event).__name__}")


class SendMessageResponse(A2AModel):
    """The response of SendMessage: the task created or updated, or a direct message."""

    task: Task | None = None
    message: Message | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        self._one_of(("task", "message"), "SendMessageResponse")
        return self

    @property
    def payload(self) -> Task | Message:
        """The member that is set."""
        return self.task if self.task is not None else self.message  # type: ignore[return-value]

    @classmethod
    def wrap(cls, result: Task | Message) -> SendMessageResponse:
        """Put ``result`` in the member its type calls for."""
        if isinstance(result, Task):
            return cls(task=result)
        if isinstance(result, Message):
            return cls(message=result)
        raise TypeError(f"not a Task or Message: {type(result).__name__}")
