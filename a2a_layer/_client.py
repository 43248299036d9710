"""`A2AClient`: find an agent by its card, send it work, follow its tasks.

::

    async with A2AClient.connect("http://127.0.0.1:9999") as client:
        task = await client.send("Summarise this", return_immediately=True)
        task = await client.wait(task.id, timeout=60)          # poll with backoff
        async for event in client.stream("And now live"):      # SSE, resumes after drops
            ...

Rules:

1. The card is read from ``/.well-known/agent-card.json`` (``/.well-known/agent.json``
   on 404); the first interface whose binding and version this client speaks is used
   (JSON-RPC 1.0 or 0.3, HTTP+JSON 1.0; gRPC 1.0 or 0.3 when the card offers nothing else or
   when asked with ``bindings=[ProtocolBinding.GRPC]``, with the ``grpc`` extra), and
   its ``tenant`` goes into every request.
2. `stream` ends after a message, a terminal or interrupted status, or a terminal task.
   If the connection ends before that, the client fills the gap with GetTask and
   re-subscribes (SubscribeToTask), with backoff, at most ``max_reconnects`` times in a
   row; the events it yields stay in order (a snapshot `Task` marks each resumption).
3. Errors are the agent's (`TaskNotFound`, ...: `A2A_ERRORS` classes);
   `jsonrpc_core.TransportError` when the agent cannot be reached;
   `jsonrpc_core.RequestTimeout` when a call is not answered within ``timeout`` (a
   stream: its first event), however slowly the agent sends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from jsonrpc_core import ConnectionClosed, Deadline, TransportError, WireTap
from jsonrpc_core.http import (
    DEFAULT_MAX_BODY_SIZE,
    AnyAsyncClient,
    as_httpx_client,
    new_async_client,
)

from ._card import resolve_card
from ._client_interface import (
    BINDINGS,
    VERSIONS,
    choose_interface,
    open_transport,
)
from ._client_transport import ClientTransport
from ._errors import UnsupportedOperation
from ._executor import new_id
from ._methods import (
    CANCEL_TASK,
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    GET_EXTENDED_AGENT_CARD,
    GET_TASK,
    GET_TASK_PUSH_NOTIFICATION_CONFIG,
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    LIST_TASKS,
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    SUBSCRIBE_TO_TASK,
)
from ._rpc import EXTENSIONS_HEADER, normalise_version
from .types import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

__all__ = ["A2AClient", "BearerToken", "user_message"]


class BearerToken(httpx.Auth):
    """``Authorization: Bearer <token>`` on every request (an `httpx.Auth`)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["authorization"] = f"Bearer {self.token}"
        yield request


def user_message(
    content: str | Part | Sequence[Part] | Message,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    message_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    reference_task_ids: Sequence[str] | None = None,
) -> Message:
    """A message from the user (a fresh message id unless given)."""
    if isinstance(content, Message):
        update: dict[str, Any] = {}
        if task_id is not None:
            update["task_id"] = task_id
        if context_id is not None:
            update["context_id"] = context_id
        return content.model_copy(update=update) if update else content
    parts = [Part(text=content)] if isinstance(content, str) else content
    return Message(
        message_id=message_id or new_id(),
        role=Role.USER,
        parts=[parts] if isinstance(parts, Part) else list(parts),
        task_id=task_id,
        context_id=context_id,
        metadata=dict(metadata) if metadata is not None else None,
        reference_task_ids=list(reference_task_ids) if reference_task_ids else None,
    )


def _closes_stream(event: StreamResponse) -> bool:
    if event.message is not None:
        return True
    if event.status_update is not None:
        state = event.status_update.status.state
        return state.is_terminal or state.is_interrupted
    return event.task is not None and event.task.status.state.is_terminal


def _task_id(event: StreamResponse) -> str | None:
    if event.task is not None:
        return event.task.id
    if event.status_update is not None:
        return event.status_update.task_id
    if event.artifact_update is not None:
        return event.artifact_update.task_id
    return None


class A2AClient:
    """A client of one A2A agent (see module rules).

    Use `connect` to start from a URL, or build it from a card you have. ``auth`` is any
    `httpx.Auth` (`BearerToken`, or your own), ``headers`` go on every request, and
    ``extensions`` are announced in ``A2A-Extensions``. ``tap`` records the JSON-RPC
    traffic (the HTTP+JSON binding is not JSON-RPC and is not recorded).

    ``timeout`` is each call's total deadline, however slowly the agent sends: a call
    (`send`, `get_task`, ...) from its first byte sent to its answer's last byte read;
    `stream` and `subscribe` until their first event (and each resumption until its
    first), after which a stream lasts as long as its task, each wait for bytes bounded
    by ``read_timeout``; `connect` bounds the card's fetch by it too. Past it the call
    raises `jsonrpc_core.RequestTimeout` and its connection is closed. ``None``: no
    total deadline (httpx's per-phase timeouts still apply). A blocking `send` to an
    agent that works longer than ``timeout`` needs a larger one, or
    ``return_immediately=True`` and `wait`.

    ``max_body_size`` caps each JSON answer or error body, in decoded bytes (past it a
    call raises `jsonrpc_core.http.ResponseTooLarge`).
    """

    def __init__(
        self,
        card: AgentCard,
        *,
        http: AnyAsyncClient | None = None,
        auth: httpx.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        bindings: Sequence[str] = BINDINGS,
        versions: Sequence[str] = VERSIONS,
        timeout: float | None = 30.0,
        read_timeout: float = 300.0,
        tap: WireTap | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        self.card = card
        self.interface = choose_interface(card, bindings, versions)
        self.protocol_version = normalise_version(self.interface.protocol_version)
        self.tenant = self.interface.tenant
        self._owns_http = http is None
        # A user's httpx2 client is fronted by an httpx one (`as_httpx_client`).
        self.http = (
            as_httpx_client(http)
            if http is not None
            else new_async_client(auth=auth, timeout=httpx.Timeout(timeout, read=read_timeout))
        )
        if auth is not None and not self._owns_http:
            self.http.auth = auth
        base_headers = dict(headers or {})
        if extensions:
            base_headers[EXTENSIONS_HEADER] = ",".join(extensions)
        self.transport: ClientTransport = open_transport(
            self.interface,
            self.http,
            headers=base_headers,
            token=auth.token if isinstance(auth, BearerToken) else None,
            timeout=timeout,
            tap=tap,
            max_body_size=max_body_size,
        )

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        base_url: str,
        *,
        http: AnyAsyncClient | None = None,
        auth: httpx.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        card_path: str | None = None,
        **options: Any,
    ) -> AsyncIterator[A2AClient]:
        """Resolve the agent card at ``base_url`` and open a client on it (rule 1); the
        card's fetch is bounded by the ``timeout`` option too."""
        owned = http is None
        timeout = options.get("timeout", 30.0)
        http = (
            as_httpx_client(http)
            if http is not None
            else new_async_client(auth=auth, timeout=httpx.Timeout(timeout, read=300.0))
        )
        try:
            with Deadline(timeout, base_url, "agent card"):
                card = await resolve_card(
                    http,
                    base_url,
                    headers=headers,
                    path=card_path,
                    max_body_size=options.get("max_body_size", DEFAULT_MAX_BODY_SIZE),
                )
            client = cls(card, http=http, auth=auth, headers=headers, **options)
            client._owns_http = owned
            async with client:
                yield client
        finally:
            if owned:
                await http.aclose()

    async def __aenter__(self) -> A2AClient:
        await self.transport.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self.transport.aclose()
        finally:
            if self._owns_http:
                await self.http.aclose()

    # -- messages --------------------------------------------------------------------

    def _send_request(
        self,
        content: str | Part | Sequence[Part] | Message,
        *,
        task_id: str | None,
        context_id: str | None,
        return_immediately: bool,
        history_length: int | None,
        push: TaskPushNotificationConfig | None,
        accepted_output_modes: Sequence[str] | None,
        metadata: Mapping[str, Any] | None,
        message_id: str | None,
    ) -> SendMessageRequest:
        # One validation of the whole request, nested dicts included: building each
        # model (part, message, configuration, request) validates it again on its own.
        # The keys given are those the models would have been built with, so the
        # fields set, and hence the wire form, are the same.
        message: Message | dict[str, Any]
        if isinstance(content, Message):
            message = user_message(content, task_id=task_id, context_id=context_id)
        else:
            parts = [{"text": content}] if isinstance(content, str) else content
            message = {
                "message_id": message_id or new_id(),
                "role": Role.USER,
                "parts": [parts] if isinstance(parts, Part) else list(parts),
                "task_id": task_id,
                "context_id": context_id,
                "metadata": None,
                "reference_task_ids": None,
            }
        config = {
            "accepted_output_modes": list(accepted_output_modes) if accepted_output_modes else None,
            "task_push_notification_config": push,
            "history_length": history_length,
            "return_immediately": return_immediately,
        }
        return SendMessageRequest.model_validate(
            {
                "tenant": self.tenant,
                "message": message,
                "configuration": config,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )

    async def send(
        self,
        content: str | Part | Sequence[Part] | Message,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool = False,
        history_length: int | None = None,
        push: TaskPushNotificationConfig | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        message_id: str | None = None,
    ) -> Task | Message:
        """SendMessage: the task (blocking unless ``return_immediately``) or a reply.

        Retrying with the same ``message_id`` (or the same `Message`) is safe against
        servers that deduplicate, as rpcweave's do.
        """
        request = self._send_request(
            content,
            task_id=task_id,
            context_id=context_id,
            return_immediately=return_immediately,
            history_length=history_length,
            push=push,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
            message_id=message_id,
        )
        return (await self.transport.call(SEND_MESSAGE, request)).payload

    async def stream(
        self,
        content: str | Part | Sequence[Part] | Message,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        push: TaskPushNotificationConfig | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        message_id: str | None = None,
        max_reconnects: int = 5,
        reconnect_delay: float = 0.2,
    ) -> AsyncGenerator[StreamResponse, None]:
        """SendStreamingMessage as an async iterator of events (rule 2)."""
        request = self._send_request(
            content,
            task_id=task_id,
            context_id=context_id,
            return_immediately=False,
            history_length=history_length,
            push=push,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
            message_id=message_id,
        )
        followed: str | None = None
        events = self.transport.stream(SEND_STREAMING_MESSAGE, request)
        try:
            async for event in events:
                if followed is None:
                    followed = _task_id(event)
                yield event
                if _closes_stream(event):
                    return
        except (TransportError, ConnectionClosed):
            if followed is None:
                raise
        finally:
            await events.aclose()
        if followed is None:
            return
        async for event in self._follow(followed, max_reconnects, reconnect_delay):
            yield event

    async def subscribe(
        self, task_id: str, *, max_reconnects: int = 5, reconnect_delay: float = 0.2
    ) -> AsyncGenerator[StreamResponse, None]:
        """SubscribeToTask as an async iterator: the task now, then its events (rule 2)."""
        request = SubscribeToTaskRequest(id=task_id, tenant=self.tenant)
        events = self.transport.stream(SUBSCRIBE_TO_TASK, request)
        try:
            async for event in events:
                yield event
                if _closes_stream(event):
                    return
        except (TransportError, ConnectionClosed):
            pass
        finally:
            await events.aclose()
        async for event in self._follow(task_id, max_reconnects, reconnect_delay):
            yield event

    async def _follow(
        self, task_id: str, max_reconnects: int, delay: float
    ) -> AsyncGenerator[StreamResponse, None]:
        failures = 0
        while True:
            task = await self.get_task(task_id)
            yield StreamResponse(task=task)
            state = task.status.state
            if state.is_terminal or state.is_interrupted:
                return
            if failures >= max_reconnects:
                raise TransportError(
                    f"the stream of task {task_id} dropped {failures} times in a row"
                )
            await anyio.sleep(delay * (2**failures))
            failures += 1
            request = SubscribeToTaskRequest(id=task_id, tenant=self.tenant)
            first = True
            events = self.transport.stream(SUBSCRIBE_TO_TASK, request)
            try:
                async for event in events:
                    if first and event.task == task:
                        first = False
                        continue  # the snapshot just yielded
                    first = False
                    failures = 0
                    yield event
                    if _closes_stream(event):
                        return
            except UnsupportedOperation:
                continue  # terminal meanwhile: GetTask has the end
            except (TransportError, ConnectionClosed):
                continue
            finally:
                await events.aclose()

    async def wait(
        self,
        task_id: str,
        *,
        timeout: float = 300.0,
        interval: float = 0.1,
        max_interval: float = 2.0,
        until: frozenset[TaskState] | None = None,
        since: Task | None = None,
    ) -> Task:
        """Poll GetTask with exponential backoff until the task is terminal or interrupted
        (or in one of ``until``); raises `TimeoutError` after ``timeout`` seconds overall.

        ``since``: a snapshot whose status does not count (after answering an
        input-required task, wait for its *next* interruption or end).
        """
        delay = interval
        with anyio.fail_after(timeout):
            while True:
                task = await self.get_task(task_id)
                state = task.status.state
                if until is not None:
                    matched = state in until
                else:
                    matched = state.is_terminal or state.is_interrupted
                if matched and (since is None or task.status != since.status):
                    return task
                await anyio.sleep(delay)
                delay = min(delay * 2, max_interval)

    # -- tasks -----------------------------------------------------------------------

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """GetTask."""
        request = GetTaskRequest(id=task_id, history_length=history_length, tenant=self.tenant)
        return await self.transport.call(GET_TASK, request)

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        include_artifacts: bool | None = None,
        status_timestamp_after: Any = None,
    ) -> ListTasksResponse:
        """ListTasks (one page; pass ``next_page_token`` back for the next)."""
        request = ListTasksRequest(
            tenant=self.tenant,
            context_id=context_id,
            status=status,
            page_size=page_size,
            page_token=page_token,
            history_length=history_length,
            include_artifacts=include_artifacts,
            status_timestamp_after=status_timestamp_after,
        )
        return await self.transport.call(LIST_TASKS, request)

    async def cancel_task(self, task_id: str, *, metadata: Mapping[str, Any] | None = None) -> Task:
        """CancelTask."""
        request = CancelTaskRequest(
            id=task_id, tenant=self.tenant, metadata=dict(metadata) if metadata else None
        )
        return await self.transport.call(CANCEL_TASK, request)

    # -- push notification configs ---------------------------------------------------

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        token: str | None = None,
        authentication: AuthenticationInfo | None = None,
        config_id: str | None = None,
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig: have the agent POST the task's events to ``url``."""
        request = TaskPushNotificationConfig(
            tenant=self.tenant,
            task_id=task_id,
            id=config_id,
            url=url,
            token=token,
            authentication=authentication,
        )
        return await self.transport.call(CREATE_TASK_PUSH_NOTIFICATION_CONFIG, request)

    async def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig."""
        request = GetTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self.tenant
        )
        return await self.transport.call(GET_TASK_PUSH_NOTIFICATION_CONFIG, request)

    async def list_push_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """ListTaskPushNotificationConfigs (every page)."""
        configs: list[TaskPushNotificationConfig] = []
        token: str | None = None
        while True:
            request = ListTaskPushNotificationConfigsRequest(
                task_id=task_id, tenant=self.tenant, page_token=token
            )
            page = await self.transport.call(LIST_TASK_PUSH_NOTIFICATION_CONFIGS, request)
            configs.extend(page.configs)
            token = page.next_page_token
            if not token:
                return configs

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """DeleteTaskPushNotificationConfig."""
        request = DeleteTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self.tenant
        )
        await self.transport.call(DELETE_TASK_PUSH_NOTIFICATION_CONFIG, request)

    async def get_extended_card(self) -> AgentCard:
        """GetExtendedAgentCard (authenticate first; spec 3.1.11)."""
        request = GetExtendedAgentCardRequest(tenant=self.tenant)
        return await self.transport.call(GET_EXTENDED_AGENT_CARD, request)
