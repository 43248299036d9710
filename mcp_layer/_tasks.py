"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the server side.

A tool declared with ``task_support`` may answer a 2026-era ``tools/call`` with a task
(``resultType: "task"``) instead of its result, when the request's client capabilities
declare the extension. Its function then runs in the background; the client polls
``tasks/get`` (the result is inlined there when done), answers the task's questions with
``tasks/update`` and may ask to stop it with ``tasks/cancel``. A client may also listen
for ``notifications/tasks`` (``subscriptions/listen`` with ``taskIds``).

Rules:

1. A task exists (``tasks/get`` finds it) before its ``CreateTaskResult`` is sent.
2. ``tasks/*`` need the extension declared on the request (else -32021); an unknown or
   expired task id is -32602; a task created for one authenticated principal is
   unknown to any other.
3. Status: ``working`` -> ``input_required`` (while a question waits for
   ``tasks/update``) -> ``working`` -> ``completed`` (a result, ``isError`` included) |
   ``failed`` (a JSON-RPC error) | ``cancelled``. A terminal status never changes.
4. Input request keys are unique over a task's life; an answer to a key that is not
   pending is ignored; a partial answer leaves the rest pending.
5. A task's function sends no progress or log notifications (the extension has no
   channel for them); its status changes go to the subscription bus.
6. Tasks expire ``ttl_ms`` after creation; at most ``max_tasks`` are kept (the oldest
   terminal ones go first).
7. The same store keeps the tasks of the handshake era (2025-11-25, see
   `mcp_layer._tasks_legacy`): a record is of one era, and requests of the other era
   never find it. ``tasks/get`` and ``tasks/cancel`` answer by the request's era.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import (
    InternalError,
    InvalidParams,
    JsonRpcError,
    MethodNotFound,
    RequestContext,
    RequestType,
)

from ._errors import MissingRequiredClientCapability
from ._methods import TASKS_CANCEL_V2, TASKS_GET_V2, TASKS_LIST, TASKS_RESULT, TASKS_UPDATE
from ._subscriptions import ChangeEvent
from .types import (
    TASKS_EXTENSION,
    CallToolRequestParams,
    CreateTaskResultV2,
    DetailedTask,
    GetTaskPayloadRequestParams,
    PaginatedRequestParams,
    Result,
    TaskIdParams,
    TaskStatusV2,
    UpdateTaskRequestParams,
)

if TYPE_CHECKING:
    from ._context import Context, InputRequest
    from ._era import RequestScope
    from ._mrtr import InputRound
    from ._session import ServerSession

__all__ = ["TaskManager", "TaskRecord", "run_task"]

logger = logging.getLogger("mcp_layer.tasks")

_TERMINAL = ("completed", "failed", "cancelled")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dump(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        data: dict[str, Any] = value.model_dump(by_alias=True, exclude_none=True, mode="json")
        return data
    return dict(value)


@dataclass(eq=False)
class TaskRecord:
    """One task: its state, and what its function waits for."""

    task_id: str
    ttl_ms: int | None
    poll_interval_ms: int
    principal: str | None
    publish: Callable[[TaskRecord], Awaitable[None]]
    status: TaskStatusV2 = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    last_updated_at: str = ""
    created_monotonic: float = field(default_factory=anyio.current_time)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    used_keys: set[str] = field(default_factory=set)
    cancel_scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancel_requested: bool = False
    legacy: bool = False
    """A handshake-era (2025-11-25) task."""
    owner_session: Any = None
    """The session a handshake-era task belongs to (``None``: any of its principal's)."""
    settled: anyio.Event = field(default_factory=anyio.Event)
    """Set when the task reaches a terminal status."""
    _wakeup: anyio.Event = field(default_factory=anyio.Event)

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in _TERMINAL

    def created(self) -> CreateTaskResultV2:
        """The ``CreateTaskResult`` of this task (``resultType: "task"``)."""
        return CreateTaskResultV2(
            result_type="task",
            task_id=self.task_id,
            status=self.status,
            status_message=self.status_message,
            created_at=self.created_at,
            last_updated_at=self.last_updated_at,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )

    def detailed(self) -> DetailedTask:
        """The task as ``tasks/get`` shows it."""
        task = DetailedTask(
            result_type="complete",
            task_id=self.task_id,
            status=self.status,
            status_message=self.status_message,
            created_at=self.created_at,
            last_updated_at=self.last_updated_at,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )
        if self.status == "input_required":
            task.input_requests = dict(self.pending)
        elif self.status == "completed":
            task.result = self.result
        elif self.status == "failed":
            task.error = self.error
        return task

    async def set_status(
        self, status: TaskStatusV2, message: str | None = None, **fields: Any
    ) -> None:
        """Move to ``status`` (never out of a terminal one) and tell the subscribers."""
        if self.terminal:
            return
        self.status = status
        self.status_message = message
        for name, value in fields.items():
            setattr(self, name, value)
        self.last_updated_at = _now()
        if self.terminal:
            self.settled.set()
        try:
            await self.publish(self)
        except Exception:  # a broken bus must not break the task
            logger.exception("could not publish the status of task %s", self.task_id)

    def answer(self, responses: Mapping[str, Any]) -> None:
        """Take the answers to pending questions (others are ignored; rule 4)."""
        for key, value in responses.items():
            if key in self.pending:
                del self.pending[key]
                self.answers[key] = value
        self._wakeup.set()

    async def ask(self, requests: Mapping[str, InputRequest], context: Context) -> dict[str, Any]:
        """Ask the client through ``tasks/get``/``tasks/update``; wait for every answer."""
        keys: dict[str, str] = {}
        for key, request in requests.items():
            unique, number = key, 1
            while unique in self.used_keys:
                number += 1
                unique = f"{key}-{number}"
            self.used_keys.add(unique)
            keys[key] = unique
            self.pending[unique] = request.wire(modern=True)
        await self.set_status("input_required", "Waiting for input from the client")
        while not all(k in self.answers for k in keys.values()):
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        await self.set_status("working")
        return {key: requests[key].parse(key, self.answers[k]) for key, k in keys.items()}


class TaskManager:
    """The tasks of one server (in memory): creation, polling, answers, cancellation.

    ``ttl_ms`` is how long a task is kept after its creation (``None``: until
    ``max_tasks`` pushes it out); ``poll_interval_ms`` is the polling pace suggested to
    clients.
    """

    def __init__(
        self,
        *,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 250,
        max_tasks: int = 10_000,
    ) -> None:
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_tasks = max_tasks
        self.records: dict[str, TaskRecord] = {}

    # -- the store ----------------------------------------------------------------------

    def _purge(self) -> None:
        now = anyio.current_time()
        expired = [
            t
            for t, r in self.records.items()
            if r.ttl_ms is not None and now - r.created_monotonic > r.ttl_ms / 1000
        ]
        for task_id in expired:
            record = self.records.pop(task_id)
            record.cancel_scope.cancel()
        while len(self.records) >= self.max_tasks:
            victim = next((t for t, r in self.records.items() if r.terminal), None)
            if victim is None:
                victim = next(iter(self.records))
                self.records[victim].cancel_scope.cancel()
            del self.records[victim]

    def _new(self, session: ServerSession, ctx: RequestContext) -> TaskRecord:
        return self.new_record(session, ctx, legacy=False, ttl_ms=self.ttl_ms)

    def new_record(
        self, session: ServerSession, ctx: RequestContext, *, legacy: bool, ttl_ms: int | None
    ) -> TaskRecord:
        """A new task of one era, kept for ``ttl_ms`` (rules 6 and 7)."""
        self._purge()
        server = session.server

        async def publish(record: TaskRecord) -> None:
            if record.legacy:
                from ._tasks_legacy import publish_status

                await publish_status(session, record)
                return
            state = _dump(record.detailed())
            await server.subscriptions.publish(
                ChangeEvent("task", task_id=record.task_id, task=state)
            )

        record = TaskRecord(
            task_id=secrets.token_urlsafe(18),
            ttl_ms=ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            principal=_principal(session, ctx),
            publish=publish,
            legacy=legacy,
            owner_session=session if legacy and not session.stateless else None,
        )
        self.records[record.task_id] = record
        return record

    def _owns(self, record: TaskRecord, session: ServerSession, ctx: RequestContext) -> bool:
        if record.principal != _principal(session, ctx):
            return False
        return record.owner_session is None or record.owner_session is session

    def find(
        self,
        session: ServerSession,
        ctx: RequestContext,
        task_id: str,
        *,
        legacy: bool = False,
    ) -> TaskRecord:
        """The caller's task ``task_id`` of one era; -32602 if unknown, expired, of the
        other era or someone else's."""
        self._purge()
        record = self.records.get(task_id)
        if record is None or record.legacy != legacy or not self._owns(record, session, ctx):
            raise InvalidParams(f"Task not found: {task_id}", data={"taskId": task_id})
        return record

    def owned(self, session: ServerSession, ctx: RequestContext) -> list[TaskRecord]:
        """The caller's handshake-era tasks, oldest first."""
        self._purge()
        return [r for r in self.records.values() if r.legacy and self._owns(r, session, ctx)]

    # -- tools/call -------------------------------------------------------------------

    async def maybe_start(
        self,
        session: ServerSession,
        entry: Any,
        params: CallToolRequestParams,
        ctx: RequestContext,
        scope: RequestScope,
        inputs: InputRound | None,
    ) -> Result | None:
        """Answer a ``tools/call`` through a task, when the tool and the client allow it;
        ``None`` to call the tool as usual."""
        support = entry.task_support
        if support is None:
            return None
        if not scope.has_extension(TASKS_EXTENSION):
            if support == "required":
                raise MissingRequiredClientCapability.for_capabilities(
                    {"extensions": {TASKS_EXTENSION: {}}},
                    f"Tool {params.name!r} runs only as a task: declare the "
                    f"{TASKS_EXTENSION} extension",
                )
            return None
        if session.task_group is None:
            return None  # not serving (a direct call in a test): no background to run in
        if entry.task_start == "explicit":
            return await self._start_explicit(session, entry, params, ctx, scope, inputs)
        record = self._new(session, ctx)
        self._launch(session, record, entry, params, ctx, scope, context=None)
        return record.created()

    def _launch(
        self,
        session: ServerSession,
        record: TaskRecord,
        entry: Any,
        params: CallToolRequestParams,
        ctx: RequestContext,
        scope: RequestScope,
        context: Context | None,
    ) -> None:
        from ._context import Context

        task_context = context or Context(session, ctx, scope, None)
        task_context.task = record

        async def run() -> None:
            await run_task(session, record, entry, params, ctx, scope, task_context)

        assert session.task_group is not None
        session.task_group.start_soon(run)

    async def _start_explicit(
        self,
        session: ServerSession,
        entry: Any,
        params: CallToolRequestParams,
        ctx: RequestContext,
        scope: RequestScope,
        inputs: InputRound | None,
    ) -> Result:
        """Run the function in the call until it calls `Context.start_task`."""
        from ._context import Context

        context = Context(session, ctx, scope, inputs)
        started = anyio.Event()
        done = anyio.Event()
        outcome: list[Any] = []
        holder: list[TaskRecord] = []
        function_scope = anyio.CancelScope()

        def start() -> TaskRecord:
            record = self._new(session, ctx)
            record.cancel_scope = function_scope
            holder.append(record)
            context.task = record
            context.inputs = None
            started.set()
            return record

        context.task_starter = start

        async def run() -> None:
            with function_scope:
                try:
                    result = await session.run_tool(entry, params, ctx, scope, inputs, context)
                except BaseException as exc:
                    if holder:
                        await _settle_failure(holder[0], exc)
                    else:
                        outcome.append(exc)
                    if not isinstance(exc, Exception):
                        raise
                else:
                    if holder:
                        await holder[0].set_status("completed", result=_dump(result))
                    else:
                        outcome.append(result)
                finally:
                    done.set()
            if holder and function_scope.cancel_called:
                await holder[0].set_status("cancelled", "Cancelled at the client's request")

        assert session.task_group is not None
        session.task_group.start_soon(run)
        try:
            async with anyio.create_task_group() as waiting:

                async def wait(event: anyio.Event) -> None:
                    await event.wait()
                    waiting.cancel_scope.cancel()

                waiting.start_soon(wait, started)
                waiting.start_soon(wait, done)
        finally:
            if not started.is_set() and not done.is_set():
                function_scope.cancel()  # the call itself was cancelled
        if holder:
            return holder[0].created()
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, Result)
        return result

    # -- tasks/get, tasks/update, tasks/cancel -------------------------------------------

    def handlers(
        self, session: ServerSession
    ) -> list[tuple[RequestType[Any, Any], Callable[..., Any]]]:
        """The extension's methods, as `ServerSession` registers them."""

        from . import _tasks_legacy as legacy

        def gate(scope: RequestScope) -> None:
            if not scope.has_extension(TASKS_EXTENSION):
                raise MissingRequiredClientCapability.for_capabilities(
                    {"extensions": {TASKS_EXTENSION: {}}}
                )

        def get(params: TaskIdParams, ctx: RequestContext, scope: RequestScope) -> Any:
            if not scope.modern:
                return legacy.get_task(self.find(session, ctx, params.task_id, legacy=True))
            gate(scope)
            return self.find(session, ctx, params.task_id).detailed()

        async def result(
            params: GetTaskPayloadRequestParams, ctx: RequestContext, scope: RequestScope
        ) -> dict[str, Any]:
            # Handshake era only: the 2026 era's gate refuses the method (-32601).
            return await legacy.task_result(self.find(session, ctx, params.task_id, legacy=True))

        def list_tasks(
            params: PaginatedRequestParams, ctx: RequestContext, scope: RequestScope
        ) -> dict[str, Any]:
            if session.stateless and _principal(session, ctx) is None:
                # Nothing tells requestors apart: not declared, not served (see _initialize).
                raise MethodNotFound("Method not found: tasks/list needs an authenticated client")
            return legacy.list_tasks(self.owned(session, ctx), params.cursor)

        def update(
            params: UpdateTaskRequestParams, ctx: RequestContext, scope: RequestScope
        ) -> Result:
            gate(scope)
            record = self.find(session, ctx, params.task_id)
            if not isinstance(params.input_responses, dict):
                raise InvalidParams("Invalid params: inputResponses must be an object")
            record.answer(params.input_responses)
            return Result(result_type="complete")

        async def cancel(params: TaskIdParams, ctx: RequestContext, scope: RequestScope) -> Any:
            if not scope.modern:
                found = self.find(session, ctx, params.task_id, legacy=True)
                return await legacy.cancel_task(found)
            gate(scope)
            record = self.find(session, ctx, params.task_id)
            if not record.terminal:
                record.cancel_requested = True
                record.cancel_scope.cancel()
            return Result(result_type="complete")

        return [
            (TASKS_GET_V2, get),
            (TASKS_UPDATE, update),
            (TASKS_CANCEL_V2, cancel),
            (TASKS_RESULT, result),
            (TASKS_LIST, list_tasks),
        ]


def _principal(session: ServerSession, ctx: RequestContext) -> str | None:
    principal = getattr(ctx.info, "principal", None)
    return session.server.request_state.principal_id(principal)


async def _settle_failure(record: TaskRecord, exc: BaseException) -> None:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return
    error = exc if isinstance(exc, JsonRpcError) else InternalError("Internal error in the task")
    if not isinstance(exc, JsonRpcError):
        logger.error("task %s failed", record.task_id, exc_info=exc)
    await record.set_status("failed", error.message, error=error.to_object())


async def run_task(
    session: ServerSession,
    record: TaskRecord,
    entry: Any,
    params: CallToolRequestParams,
    ctx: RequestContext,
    scope: RequestScope,
    context: Context,
) -> None:
    """Run a task's tool to its end: its result, failure or cancellation is the status
    (a handshake-era result with ``isError`` is ``failed``)."""
    with record.cancel_scope:
        try:
            result = await session.run_tool(entry, params, ctx, scope, None, context)
        except Exception as exc:
            await _settle_failure(record, exc)
        else:
            if record.legacy and getattr(result, "is_error", False):
                message = "The tool reported an error"
                await record.set_status("failed", message, result=_dump(result))
            else:
                await record.set_status("completed", result=_dump(result))
    if record.cancel_scope.cancel_called and not record.terminal:
        await record.set_status("cancelled", "Cancelled at the client's request")
