"""The task runtime: runs the agent, applies its events, fans them out, deduplicates.

One `TaskRuntime` per server. Each accepted message becomes a `_Run` (one call of the
agent's ``execute``); each task with a run or a subscriber in progress has an `_Active`
record in memory. Rules:

1. Every event is applied under the task's lock in this order: new state computed
   (``_state``, may refuse), saved to the store, then offered to every subscriber and
   to push delivery. So a subscriber never sees an event the store does not have, and
   all subscribers of a task see the same events in the same order.
2. A subscriber is attached under the same lock and gets the `Task` as it is at that
   moment first; its stream closes after the next terminal or interrupted status, or at
   once when the task is already terminal. A subscriber that falls ``subscriber_buffer``
   events behind is cut off (its stream just ends; GetTask or SubscribeToTask catch up).
3. Runs of one task never overlap: a message for a task whose agent is still running
   waits for it (FIFO), then is refused if the task has become terminal.
4. A message is remembered from the moment its run starts, under its `message_key`
   (the caller's scope, its messageId and a digest of its content); a retried send of
   the same message joins the running run, or gets what the finished one produced, and
   never starts the agent again (a push config it carries is added to the task). A
   message that reuses an id with other content is a new message: it runs. So is a
   resend once the task it made has moved on through its id (a later client message,
   or CancelTask): a client that retries never got that id, so whoever sends it again
   got the first answer and means a new message. A run that produced nothing (the
   agent failed first) is forgotten, so a retry runs again.
5. Runs live in the runtime's own task group: a client that disconnects never stops
   the agent. Only CancelTask does. They are served by reused runner tasks (one per
   run in progress; a few stay idle for the next ones), in the context the runtime was
   started in, not the one of the request that sent the message.
6. With a `SharedTaskStore` (several replicas on one database) every change goes
   through ``replication`` (``_fanout``): compare-and-set writes, events of the
   other replicas fanned out to this one's subscribers, message ids claimed across
   replicas. Without one, none of that code runs.

`TaskRuntime` is the face the service talks to; each rule is kept by one part:

- ``_active``: `ActiveTasks`, the tasks in memory, their locks and subscribers; every
  change applied and fanned out (rules 1 and 2; ``_subscriber`` is one stream).
- ``_run``: `_Run`, one call of the agent and what it produced (the updater's sink).
- ``_agent_runs``: `AgentRuns`, runner tasks, one run at a time per task, the agent
  called, CancelTask (rules 3 and 5).
- ``_send``: `SendPath`, a message started, or joined to or replayed from an earlier
  send of it (rule 4, and the claims of rule 6).
- ``_fanout``: `Replication`, which sees the runtime only as its `LocalTasks`.
"""

from __future__ import annotations

import contextvars
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ._active import ActiveTasks, _Active
from ._agent_runs import AgentRuns
from ._executor import AgentExecutor, AgentFunction
from ._send import SendPath
from ._store import TaskStore
from .types import Message, SendMessageConfiguration, StreamResponse, Task

if TYPE_CHECKING:
    from ._fanout import Replication
    from ._push import PushDispatcher
    from ._run import _Run
    from ._subscriber import _Subscriber

__all__ = ["CallInfo", "TaskRuntime"]


@dataclass(frozen=True)
class CallInfo:
    """Who is calling and how: tenant, activated extensions, principal, headers.

    Once the service has scoped the call, ``tenant`` is the storage scope (the request's
    tenant and the caller's owner digest, see ``_store.scope_key``): every key the
    runtime builds from it is the caller's own.
    """

    tenant: str = ""
    extensions: frozenset[str] = frozenset()
    principal: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


class TaskRuntime:
    """Runs agents and keeps tasks consistent (see module rules)."""

    def __init__(
        self,
        executor: AgentExecutor | AgentFunction,
        store: TaskStore,
        *,
        push: PushDispatcher | None = None,
        subscriber_buffer: int = 256,
        cancel_grace: float = 10.0,
    ) -> None:
        self.executor = executor
        self.store = store
        self.push = push
        self.subscriber_buffer = subscriber_buffer
        self.cancel_grace = cancel_grace
        self.tasks = ActiveTasks(store, push=push, subscriber_buffer=subscriber_buffer)
        self.runs = AgentRuns(executor, self.tasks, cancel_grace=cancel_grace)
        self.sends = SendPath(self.tasks, self.runs)
        self.replication: Replication | None = self.tasks.replication

    # What is in memory, for debugging and tests: the tasks and the idle runner tasks.

    @property
    def _active(self) -> dict[tuple[str, str], _Active]:
        return self.tasks.records

    @property
    def _idle_runners(self) -> deque[anyio.Event]:
        return self.runs.idle_runners

    # -- lifetime --------------------------------------------------------------------

    async def run_until_cancelled(self, started: anyio.Event | None = None) -> None:
        """Host the agents' runs until cancelled (the server runs this in its lifespan)."""
        self.tasks.open()
        context = contextvars.copy_context()
        async with anyio.create_task_group() as task_group:
            self.runs.open(task_group, context)
            if self.replication is not None:
                await self.replication.run(task_group)
            if started is not None:
                started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.runs.close()
                task_group.cancel_scope.cancel()

    # -- the service's calls -----------------------------------------------------------

    async def start(
        self,
        message: Message,
        *,
        call: CallInfo,
        configuration: SendMessageConfiguration | None = None,
        metadata: Mapping[str, Any] | None = None,
        subscriber: _Subscriber | None = None,
    ) -> _Run:
        """Start the agent on ``message``, or find what an earlier send of the same message
        (same id, same content) produced (rule 4).

        ``subscriber`` (for streaming sends) is attached before the agent can emit
        anything. Raises `TaskNotFound`, `InvalidParams` (a contextId that is not the
        task's) and `UnsupportedOperation` (a terminal task) before anything runs.
        """
        return await self.sends.start(
            message,
            call=call,
            configuration=configuration,
            metadata=metadata,
            subscriber=subscriber,
        )

    def new_subscriber(self) -> _Subscriber:
        """A subscriber for `start` (streaming sends)."""
        return self.tasks.new_subscriber()

    def stream_run(self, run: _Run, sub: _Subscriber) -> AsyncIterator[StreamResponse]:
        """The events of a streaming send (``sub`` was given to `start`)."""
        return self.tasks.drain(sub, run=run)

    async def subscribe(self, task_id: str, *, tenant: str) -> AsyncIterator[StreamResponse]:
        """SubscribeToTask: the task now, then its events (a terminal task is refused)."""
        return await self.tasks.subscribe(task_id, tenant=tenant)

    async def cancel(self, task_id: str, *, tenant: str) -> Task:
        """CancelTask: stop the running agent, if any, and mark the task ``CANCELED``."""
        return await self.runs.cancel(task_id, tenant=tenant)
