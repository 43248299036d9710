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
   through ``self.replication`` (``_fanout``): compare-and-set writes, events of the
   other replicas fanned out to this one's subscribers, message ids claimed across
   replicas. Without one, none of that code runs.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from jsonrpc_core import InternalError, InvalidParams, JsonRpcError

from ._errors import InvalidAgentResponse, TaskNotCancelable, TaskNotFound, UnsupportedOperation
from ._executor import AgentExecutor, AgentFunction, ExecutionContext, TaskUpdater, new_id
from ._state import (
    InvalidTransition,
    append_history,
    apply_artifact,
    apply_status,
    new_task,
    utc_now,
)
from ._store import MessageRecord, TaskStore, message_key, public_tenant
from ._types._base import A2AModel, replaced, trusted
from .types import (
    Artifact,
    Message,
    Role,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from ._fanout import Replication
    from ._push import PushDispatcher
    from ._shared import Claim

__all__ = ["CallInfo", "TaskRuntime"]

logger = logging.getLogger("a2a_layer.runtime")

_Item = StreamResponse | JsonRpcError

_IDLE_RUNNERS = 16
"""How many runner tasks stay idle, waiting for the next run (rule 5)."""


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


def _closes(state: TaskState) -> bool:
    return state.is_terminal or state.is_interrupted


class _Subscriber:
    """One stream of events for one consumer (bounded; see rule 2).

    A queue without a scheduling point per item: `offer` never blocks, and the consumer
    takes queued items without giving up the event loop first (it waits only when the
    queue is empty). Use it as ``async with sub: async for item in sub``.
    """

    __slots__ = ("_buffer", "_closed", "_gone", "_items", "_wakeup")

    def __init__(self, buffer: int) -> None:
        self._buffer = buffer
        self._items: deque[_Item] = deque()
        self._closed = False  # no more items will come (the queued ones still do)
        self._gone = False  # the consumer stopped reading
        self._wakeup: anyio.Event | None = None

    def offer(self, item: _Item) -> bool:
        """Queue ``item``; ``False`` (and the stream closed) if the consumer is gone or slow."""
        if self._closed or self._gone:
            return False
        if self._wakeup is None and len(self._items) >= self._buffer:
            logger.info("a subscriber fell behind and was cut off")
            self.close()
            return False
        self._items.append(item)
        self._wake()
        return True

    @property
    def pending(self) -> int:
        """How many items wait for the consumer."""
        return len(self._items)

    def close(self) -> None:
        """No more items: the consumer gets the queued ones, then the stream ends."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            wakeup.set()

    async def __aenter__(self) -> _Subscriber:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._gone = True
        self._items.clear()

    def __aiter__(self) -> _Subscriber:
        return self

    async def __anext__(self) -> _Item:
        items = self._items
        while not items:
            if self._closed or self._gone:
                raise StopAsyncIteration
            wakeup = self._wakeup = anyio.Event()
            try:
                await wakeup.wait()
            finally:
                if self._wakeup is wakeup:
                    self._wakeup = None
        return items.popleft()


class _Active:
    """A task with a run or subscribers in progress (rule 1)."""

    def __init__(self, task: Task, tenant: str) -> None:
        self.task = task
        self.tenant = tenant
        # No scheduling point on an uncontended acquire: `apply` yields when a
        # subscriber's queue fills up instead (see `TaskRuntime._relieve`).
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


class _Run:
    """One call of the agent's ``execute`` (the `TaskUpdater`'s sink)."""

    def __init__(
        self,
        runtime: TaskRuntime,
        message: Message,
        context: ExecutionContext,
        call: CallInfo,
        key: str,
    ) -> None:
        self.runtime = runtime
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
        cls, runtime: TaskRuntime, message: Message, call: CallInfo, key: str, record: Any
    ) -> _Run:
        """A finished run standing for what an earlier send of this message produced."""
        task, reply = record
        ctx = ExecutionContext(
            message=message,
            task_id=task.id if task else "",
            context_id=(task.context_id if task else reply.context_id) or "",
        )
        run = cls(runtime, message, ctx, call, key)
        run.replayed_task, run.answer = task, reply
        for event in (run.first, run.settled, run.done):
            event.set()
        return run

    # -- results ---------------------------------------------------------------------

    async def current_task(self) -> Task | None:
        """The task this run works on, as the store has it now."""
        if self.replayed_task is not None:
            return await self.runtime.store.get_task(self.task_id, tenant=self.tenant)
        if self.active is None:
            return None
        runtime = self.runtime
        if runtime.replication is not None and (
            self.active.task.status.state.is_terminal  # a terminal task never changes
            or runtime._active.get((self.tenant, self.task_id)) is self.active
        ):
            return self.active.task  # kept in step with the shared store (rule 6)
        stored = await runtime.store.get_task(self.task_id, tenant=self.tenant)
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
            await self.runtime.add_subscriber(self.active, sub, settled=self.settled.is_set())
        else:
            self.listeners.append(sub)

    # -- the sink --------------------------------------------------------------------

    async def _ensure_task(self) -> _Active:
        if self.active is not None:
            return self.active
        if self.answer is not None:
            raise InvalidTransition("the agent already replied with a message: no task follows")
        return await self.runtime.create_task(self)

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
        await self.runtime.apply(active, event)
        if _closes(state):
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
        await self.runtime.apply(active, event)

    async def reply(self, message: Message) -> None:
        if self.active is not None:
            raise InvalidTransition("a task exists: the agent reports through it, not a reply")
        if self.answer is not None:
            raise InvalidTransition("the agent already replied")
        message = replaced(message, role=Role.AGENT, task_id=None)
        await self.runtime.store.save_message(
            self.message_key, MessageRecord(reply=message), tenant=self.tenant
        )
        self.answer = message
        for sub in self.listeners:
            await self.attach(sub)
        self.listeners.clear()
        self.first.set()
        self.settled.set()


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
        self._relief_at = max(1, min(32, subscriber_buffer // 2))
        self.cancel_grace = cancel_grace
        self._active: dict[tuple[str, str], _Active] = {}
        self._inflight: dict[tuple[str, str], _Run] = {}
        # Created in `run_until_cancelled`: the server may be built outside the event loop
        # (or in another one) than the one that serves it.
        self._activation: anyio.Lock | None = None
        self._task_group: TaskGroup | None = None
        self._context: contextvars.Context | None = None
        self._queued_runs: deque[tuple[_Run, bool]] = deque()
        self._idle_runners: deque[anyio.Event] = deque()
        self.replication: Replication | None = None
        # A `SharedTaskStore` exists only once ``_shared`` is loaded: a process with a
        # plain store never loads the replication machinery (``_shared``, ``_fanout``).
        shared = sys.modules.get(f"{__package__}._shared")
        if shared is not None and isinstance(store, shared.SharedTaskStore):
            from ._fanout import Replication

            self.replication = Replication(self, store)

    # -- lifetime --------------------------------------------------------------------

    async def run_until_cancelled(self, started: anyio.Event | None = None) -> None:
        """Host the agents' runs until cancelled (the server runs this in its lifespan)."""
        self._activation = anyio.Lock()
        self._context = contextvars.copy_context()
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            if self.replication is not None:
                await self.replication.run(task_group)
            if started is not None:
                started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self._task_group = None
                self._queued_runs.clear()
                self._idle_runners.clear()
                task_group.cancel_scope.cancel()

    def _spawn(self, run: _Run, continuation: bool) -> None:
        """Have a runner task execute ``run`` (rule 5): an idle one, or a new one."""
        assert self._task_group is not None and self._context is not None
        self._queued_runs.append((run, continuation))
        idle = self._idle_runners
        if idle:
            # A runner is only cancelled with the whole runtime, which then drops the
            # queued runs too: the first idle one takes the run.
            idle.popleft().set()
            return
        # Spawned from the runtime's own context: the runner outlives this request.
        self._context.run(self._task_group.start_soon, self._runner)

    async def _runner(self) -> None:
        queued = self._queued_runs
        idle = self._idle_runners
        while True:
            while queued:
                run, continuation = queued.popleft()
                await self._execute(run, continuation)
                del run  # an idle runner holds on to no finished run
            if len(idle) >= _IDLE_RUNNERS:
                return
            waiter = anyio.Event()
            idle.append(waiter)
            try:
                await waiter.wait()
            finally:
                if not waiter.is_set() and waiter in idle:
                    idle.remove(waiter)

    # -- active records --------------------------------------------------------------

    async def _acquire(self, tenant: str, task_id: str) -> _Active:
        if self._activation is None:
            raise InternalError("Internal error: the server is not running")
        async with self._activation:
            active = self._active.get((tenant, task_id))
            if active is None:
                if self.replication is not None:
                    snapshot = await self.replication.store.load_task(task_id, tenant=tenant)
                    task, seq = (snapshot.task, snapshot.seq) if snapshot else (None, 0)
                else:
                    task, seq = await self.store.get_task(task_id, tenant=tenant), 0
                if task is None:
                    raise TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})
                active = self._active[(tenant, task_id)] = _Active(task, tenant)
                active.seq = seq
                if self.replication is not None:
                    # Changes announced while the task was being read were not matched to
                    # it: read them now.
                    self.replication.schedule((tenant, task_id))
            active.users += 1
            return active

    def _release(self, active: _Active) -> None:
        active.users -= 1
        key = (active.tenant, active.task.id)
        if active.users <= 0 and self._active.get(key) is active:
            del self._active[key]

    async def add_subscriber(self, active: _Active, sub: _Subscriber, *, settled: bool) -> None:
        """Rule 2: the current task first, then every later event."""
        async with active.lock:
            await self._attach_locked(active, sub, settled=settled)

    async def _attach_locked(self, active: _Active, sub: _Subscriber, *, settled: bool) -> None:
        task = active.task
        if not sub.offer(trusted(StreamResponse, task=task)):
            return
        state = task.status.state
        if state.is_terminal or (settled and state.is_interrupted):
            sub.close()
            return
        active.subscribers.append(sub)
        active.users += 1

    def _drop_subscriber(self, active: _Active, sub: _Subscriber) -> None:
        if sub in active.subscribers:
            active.subscribers.remove(sub)
            self._release(active)

    async def apply(
        self, active: _Active, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    ) -> None:
        """Rule 1 for one event of the agent."""
        status = isinstance(event, TaskStatusUpdateEvent)
        closes = isinstance(event, TaskStatusUpdateEvent) and _closes(event.status.state)
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
                self._broadcast(active, wrapped, closes=closes)
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

    def _broadcast(
        self, active: _Active, event: StreamResponse, *, closes: bool, push: bool = True
    ) -> None:
        for sub in list(active.subscribers):
            if not sub.offer(event) or closes:
                sub.close()
                self._drop_subscriber(active, sub)
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
        self._active[(run.tenant, task.id)] = active
        run.active = active
        if self.push is not None:
            async with active.lock:
                self.push.publish(run.tenant, task.id, trusted(StreamResponse, task=task))
        for sub in run.listeners:
            await self.add_subscriber(active, sub, settled=False)
        run.listeners.clear()
        run.first.set()
        return active

    # -- sending ---------------------------------------------------------------------

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
        stored_as = message_key(message)
        key = (call.tenant, stored_as)
        claim: Claim | None = None
        if self.replication is not None:
            # Rule 6: the shared store's claims stand for the message records.
            earlier = self._inflight.get(key)
            if earlier is None:
                claim = await self._live_claim(stored_as, message, call)
                if not message.task_id:
                    # Only a continuation is checked before it runs (unless it was sent
                    # before); a new task's claim is taken below.
                    claim = None
        else:
            earlier = await self._earlier_run(key, message, call)
        if earlier is not None:
            if earlier.replayed_task is not None or earlier.active is not None:
                await self._add_push_config(earlier.task_id, configuration, call)
            if subscriber is not None:
                await earlier.attach(subscriber)
            return earlier
        if claim is None:
            run, continuation = await self._new_run(
                message, stored_as, call, configuration, metadata
            )
        else:
            try:  # the claim's winner checked the message already; this one only follows
                run, continuation = await self._new_run(
                    message, stored_as, call, configuration, metadata
                )
            except JsonRpcError:
                context = ExecutionContext(
                    message=message,
                    task_id=claim.task_id or "",
                    context_id=message.context_id or "",
                )
                run, continuation = _Run(self, message, context, call, stored_as), False
        if self._task_group is None:
            raise InternalError("Internal error: the server is not running")
        if self.replication is not None and claim is None:
            claim = await self.replication.claim(run)
        if claim is not None and claim.task_id is not None:
            # A follower's push config goes to the task the claim's winner makes.
            await self._add_push_config(claim.task_id, configuration, call)
        joined = self._inflight.get(key)  # a retry that arrived while we looked things up
        if joined is not None:
            if subscriber is not None:
                await joined.attach(subscriber)
            return joined
        if subscriber is not None:
            run.listeners.append(subscriber)
        self._inflight[key] = run
        if claim is not None and self.replication is not None:
            self._task_group.start_soon(self.replication.follow, run, continuation, claim)
        else:
            self._spawn(run, continuation)
        return run

    async def _new_run(
        self,
        message: Message,
        key: str,
        call: CallInfo,
        configuration: SendMessageConfiguration | None,
        metadata: Mapping[str, Any] | None,
    ) -> tuple[_Run, bool]:
        """A run for ``message`` (checked: see `start`), and whether it continues a task."""
        task = None
        if message.task_id:
            task = await self.store.get_task(message.task_id, tenant=call.tenant)
            _check_continuation(message, task)
            assert task is not None
            context_id = task.context_id or new_id()
            task_id = task.id
        else:
            context_id = message.context_id or new_id()
            task_id = new_id()
        message = replaced(message, task_id=task_id, context_id=context_id)
        context = ExecutionContext(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=task,
            configuration=configuration,
            metadata=metadata,
            tenant=public_tenant(call.tenant) or None,
            extensions=call.extensions,
            principal=call.principal,
            headers=call.headers,
        )
        return _Run(self, message, context, call, key), task is not None

    async def _earlier_run(
        self, key: tuple[str, str], message: Message, call: CallInfo
    ) -> _Run | None:
        running = self._inflight.get(key)
        if running is not None:
            return running
        record = await self.store.get_message(key[1], tenant=call.tenant)
        if record is None:
            return self._inflight.get(key)
        task = None
        if record.task_id is not None:
            task = await self.store.get_task(record.task_id, tenant=call.tenant)
        if (task is None and record.reply is None) or _moved_on(task, message):
            return self._inflight.get(key)
        return _Run.replay(self, message, call, key[1], (task, record.reply))

    async def _live_claim(self, stored_as: str, message: Message, call: CallInfo) -> Claim | None:
        """The shared store's claim of ``stored_as``, unless its run failed or its task
        moved on since (rule 4): such a claim is released, so this send runs."""
        assert self.replication is not None
        store = self.replication.store
        claim = await store.get_claim(stored_as, tenant=call.tenant)
        if claim is None or claim.error is not None:
            return None  # unseen, or it failed before producing anything: it runs again
        if claim.pending or claim.task_id is None:
            return claim
        task = await store.get_task(claim.task_id, tenant=call.tenant)
        if not _moved_on(task, message):
            return claim
        await store.release_claim(stored_as, tenant=call.tenant, task_id=claim.task_id)
        return None

    async def _add_push_config(
        self, task_id: str, configuration: SendMessageConfiguration | None, call: CallInfo
    ) -> None:
        """A resend's push config goes to the task its first send made (rule 4)."""
        push_config = configuration.task_push_notification_config if configuration else None
        if push_config is not None and self.push is not None:
            await self.push.add_config(push_config, task_id=task_id, tenant=call.tenant)

    def new_subscriber(self) -> _Subscriber:
        """A subscriber for `start` (streaming sends)."""
        return _Subscriber(self.subscriber_buffer)

    async def _execute(self, run: _Run, continuation: bool) -> None:
        active: _Active | None = None
        try:
            if continuation:
                try:
                    active = await self._acquire(run.tenant, run.task_id)
                except JsonRpcError as exc:
                    self._finish_with_error(run, exc)
                    return
                await active.slot.acquire()
                try:
                    if not await self._accept(run, active):
                        return
                    await self._call_agent(run)
                finally:
                    active.slot.release()
            else:
                await self._call_agent(run)
        finally:
            self._inflight.pop((run.tenant, run.message_key), None)
            if active is not None:
                self._release(active)
            elif run.active is not None:
                self._release(run.active)
            if run.active is not None and run.active.run is run:
                run.active.run = None
            if self.replication is not None and run.active is None and run.answer is None:
                await self.replication.produced_nothing(run)
            run.updater.close()
            run.first.set()
            run.settled.set()
            run.done.set()

    async def _accept(self, run: _Run, active: _Active) -> bool:
        """Put a continuation message into its task's history (rule 3)."""

        def compute(current: Task) -> tuple[Task, None]:
            _check_continuation(run.message, current)
            return append_history(current, run.message), None

        async with active.lock:
            try:
                task, _ = compute(active.task)
            except (JsonRpcError, InvalidTransition) as exc:
                error = exc if isinstance(exc, JsonRpcError) else _terminal_error(active.task)
                self._finish_with_error(run, error)
                return False
            config = run.context.configuration
            push_config = config.task_push_notification_config if config else None
            if push_config is not None and self.push is not None:
                try:
                    await self.push.add_config(push_config, task_id=task.id, tenant=run.tenant)
                except JsonRpcError as exc:  # the task's configs filled up meanwhile
                    self._finish_with_error(run, exc)
                    return False
            if self.replication is not None:
                try:
                    await self.replication.write(active, compute, message_id=run.message_key)
                except (JsonRpcError, InvalidTransition) as exc:
                    error = exc if isinstance(exc, JsonRpcError) else _terminal_error(active.task)
                    self._finish_with_error(run, error)
                    return False
            else:
                await self.store.save_task(task, tenant=run.tenant)
                await self.store.save_message(
                    run.message_key, MessageRecord(task_id=task.id), tenant=run.tenant
                )
                active.task = task
            active.run = run
            run.active = active
        for sub in run.listeners:
            await self.add_subscriber(active, sub, settled=False)
        run.listeners.clear()
        run.first.set()
        return True

    def _finish_with_error(self, run: _Run, error: JsonRpcError) -> None:
        run.error = error
        for sub in run.listeners:
            sub.offer(error)
            sub.close()
        run.listeners.clear()

    async def _call_agent(self, run: _Run) -> None:
        failure: BaseException | None = None
        with run.cancel_scope:
            try:
                if isinstance(self.executor, AgentExecutor):
                    await self.executor.execute(run.context, run.updater)
                else:
                    await self.executor(run.context, run.updater)
            except Exception as exc:
                failure = exc
                if not isinstance(exc, JsonRpcError):
                    logger.exception("agent failed on task %s", run.task_id)
        run.updater.close()
        if run.cancel_requested:
            return
        if run.active is None and run.answer is None:
            if isinstance(failure, JsonRpcError):
                error = failure
            elif failure is not None:
                error = InternalError("Internal error: the agent failed")
            else:
                error = InvalidAgentResponse(
                    "Invalid agent response: the agent produced neither a task nor a message"
                )
            self._finish_with_error(run, error)
            return
        active = run.active
        if active is None or _closes(active.task.status.state):
            return
        if isinstance(failure, JsonRpcError):
            text = failure.message
        elif failure is not None:
            text = "The agent failed with an internal error."
        else:
            text = "The agent stopped without finishing the task."
        with anyio.CancelScope(shield=True):
            try:
                await run.status(TaskState.FAILED, run.updater.message(text), None)
            except InvalidTransition:
                pass  # a concurrent CancelTask got there first

    # -- streaming and cancel ----------------------------------------------------------

    def stream_run(self, run: _Run, sub: _Subscriber) -> AsyncIterator[StreamResponse]:
        """The events of a streaming send (``sub`` was given to `start`)."""
        return self._drain(sub, run=run)

    async def subscribe(self, task_id: str, *, tenant: str) -> AsyncIterator[StreamResponse]:
        """SubscribeToTask: the task now, then its events (a terminal task is refused)."""
        active = await self._acquire(tenant, task_id)
        try:
            if active.task.status.state.is_terminal:
                raise _terminal_error(active.task)
            sub = _Subscriber(self.subscriber_buffer)
            await self.add_subscriber(active, sub, settled=False)
        finally:
            self._release(active)
        return self._drain(sub, active=active)

    async def _drain(
        self, sub: _Subscriber, *, run: _Run | None = None, active: _Active | None = None
    ) -> AsyncIterator[StreamResponse]:
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
            for candidate in (active, *self._active.values()):
                if candidate is not None and sub in candidate.subscribers:
                    self._drop_subscriber(candidate, sub)
                    break

    async def cancel(self, task_id: str, *, tenant: str) -> Task:
        """CancelTask: stop the running agent, if any, and mark the task ``CANCELED``."""
        active = await self._acquire(tenant, task_id)
        try:
            if active.task.status.state.is_terminal:
                raise TaskNotCancelable(
                    f"Task {task_id} is {active.task.status.state.value} and cannot be canceled",
                    metadata={"taskId": task_id},
                )
            run = active.run
            if run is not None and not run.done.is_set():
                run.cancel_requested = True
                if isinstance(self.executor, AgentExecutor):
                    try:
                        await self.executor.cancel(run.context, run.updater)
                    except TaskNotCancelable:
                        run.cancel_requested = False
                        raise
                    except InvalidTransition:
                        pass
                run.cancel_scope.cancel()
                with anyio.move_on_after(self.cancel_grace):
                    await run.done.wait()
            if not active.task.status.state.is_terminal:
                event = TaskStatusUpdateEvent(
                    task_id=task_id,
                    context_id=active.task.context_id or "",
                    status=trusted(TaskStatus, state=TaskState.CANCELED, timestamp=utc_now()),
                )
                try:
                    await self.apply(active, event)
                except InvalidTransition:
                    pass  # the agent finished first
            if run is not None:
                run.settled.set()
            return active.task
        finally:
            self._release(active)


_M = TypeVar("_M", bound=A2AModel)


def _made(cls: type[_M], trust: bool, /, **values: Any) -> _M:
    """``cls(**values)``, built without validation when ``trust`` says the values are
    the server's own, already of their fields' types (`trusted`)."""
    return trusted(cls, **values) if trust else cls(**values)


def _applied(task: Task, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Task:
    if isinstance(event, TaskStatusUpdateEvent):
        return apply_status(task, event)
    return apply_artifact(task, event)


def _terminal_error(task: Task) -> UnsupportedOperation:
    return UnsupportedOperation(
        f"Task {task.id} is {task.status.state.value}: a terminal task accepts no more "
        "messages or subscriptions (send a new message in the same context instead)",
        metadata={"taskId": task.id},
    )


def _moved_on(task: Task | None, message: Message) -> bool:
    """Whether ``task`` was addressed through its id since ``message`` was sent to it:
    canceled, or a later client message in its history (rule 4)."""
    if task is None:
        return False
    if task.status.state is TaskState.CANCELED:
        return True
    for entry in reversed(task.history or ()):
        if entry.role is Role.USER:
            return entry.message_id != message.message_id
    return False


def _check_continuation(message: Message, task: Task | None) -> None:
    if task is None:
        task_id = message.task_id or ""
        raise TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})
    if message.context_id and task.context_id and message.context_id != task.context_id:
        raise InvalidParams(
            f"Invalid params: message.contextId {message.context_id!r} does not match the "
            f"contextId {task.context_id!r} of task {task.id}"
        )
    if task.status.state.is_terminal:
        raise _terminal_error(task)
