"""The tasks a runtime keeps in memory: their locks, their events applied and fanned out.

A task with a run or a subscriber in progress has one `_Active` record in `ActiveTasks`,
found by ``(tenant, task id)``. The record lives while somebody uses it (`acquire` and
`release`; each subscriber counts as a user). The runtime's rules 1 and 2 (see
``_runtime``) are kept here: `apply` and `create_task` change a task and offer the change
to its subscribers and to push delivery; `add_subscriber` starts a subscriber's stream.

With a `SharedTaskStore`, ``replication`` (``_fanout``) writes every change and keeps the
records in step with the other replicas; it reaches back only through the methods its
`LocalTasks` protocol names.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel

from jsonrpc_core import InternalError, InvalidParams, JsonRpcError

from ._errors import TaskNotFound, UnsupportedOperation
from ._state import apply_artifact, apply_status, new_task
from ._store import MessageRecord, TaskStore
from ._subscriber import _Subscriber
from ._types._base import trusted
from .types import (
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from ._fanout import Replication
    from ._push import PushDispatcher
    from ._run import _Run

__all__ = [
    "ActiveTasks",
    "TaskKey",
    "_Active",
    "check_continuation",
    "closes",
    "settles",
    "terminal_error",
]

TaskKey = tuple[str, str]
"""``(tenant, task id)``: how the runtime finds a task in memory."""


def closes(state: TaskState) -> bool:
    """Whether a status in ``state`` ends the streams that follow the task (rule 2)."""
    return state.is_terminal or state.is_interrupted


def settles(event: StreamResponse | None) -> bool:
    """Whether ``event`` is a status that `closes` the task's streams."""
    return (
        event is not None
        and event.status_update is not None
        and closes(event.status_update.status.state)
    )


class _Active:
    """A task with a run or subscribers in progress (rule 1)."""

    def __init__(self, task: Task, tenant: str) -> None:
        self.task = task
        self.tenant = tenant
        # No scheduling point on an uncontended acquire: `apply` yields when a
        # subscriber's queue fills up instead (see `ActiveTasks._relieve`).
        self.lock = anyio.Lock(fast_acquire=True)
        self._slot: anyio.Semaphore | None = None
        self.subscribers: list[_Subscriber] = []
        self.run: _Run | None = None
        self.users = 0
        self.seq = 0  # the number of the stored change `task` is at (shared stores only)

    @property
    def slot(self) -> anyio.Semaphore:
        """Rule 3: held by the continuation running on this task (made on first use)."""
        if self._slot is None:
            self._slot = anyio.Semaphore(1)
        return self._slot


class ActiveTasks:
    """The tasks in memory, their subscribers, and every change made to them (rules 1, 2)."""

    def __init__(
        self, store: TaskStore, *, push: PushDispatcher | None, subscriber_buffer: int
    ) -> None:
        self.store = store
        self.push = push
        self.subscriber_buffer = subscriber_buffer
        self._relief_at = max(1, min(32, subscriber_buffer // 2))
        self.records: dict[TaskKey, _Active] = {}
        # Created in `open`: the server may be built outside the event loop (or in
        # another one) than the one that serves it.
        self._activation: anyio.Lock | None = None
        self.replication: Replication | None = None
        # A `SharedTaskStore` exists only once ``_shared`` is loaded: a process with a
        # plain store never loads the replication machinery (``_shared``, ``_fanout``).
        shared = sys.modules.get(f"{__package__}._shared")
        if shared is not None and isinstance(store, shared.SharedTaskStore):
            from ._fanout import Replication

            self.replication = Replication(self, store)

    def open(self) -> None:
        """Let records be made (in the event loop that serves the runtime)."""
        self._activation = anyio.Lock()

    # -- records -----------------------------------------------------------------------

    def get(self, key: TaskKey) -> _Active | None:
        """The record of the task ``key`` names, if it is in memory."""
        return self.records.get(key)

    def keys(self) -> list[TaskKey]:
        """The keys of every task in memory (a copy)."""
        return list(self.records)

    async def acquire(self, tenant: str, task_id: str) -> _Active:
        """The task's record, loaded if need be, with one more user (`release` it)."""
        if self._activation is None:
            raise InternalError("Internal error: the server is not running")
        async with self._activation:
            active = self.records.get((tenant, task_id))
            if active is None:
                if self.replication is not None:
                    snapshot = await self.replication.store.load_task(task_id, tenant=tenant)
                    task, seq = (snapshot.task, snapshot.seq) if snapshot else (None, 0)
                else:
                    task, seq = await self.store.get_task(task_id, tenant=tenant), 0
                if task is None:
                    raise TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})
                active = self.records[(tenant, task_id)] = _Active(task, tenant)
                active.seq = seq
                if self.replication is not None:
                    # Changes announced while the task was being read were not matched to
                    # it: read them now.
                    self.replication.schedule((tenant, task_id))
            active.users += 1
            return active

    def release(self, active: _Active) -> None:
        """One user less; the record is forgotten with its last user."""
        active.users -= 1
        key = (active.tenant, active.task.id)
        if active.users <= 0 and self.records.get(key) is active:
            del self.records[key]

    # -- subscribers (rule 2) ----------------------------------------------------------

    def new_subscriber(self) -> _Subscriber:
        """A subscriber with the runtime's buffer."""
        return _Subscriber(self.subscriber_buffer)

    async def add_subscriber(self, active: _Active, sub: _Subscriber, *, settled: bool) -> None:
        """Rule 2: the current task first, then every later event."""
        async with active.lock:
            await self.attach_locked(active, sub, settled=settled)

    async def attach_locked(self, active: _Active, sub: _Subscriber, *, settled: bool) -> None:
        """`add_subscriber` for a caller holding ``active.lock``."""
        task = active.task
        if not sub.offer(trusted(StreamResponse, task=task)):
            return
        state = task.status.state
        if state.is_terminal or (settled and state.is_interrupted):
            sub.close()
            return
        active.subscribers.append(sub)
        active.users += 1

    def drop_subscriber(self, active: _Active, sub: _Subscriber) -> None:
        """Stop offering ``active``'s events to ``sub`` (and release its use)."""
        if sub in active.subscribers:
            active.subscribers.remove(sub)
            self.release(active)

    async def subscribe(self, task_id: str, *, tenant: str) -> AsyncIterator[StreamResponse]:
        """SubscribeToTask: the task now, then its events (a terminal task is refused)."""
        active = await self.acquire(tenant, task_id)
        try:
            if active.task.status.state.is_terminal:
                raise terminal_error(active.task)
            sub = _Subscriber(self.subscriber_buffer)
            await self.add_subscriber(active, sub, settled=False)
        finally:
            self.release(active)
        return self.drain(sub, active=active)

    async def drain(
        self, sub: _Subscriber, *, run: _Run | None = None, active: _Active | None = None
    ) -> AsyncIterator[StreamResponse]:
        """The events ``sub`` receives, as a stream that drops ``sub`` when it ends."""
        try:
            async with sub:
                async for item in sub:
                    if isinstance(item, JsonRpcError):
                        raise item
                    yield item
        finally:
            sub.close()
            if run is not None:
                active = run.active  # known only once the run has made its task
            for candidate in (active, *self.records.values()):
                if candidate is not None and sub in candidate.subscribers:
                    self.drop_subscriber(candidate, sub)
                    break

    # -- changes (rule 1) --------------------------------------------------------------

    async def apply(
        self, active: _Active, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    ) -> None:
        """Rule 1 for one event of the agent."""
        status = isinstance(event, TaskStatusUpdateEvent)
        ends = isinstance(event, TaskStatusUpdateEvent) and closes(event.status.state)
        replication = self.replication
        lock = active.lock
        if lock.locked():
            await lock.acquire()
        else:
            lock.acquire_nowait()  # the usual case, without the awaitable's bookkeeping
        try:
            wrapped = None
            if replication is not None or active.subscribers or self.push is not None:
                wrapped = (
                    trusted(StreamResponse, status_update=event)
                    if status
                    else trusted(StreamResponse, artifact_update=event)
                )
            if replication is not None:
                assert wrapped is not None

                def compute(current: Task) -> tuple[Task, StreamResponse]:
                    return _applied(current, event), wrapped

                await replication.write(active, compute)
            else:
                task = _applied(active.task, event)
                await self.store.save_task(task, tenant=active.tenant)
                active.task = task
            if wrapped is not None:
                self.broadcast(active, wrapped, closes=ends)
        finally:
            lock.release()
        if active.subscribers:
            await self._relieve(active)

    async def _relieve(self, active: _Active) -> None:
        """Let the consumers run once their queues fill up.

        Events are applied without a scheduling point of their own, so an agent that
        never awaits anything else could fill a subscriber's queue before its consumer
        runs and have it cut off (rule 2). Past half the buffer (or a few dozen items),
        every event gives the loop one turn, as any consumer that keeps up needs.
        """
        limit = self._relief_at
        for sub in active.subscribers:
            if sub.pending >= limit:
                await anyio.lowlevel.checkpoint()
                return

    def broadcast(
        self, active: _Active, event: StreamResponse, *, closes: bool, push: bool = True
    ) -> None:
        """Offer ``event`` to ``active``'s subscribers (hold its lock), and to push
        delivery unless ``push`` is false; ``closes`` ends the subscribers' streams."""
        for sub in list(active.subscribers):
            if not sub.offer(event) or closes:
                sub.close()
                self.drop_subscriber(active, sub)
        if push and self.push is not None:
            self.push.publish(active.tenant, active.task.id, event)

    async def create_task(self, run: _Run) -> _Active:
        """Rule 1 for a new task: saved, registered, announced to the run's listeners."""
        task = new_task(run.task_id, run.context_id, run.message)
        config = run.context.configuration
        push_config = config.task_push_notification_config if config else None
        if push_config is not None and self.push is not None:
            # Checked by the service before the run started (URL and room).
            await self.push.add_config(
                push_config, task_id=task.id, tenant=run.tenant, checked=True
            )
        seq = 0
        if self.replication is not None:
            seq = await self.replication.store.append(
                task,
                trusted(StreamResponse, task=task),
                tenant=run.tenant,
                after=0,
                message_id=run.message_key,
            )
        else:
            await self.store.save_task(task, tenant=run.tenant)
            await self.store.save_message(
                run.message_key, MessageRecord(task_id=task.id), tenant=run.tenant
            )
        active = _Active(task, run.tenant)
        active.seq = seq
        active.users = 1
        active.run = run
        self.records[(run.tenant, task.id)] = active
        run.active = active
        if self.push is not None:
            async with active.lock:
                self.push.publish(run.tenant, task.id, trusted(StreamResponse, task=task))
        streamed = bool(run.listeners)
        for sub in run.listeners:
            await self.add_subscriber(active, sub, settled=False)
        run.listeners.clear()
        run.first.set()
        if streamed:
            # The streams' consumers take the new task before the agent goes on: a stream
            # then starts with one burst of the agent's events at most behind it, not two.
            await anyio.lowlevel.checkpoint()
        return active


def _applied(task: Task, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Task:
    if isinstance(event, TaskStatusUpdateEvent):
        return apply_status(task, event)
    return apply_artifact(task, event)


def terminal_error(task: Task) -> UnsupportedOperation:
    """The error for a message or a subscription that reaches a terminal task."""
    return UnsupportedOperation(
        f"Task {task.id} is {task.status.state.value}: a terminal task accepts no more "
        "messages or subscriptions (send a new message in the same context instead)",
        metadata={"taskId": task.id},
    )


def check_continuation(message: Message, task: Task | None) -> None:
    """Refuse ``message`` as a continuation of ``task`` (missing, other context, terminal)."""
    if task is None:
        task_id = message.task_id or ""
        raise TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})
    if message.context_id and task.context_id and message.context_id != task.context_id:
        raise InvalidParams(
            f"Invalid params: message.contextId {message.context_id!r} does not match the "
            f"contextId {task.context_id!r} of task {task.id}"
        )
    if task.status.state.is_terminal:
        raise terminal_error(task)
