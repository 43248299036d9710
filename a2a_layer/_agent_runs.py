"""The runs of the agent: runner tasks, one run at a time per task, the call, CancelTask.

`AgentRuns` keeps the runtime's rules 3 and 5 (see ``_runtime``): runs live in the
runtime's own task group, served by reused runner tasks in the context the runtime was
started in; runs of one task never overlap. It also keeps ``inflight``, the runs in
progress by message key, from which the send path (``_send``) joins retried sends.
"""

from __future__ import annotations

import contextvars
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from jsonrpc_core import InternalError, JsonRpcError

from ._active import ActiveTasks, _Active, check_continuation, closes, terminal_error
from ._errors import InvalidAgentResponse, TaskNotCancelable
from ._executor import AgentExecutor, AgentFunction
from ._state import InvalidTransition, append_history, utc_now
from ._store import MessageRecord
from ._types._base import trusted
from .types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent

if TYPE_CHECKING:
    from ._run import _Run

__all__ = ["AgentRuns"]

logger = logging.getLogger("a2a_layer.runtime")

_IDLE_RUNNERS = 16
"""How many runner tasks stay idle, waiting for the next run (rule 5)."""


class AgentRuns:
    """Calls the agent for each run, in runner tasks of the runtime's task group."""

    def __init__(
        self, executor: AgentExecutor | AgentFunction, tasks: ActiveTasks, *, cancel_grace: float
    ) -> None:
        self.executor = executor
        self.tasks = tasks
        self.cancel_grace = cancel_grace
        # Runs from their start until their agent returned, by (tenant, message key).
        self.inflight: dict[tuple[str, str], _Run] = {}
        self._task_group: TaskGroup | None = None
        self._context: contextvars.Context | None = None
        self._queued_runs: deque[tuple[_Run, bool]] = deque()
        self.idle_runners: deque[anyio.Event] = deque()  # runners waiting for a run

    # -- lifetime --------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Whether runs can start (between `open` and `close`)."""
        return self._task_group is not None

    def open(self, task_group: TaskGroup, context: contextvars.Context) -> None:
        """Host runs in ``task_group``; runners start in ``context``."""
        self._task_group = task_group
        self._context = context

    def close(self) -> None:
        """Start no more runs (the task group is being cancelled)."""
        self._task_group = None
        self._queued_runs.clear()
        self.idle_runners.clear()

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Start ``func(*args)`` in the runtime's task group, in the caller's context."""
        assert self._task_group is not None
        self._task_group.start_soon(func, *args)

    def spawn(self, run: _Run, continuation: bool) -> None:
        """Have a runner task execute ``run`` (rule 5): an idle one, or a new one."""
        assert self._task_group is not None and self._context is not None
        self._queued_runs.append((run, continuation))
        idle = self.idle_runners
        if idle:
            # A runner is only cancelled with the whole runtime, which then drops the
            # queued runs too: the first idle one takes the run.
            idle.popleft().set()
            return
        # Spawned from the runtime's own context: the runner outlives this request.
        self._context.run(self._task_group.start_soon, self._runner)

    async def _runner(self) -> None:
        queued = self._queued_runs
        idle = self.idle_runners
        while True:
            while queued:
                run, continuation = queued.popleft()
                await self.execute(run, continuation)
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

    # -- one run ---------------------------------------------------------------------

    async def execute(self, run: _Run, continuation: bool) -> None:
        """Run the agent on ``run`` (a continuation waits for its task: rule 3)."""
        tasks = self.tasks
        active: _Active | None = None
        try:
            if continuation:
                try:
                    active = await tasks.acquire(run.tenant, run.task_id)
                except JsonRpcError as exc:
                    run.fail(exc)
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
            self.inflight.pop((run.tenant, run.message_key), None)
            if active is not None:
                tasks.release(active)
            elif run.active is not None:
                tasks.release(run.active)
            if run.active is not None and run.active.run is run:
                run.active.run = None
            replication = tasks.replication
            if replication is not None and run.active is None and run.answer is None:
                await replication.produced_nothing(run)
            run.updater.close()
            run.first.set()
            run.settled.set()
            run.done.set()

    async def _accept(self, run: _Run, active: _Active) -> bool:
        """Put a continuation message into its task's history (rule 3)."""
        tasks = self.tasks

        def compute(current: Task) -> tuple[Task, None]:
            check_continuation(run.message, current)
            return append_history(current, run.message), None

        async with active.lock:
            try:
                task, _ = compute(active.task)
            except (JsonRpcError, InvalidTransition) as exc:
                run.fail(exc if isinstance(exc, JsonRpcError) else terminal_error(active.task))
                return False
            config = run.context.configuration
            push_config = config.task_push_notification_config if config else None
            if push_config is not None and tasks.push is not None:
                try:
                    await tasks.push.add_config(push_config, task_id=task.id, tenant=run.tenant)
                except JsonRpcError as exc:  # the task's configs filled up meanwhile
                    run.fail(exc)
                    return False
            if tasks.replication is not None:
                try:
                    await tasks.replication.write(active, compute, message_id=run.message_key)
                except (JsonRpcError, InvalidTransition) as exc:
                    error = exc if isinstance(exc, JsonRpcError) else terminal_error(active.task)
                    run.fail(error)
                    return False
            else:
                await tasks.store.save_task(task, tenant=run.tenant)
                await tasks.store.save_message(
                    run.message_key, MessageRecord(task_id=task.id), tenant=run.tenant
                )
                active.task = task
            active.run = run
            run.active = active
        for sub in run.listeners:
            await tasks.add_subscriber(active, sub, settled=False)
        run.listeners.clear()
        run.first.set()
        return True

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
            run.fail(error)
            return
        active = run.active
        if active is None or closes(active.task.status.state):
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

    # -- CancelTask --------------------------------------------------------------------

    async def cancel(self, task_id: str, *, tenant: str) -> Task:
        """CancelTask: stop the running agent, if any, and mark the task ``CANCELED``."""
        tasks = self.tasks
        active = await tasks.acquire(tenant, task_id)
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
                    await tasks.apply(active, event)
                except InvalidTransition:
                    pass  # the agent finished first
            if run is not None:
                run.settled.set()
            return active.task
        finally:
            tasks.release(active)
