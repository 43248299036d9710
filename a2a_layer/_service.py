"""The A2A operations, independent of any binding (spec section 3).

`A2AService` is what both bindings (JSON-RPC, HTTP+JSON) call: typed request models
in, result models out, A2A errors raised. It checks capabilities (spec 3.3.4), applies
``historyLength`` (3.2.4) and the ListTasks rules (3.1.4), and hands messages to the
`TaskRuntime`.

Rule: every operation first scopes its call (`A2AService.scoped`): the tenant of the
request, joined with the owner of an authenticated caller (``owner_of(principal)``).
Tasks, message ids and push configs live under that scope, so a caller never gets,
lists, cancels, subscribes to, continues or configures another caller's task: it is
not found (spec 3.3.3: do not reveal that it exists).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from jsonrpc_core import InvalidParams

from ._errors import (
    ExtendedAgentCardNotConfigured,
    PushNotificationNotSupported,
    TaskNotFound,
    UnsupportedOperation,
)
from ._runtime import CallInfo, TaskRuntime
from ._state import trim_history
from ._store import (
    DEFAULT_PAGE_SIZE,
    InvalidPageToken,
    TaskQuery,
    TaskStore,
    principal_owner,
    scope_key,
    valid_tenant,
)
from ._types._base import trusted
from .types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    Empty,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

if TYPE_CHECKING:
    from ._push import PushDispatcher

__all__ = ["A2AService", "ExtendedCardProvider"]

ExtendedCardProvider = Callable[[CallInfo], Awaitable[AgentCard]]
"""Builds the extended agent card for an (authenticated) caller."""


def _not_found(task_id: str) -> TaskNotFound:
    return TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})


class A2AService:
    """Every A2A operation, once (see module docstring)."""

    def __init__(
        self,
        card: AgentCard,
        runtime: TaskRuntime,
        store: TaskStore,
        *,
        push: PushDispatcher | None = None,
        extended_card: AgentCard | ExtendedCardProvider | None = None,
        owner_of: Callable[[Any], str | None] = principal_owner,
    ) -> None:
        self.card = card
        self.runtime = runtime
        self.store = store
        self.push = push
        self.extended_card = extended_card
        self.owner_of = owner_of

    def scoped(self, call: CallInfo, tenant: str | None) -> CallInfo:
        """``call`` with the storage scope of its caller as tenant (module rule)."""
        tenant = tenant or ""
        if not valid_tenant(tenant):
            raise InvalidParams("Invalid params: tenant: control characters are not allowed")
        scope = scope_key(tenant, self.owner_of(call.principal))
        return call if scope == call.tenant else replace(call, tenant=scope)

    # -- capability checks -----------------------------------------------------------

    def _require_streaming(self) -> None:
        if not self.card.capabilities.streaming:
            raise UnsupportedOperation(
                "Unsupported operation: this agent does not support streaming"
            )

    def _require_push(self) -> PushDispatcher:
        if not self.card.capabilities.push_notifications or self.push is None:
            raise PushNotificationNotSupported("Push notifications are not supported by this agent")
        return self.push

    async def _check_push(
        self, request: SendMessageRequest, call: CallInfo
    ) -> SendMessageConfiguration | None:
        """A push config in a send needs the capability, an acceptable URL and room."""
        config = request.configuration
        if config is None or config.task_push_notification_config is None:
            return config
        push = self._require_push()
        await push.check_config(
            config.task_push_notification_config,
            task_id=request.message.task_id or None,
            tenant=call.tenant,
        )
        return config

    async def _task(self, task_id: str, call: CallInfo) -> Task:
        task = await self.store.get_task(task_id, tenant=call.tenant)
        if task is None:
            raise _not_found(task_id)
        return task

    # -- messages --------------------------------------------------------------------

    async def send_message(
        self, request: SendMessageRequest, call: CallInfo
    ) -> SendMessageResponse:
        """SendMessage: a direct message, or the task (blocking unless returnImmediately)."""
        call = self.scoped(call, request.tenant)
        config = await self._check_push(request, call)
        run = await self.runtime.start(
            request.message, call=call, configuration=config, metadata=request.metadata
        )
        if config is not None and config.return_immediately:
            await run.first.wait()
        else:
            await run.settled.wait()
        if run.error is not None:
            raise run.error
        if run.answer is not None:
            return trusted(SendMessageResponse, message=run.answer)
        task = await run.current_task()
        if task is None:  # pragma: no cover - a run that settled has a task, reply or error
            raise _not_found(run.task_id)
        return trusted(
            SendMessageResponse,
            task=trim_history(task, config.history_length if config else None),
        )

    async def send_streaming_message(
        self, request: SendMessageRequest, call: CallInfo
    ) -> AsyncIterator[StreamResponse]:
        """SendStreamingMessage: the Task (or a Message) first, then the task's events."""
        self._require_streaming()
        call = self.scoped(call, request.tenant)
        config = await self._check_push(request, call)
        sub = self.runtime.new_subscriber()
        run = await self.runtime.start(
            request.message,
            call=call,
            configuration=config,
            metadata=request.metadata,
            subscriber=sub,
        )
        return self.runtime.stream_run(run, sub)

    # -- tasks -----------------------------------------------------------------------

    async def get_task(self, request: GetTaskRequest, call: CallInfo) -> Task:
        """GetTask, with ``historyLength`` applied."""
        call = self.scoped(call, request.tenant)
        return trim_history(await self._task(request.id, call), request.history_length)

    async def list_tasks(self, request: ListTasksRequest, call: CallInfo) -> ListTasksResponse:
        """ListTasks: newest status first, cursor paging, artifacts only when asked."""
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        query = TaskQuery(
            tenant=self.scoped(call, request.tenant).tenant,
            context_id=request.context_id,
            # UNSPECIFIED is the proto default, i.e. "no filter" (what ts-proto clients send).
            status=request.status if request.status is not TaskState.UNSPECIFIED else None,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token or None,
        )
        try:
            page = await self.store.list_tasks(query)
        except InvalidPageToken as exc:
            raise InvalidParams(f"Invalid params: pageToken: {exc}") from None
        tasks = []
        for task in page.tasks:
            task = trim_history(task, request.history_length)
            if not request.include_artifacts:
                task = task.model_copy(update={"artifacts": None})
            elif task.artifacts is None:
                task = task.model_copy(update={"artifacts": []})
            tasks.append(task)
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=page_size,
            total_size=page.total_size,
        )

    async def cancel_task(self, request: CancelTaskRequest, call: CallInfo) -> Task:
        """CancelTask: -32002 for a terminal task, else the task, now canceled."""
        call = self.scoped(call, request.tenant)
        return await self.runtime.cancel(request.id, tenant=call.tenant)

    async def subscribe(
        self, request: SubscribeToTaskRequest, call: CallInfo
    ) -> AsyncIterator[StreamResponse]:
        """SubscribeToTask: the task now, then its events (refused for terminal tasks)."""
        self._require_streaming()
        call = self.scoped(call, request.tenant)
        return await self.runtime.subscribe(request.id, tenant=call.tenant)

    # -- push notification configs ---------------------------------------------------

    async def create_push_config(
        self, request: TaskPushNotificationConfig, call: CallInfo
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig: store the config, with an id assigned."""
        push = self._require_push()
        call = self.scoped(call, request.tenant)
        if not request.task_id:
            raise InvalidParams("Invalid params: taskId is required")
        await self._task(request.task_id, call)
        return await push.add_config(request, task_id=request.task_id, tenant=call.tenant)

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, call: CallInfo
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (a missing config is TaskNotFound, spec 3.1.8)."""
        self._require_push()
        call = self.scoped(call, request.tenant)
        await self._task(request.task_id, call)
        config = await self.store.get_push_config(request.task_id, request.id, tenant=call.tenant)
        if config is None:
            raise TaskNotFound(
                f"Push notification config {request.id} of task {request.task_id} not found",
                metadata={"taskId": request.task_id, "configId": request.id},
            )
        return config

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, call: CallInfo
    ) -> ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs, paged by offset when a page size is given."""
        self._require_push()
        call = self.scoped(call, request.tenant)
        await self._task(request.task_id, call)
        configs = await self.store.list_push_configs(request.task_id, tenant=call.tenant)
        start = _offset(request.page_token)
        size = request.page_size or len(configs) or 1
        page = configs[start : start + size]
        more = start + size < len(configs)
        token = base64.urlsafe_b64encode(str(start + size).encode()).decode() if more else None
        return ListTaskPushNotificationConfigsResponse(configs=page, next_page_token=token)

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, call: CallInfo
    ) -> Empty:
        """DeleteTaskPushNotificationConfig (idempotent)."""
        self._require_push()
        call = self.scoped(call, request.tenant)
        await self._task(request.task_id, call)
        await self.store.delete_push_config(request.task_id, request.id, tenant=call.tenant)
        return Empty()

    # -- card ------------------------------------------------------------------------

    async def get_extended_card(
        self, request: GetExtendedAgentCardRequest, call: CallInfo
    ) -> AgentCard:
        """GetExtendedAgentCard (spec 3.1.11)."""
        if not self.card.capabilities.extended_agent_card:
            raise UnsupportedOperation(
                "Unsupported operation: this agent has no extended agent card"
            )
        extended = self.extended_card
        if extended is None:
            raise ExtendedAgentCardNotConfigured(
                "Extended agent card is declared but not configured"
            )
        if isinstance(extended, AgentCard):
            return extended
        return await extended(call)


def _offset(token: str | None) -> int:
    if not token:
        return 0
    try:
        return int(base64.urlsafe_b64decode(token.encode()).decode())
    except (binascii.Error, ValueError):
        raise InvalidParams(f"Invalid params: pageToken: invalid page token {token!r}") from None
