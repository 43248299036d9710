"""The agent author's API: `AgentExecutor`, `ExecutionContext` and `TaskUpdater`.

An agent is an object with ``async execute(context, updater)`` (or a plain async
function of the same shape). The server calls it once per accepted message: for a new
task, and again for each later message sent to the same task (an answer after
``input-required``). The agent reports through the updater::

    async def execute(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await updater.add_artifact([Part(text="partial ")], artifact_id="a1")
        await updater.add_artifact([Part(text="result")], artifact_id="a1",
                                   append=True, last_chunk=True)
        await updater.complete("done")

Rules:

1. The first task event (``submit``, ``start_work``, ``add_artifact``, ...) creates the
   task; ``reply`` instead answers with a direct `Message` and no task is created.
2. The updater refuses what the task state does not allow (`InvalidTransition`):
   nothing after a terminal state, no ``reply`` once a task exists.
3. When ``execute`` returns, the updater is closed. A task left neither terminal nor
   interrupted is marked failed; an exception from ``execute`` also fails the task
   (its text is logged, never sent to the client).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._state import InvalidTransition
from ._types._base import trusted
from .types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    Task,
    TaskState,
)

__all__ = [
    "AgentExecutor",
    "AgentFunction",
    "ExecutionContext",
    "TaskUpdater",
    "agent_message",
    "new_id",
    "text_of",
]


def new_id() -> str:
    """A new random identifier (a UUID4 string) for tasks, contexts, messages, artifacts."""
    # What str(uuid.uuid4()) gives (os.urandom, version 4, RFC 4122 variant), faster.
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def text_of(source: Message | Artifact | Sequence[Part] | None) -> str:
    """The text parts of a message, an artifact or a list of parts, joined."""
    if source is None:
        return ""
    parts = source if isinstance(source, Sequence) else source.parts
    return "".join(p.text for p in parts if p.text is not None)


def _parts(content: str | Part | Sequence[Part]) -> list[Part]:
    if isinstance(content, str):
        return [Part(text=content)]
    if isinstance(content, Part):
        return [content]
    return list(content)


def agent_message(
    content: str | Part | Sequence[Part],
    *,
    context_id: str | None = None,
    task_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Message:
    """A message from the agent (role ``ROLE_AGENT``) with a fresh message id."""
    return Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=_parts(content),
        context_id=context_id,
        task_id=task_id,
        metadata=dict(metadata) if metadata is not None else None,
    )


@dataclass(frozen=True)
class ExecutionContext:
    """What the agent knows about the message it is asked to handle.

    ``task`` is the task as it was before this message (``None`` for a new task);
    ``message`` already carries the task and context ids. ``extensions`` are the
    requested extensions this agent declares (activated for this request).
    """

    message: Message
    task_id: str
    context_id: str
    task: Task | None = None
    configuration: SendMessageConfiguration | None = None
    metadata: Mapping[str, Any] | None = None
    tenant: str | None = None
    extensions: frozenset[str] = frozenset()
    principal: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text of the incoming message."""
        return text_of(self.message)

    @property
    def is_new_task(self) -> bool:
        """Whether this message starts a new task (rather than continuing one)."""
        return self.task is None

    @property
    def history(self) -> list[Message]:
        """The task's history before this message (empty for a new task)."""
        return list(self.task.history or []) if self.task is not None else []


class _Sink(Protocol):
    """Where a `TaskUpdater` sends what the agent reports (the server's runtime)."""

    async def status(
        self, state: TaskState, message: Message | None, metadata: Mapping[str, Any] | None
    ) -> None: ...

    async def artifact(
        self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        metadata: Mapping[str, Any] | None,
    ) -> None: ...

    async def reply(self, message: Message) -> None: ...

    async def submit(self) -> None: ...


class _ClosedSink:
    """The sink of a closed `TaskUpdater` (never reached: the updater refuses first)."""

    async def status(
        self, state: TaskState, message: Message | None, metadata: Mapping[str, Any] | None
    ) -> None:
        raise InvalidTransition("the execution has ended: this updater is closed")

    async def artifact(
        self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        raise InvalidTransition("the execution has ended: this updater is closed")

    async def reply(self, message: Message) -> None:
        raise InvalidTransition("the execution has ended: this updater is closed")

    async def submit(self) -> None:
        raise InvalidTransition("the execution has ended: this updater is closed")


_CLOSED_SINK = _ClosedSink()


class TaskUpdater:
    """Reports task progress for one execution (see module rules)."""

    def __init__(self, sink: _Sink, task_id: str, context_id: str) -> None:
        self._sink = sink
        self.task_id = task_id
        self.context_id = context_id
        self._closed = False

    def close(self) -> None:
        """Refuse further updates (the server calls this when ``execute`` returns)."""
        self._closed = True
        # The sink (the server's run) refers back to this updater: dropping it lets the
        # run be freed as soon as it is done, instead of by the cycle collector.
        self._sink = _CLOSED_SINK

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidTransition("the execution has ended: this updater is closed")

    def message(
        self, content: str | Part | Sequence[Part], *, metadata: Mapping[str, Any] | None = None
    ) -> Message:
        """An agent message for this task (to attach to a status)."""
        return agent_message(
            content, context_id=self.context_id, task_id=self.task_id, metadata=metadata
        )

    def _as_message(self, message: Message | str | None) -> Message | None:
        if message is None or isinstance(message, Message):
            if message is not None and (message.task_id is None or message.context_id is None):
                message = message.model_copy(
                    update={
                        "task_id": message.task_id or self.task_id,
                        "context_id": message.context_id or self.context_id,
                    }
                )
            return message
        return self.message(message)

    async def update_status(
        self,
        state: TaskState,
        message: Message | str | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Move the task to ``state``, with an optional agent message."""
        self._check_open()
        await self._sink.status(state, self._as_message(message), metadata)

    async def submit(self) -> None:
        """Create the task in ``SUBMITTED`` (other calls do this on their own)."""
        self._check_open()
        await self._sink.submit()

    async def start_work(self, message: Message | str | None = None) -> None:
        """The task is being worked on (``WORKING``)."""
        await self.update_status(TaskState.WORKING, message)

    async def add_artifact(
        self,
        parts: str | Part | Sequence[Part],
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool = False,
        last_chunk: bool = False,
        metadata: Mapping[str, Any] | None = None,
        extensions: Sequence[str] | None = None,
    ) -> str:
        """Add an artifact, or a chunk of one (``append=True`` extends ``artifact_id``).

        Returns the artifact id (a new one when not given), for the following chunks.
        """
        self._check_open()
        artifact_id = artifact_id or new_id()
        if (
            type(parts) is str
            and type(artifact_id) is str
            and (name is None or type(name) is str)
            and (description is None or type(description) is str)
            and metadata is None
            and extensions is None
        ):
            # The usual text chunk: every value is known good, nothing to validate.
            artifact = trusted(
                Artifact,
                artifact_id=artifact_id,
                name=name,
                description=description,
                parts=[trusted(Part, text=parts)],
                metadata=None,
                extensions=None,
            )
        else:
            artifact = Artifact(
                artifact_id=artifact_id,
                name=name,
                description=description,
                parts=_parts(parts),
                metadata=dict(metadata) if metadata is not None else None,
                extensions=list(extensions) if extensions is not None else None,
            )
        await self._sink.artifact(artifact, append, last_chunk, None)
        return artifact.artifact_id

    async def requires_input(self, message: Message | str | None = None) -> None:
        """Ask the client for more input (``INPUT_REQUIRED``); return from ``execute`` next."""
        await self.update_status(TaskState.INPUT_REQUIRED, message)

    async def requires_auth(self, message: Message | str | None = None) -> None:
        """Ask the client to authenticate (``AUTH_REQUIRED``)."""
        await self.update_status(TaskState.AUTH_REQUIRED, message)

    async def complete(self, message: Message | str | None = None) -> None:
        """The task is done (``COMPLETED``, terminal)."""
        await self.update_status(TaskState.COMPLETED, message)

    async def fail(self, message: Message | str | None = None) -> None:
        """The task failed (``FAILED``, terminal)."""
        await self.update_status(TaskState.FAILED, message)

    async def reject(self, message: Message | str | None = None) -> None:
        """The agent declines the task (``REJECTED``, terminal)."""
        await self.update_status(TaskState.REJECTED, message)

    async def cancel(self, message: Message | str | None = None) -> None:
        """The task is canceled (``CANCELED``, terminal)."""
        await self.update_status(TaskState.CANCELED, message)

    async def reply(self, content: Message | str | Part | Sequence[Part]) -> None:
        """Answer with a direct message instead of a task (only before any task event)."""
        self._check_open()
        if isinstance(content, Message):
            message = content
            if message.context_id is None:
                message = message.model_copy(update={"context_id": self.context_id})
        else:
            message = agent_message(content, context_id=self.context_id)
        await self._sink.reply(message)


class AgentExecutor:
    """Base class for agents: override `execute`, and `cancel` if the agent can stop.

    A plain ``async def agent(context, updater)`` function works too.
    """

    async def execute(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        """Handle one accepted message (see the module docstring)."""
        raise NotImplementedError

    async def cancel(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        """Called on CancelTask before the running ``execute`` is cancelled.

        Raise `TaskNotCancelable` to refuse. The default does nothing: the server
        cancels ``execute`` and marks the task ``CANCELED``.
        """


AgentFunction = Callable[[ExecutionContext, TaskUpdater], Awaitable[None]]
"""An agent written as a plain async function."""
