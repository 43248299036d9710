"""One call of the agent's ``execute``: the sink of its `TaskUpdater`, and what it produced.

A `_Run` is made by the send path (``_send``) for an accepted message, or stands for
what an earlier send of the same message produced (`_Run.replay`). The agent's reports
arrive here and become events applied through `ActiveTasks` (the runtime's rule 1);
requests wait on its events (``first``, ``settled``, ``done``) and read its results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from jsonrpc_core import JsonRpcError

from ._active import closes
from ._executor import ExecutionContext, TaskUpdater
from ._state import InvalidTransition, utc_now
from ._store import MessageRecord
from ._subscriber import _Subscriber
from ._types._base import A2AModel, replaced, trusted
from .types import (
    Artifact,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from ._active import ActiveTasks, _Active
    from ._runtime import CallInfo

__all__ = ["_Run"]


class _Run:
    """One call of the agent's ``execute`` (the `TaskUpdater`'s sink)."""

    def __init__(
        self,
        tasks: ActiveTasks,
        message: Message,
        context: ExecutionContext,
        call: CallInfo,
        key: str,
    ) -> None:
        self.tasks = tasks
        self.message = message
        self.message_key = key  # the client's message as remembered (``message_key``)
        self.context = context
        self.call = call
        self.tenant = call.tenant
        self.task_id = context.task_id
        self.context_id = context.context_id
        self.active: _Active | None = None
        self.answer: Message | None = None
        self.error: JsonRpcError | None = None
        self.replayed_task: Task | None = None
        self.listeners: list[_Subscriber] = []
        self.first = anyio.Event()  # a task exists, or a reply or an error is known
        self.settled = anyio.Event()  # blocking sends may return
        self.done = anyio.Event()  # execute has returned and the run is finalised
        self.cancel_scope = anyio.CancelScope()
        self.cancel_requested = False
        self.updater = TaskUpdater(self, self.task_id, self.context_id)

    @classmethod
    def replay(
        cls, tasks: ActiveTasks, message: Message, call: CallInfo, key: str, record: Any
    ) -> _Run:
        """A finished run standing for what an earlier send of this message produced."""
        task, reply = record
        ctx = ExecutionContext(
            message=message,
            task_id=task.id if task else "",
            context_id=(task.context_id if task else reply.context_id) or "",
        )
        run = cls(tasks, message, ctx, call, key)
        run.replayed_task, run.answer = task, reply
        for event in (run.first, run.settled, run.done):
            event.set()
        return run

    # -- results ---------------------------------------------------------------------

    async def current_task(self) -> Task | None:
        """The task this run works on, as the store has it now."""
        tasks = self.tasks
        if self.replayed_task is not None:
            return await tasks.store.get_task(self.task_id, tenant=self.tenant)
        if self.active is None:
            return None
        if tasks.replication is not None and (
            self.active.task.status.state.is_terminal  # a terminal task never changes
            or tasks.get((self.tenant, self.task_id)) is self.active
        ):
            return self.active.task  # kept in step with the shared store (rule 6)
        stored = await tasks.store.get_task(self.task_id, tenant=self.tenant)
        return stored or self.active.task

    async def attach(self, sub: _Subscriber) -> None:
        """Feed ``sub`` this run's events: the first event, then the task's (rule 2)."""
        if self.error is not None:
            sub.offer(self.error)
            sub.close()
        elif self.answer is not None:
            sub.offer(trusted(StreamResponse, message=self.answer))
            sub.close()
        elif self.replayed_task is not None:
            task = await self.current_task() or self.replayed_task
            sub.offer(trusted(StreamResponse, task=task))
            sub.close()
        elif self.active is not None:
            await self.tasks.add_subscriber(self.active, sub, settled=self.settled.is_set())
        else:
            self.listeners.append(sub)

    def fail(self, error: JsonRpcError) -> None:
        """End the run with ``error`` (before it made a task or a reply)."""
        self.error = error
        for sub in self.listeners:
            sub.offer(error)
            sub.close()
        self.listeners.clear()

    # -- the sink --------------------------------------------------------------------

    async def _ensure_task(self) -> _Active:
        if self.active is not None:
            return self.active
        if self.answer is not None:
            raise InvalidTransition("the agent already replied with a message: no task follows")
        return await self.tasks.create_task(self)

    async def submit(self) -> None:
        await self._ensure_task()

    async def status(
        self, state: TaskState, message: Message | None, metadata: Mapping[str, Any] | None
    ) -> None:
        active = await self._ensure_task()
        status = _made(
            TaskStatus,
            isinstance(state, TaskState) and (message is None or type(message) is Message),
            state=state,
            message=message,
            timestamp=utc_now(),
        )
        event = _made(
            TaskStatusUpdateEvent,
            metadata is None,
            task_id=self.task_id,
            context_id=self.context_id,
            status=status,
            metadata=None if metadata is None else dict(metadata),
        )
        await self.tasks.apply(active, event)
        if closes(state):
            self.settled.set()

    async def artifact(
        self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        active = await self._ensure_task()
        event = _made(
            TaskArtifactUpdateEvent,
            metadata is None
            and type(artifact) is Artifact
            and type(append) is bool
            and type(last_chunk) is bool,
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
            metadata=None if metadata is None else dict(metadata),
        )
        await self.tasks.apply(active, event)

    async def reply(self, message: Message) -> None:
        if self.active is not None:
            raise InvalidTransition("a task exists: the agent reports through it, not a reply")
        if self.answer is not None:
            raise InvalidTransition("the agent already replied")
        message = replaced(message, role=Role.AGENT, task_id=None)
        await self.tasks.store.save_message(
            self.message_key, MessageRecord(reply=message), tenant=self.tenant
        )
        self.answer = message
        for sub in self.listeners:
            await self.attach(sub)
        self.listeners.clear()
        self.first.set()
        self.settled.set()


_M = TypeVar("_M", bound=A2AModel)


def _made(cls: type[_M], trust: bool, /, **values: Any) -> _M:
    """``cls(**values)``, built without validation when ``trust`` says the values are
    the server's own, already of their fields' types (`trusted`)."""
    return trusted(cls, **values) if trust else cls(**values)
