"""One MCP connection on the server side: both eras, dispatch, logging, subscriptions.

The handlers of the features (tools, resources, prompts, completion) are
`mcp_layer._session_features.FeatureHandlers`, the base of `ServerSession`.

A connection (a stdio pipe, an HTTP session, or the one connection that serves every
sessionless HTTP request) may carry requests of both eras (see `mcp_layer._era`).

Rules:

1. Handshake era: before ``initialize`` only ``initialize`` and ``ping`` are served;
   any other request is refused with -32600 (stateless HTTP has no handshake and skips
   this). 2026 era: every request stands alone; its ``_meta`` is checked before
   anything runs (-32602, -32022; -32601 for the methods the era removed).
2. ``notifications/cancelled`` cancels the running handler, and so does, for a 2026-era
   request over HTTP, the client closing its response stream; a cancelled request gets
   no response, as the spec says.
3. Tool failures are results (``isError: true``), never protocol errors; an unknown tool
   and malformed ``tools/call`` params are protocol errors (-32602).
4. A 2026-era result says ``resultType``, names the server in ``_meta``, and carries
   caching hints when its method is cacheable; an ``InputRequiredResult`` never does.
5. A 2026-era ``tools/call``, ``prompts/get`` or ``resources/read`` verifies its
   ``requestState`` before its handler runs; a missing answer ends the handler with an
   ``InputRequiredResult`` (see `mcp_layer._mrtr`).
"""

from __future__ import annotations

import base64
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import (
    InvalidParams,
    InvalidRequest,
    MessageStream,
    MethodRegistry,
    Notification,
    Peer,
    Request,
    RequestContext,
    RequestId,
    RequestType,
)

from ._disconnect import unless_disconnected
from ._era import RequestScope, check_modern_request, is_modern, original_request_id
from ._errors import MCP_ERRORS, MissingRequiredClientCapability
from ._methods import (
    COMPLETION_COMPLETE,
    INITIALIZE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PING,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
    TOOLS_CALL,
    TOOLS_LIST,
)
from ._registry import call
from ._session_features import FeatureHandlers
from ._telemetry import MCP_SERVER_TELEMETRY
from .types import (
    LATEST_PROTOCOL_VERSION,
    LOGGING_LEVELS,
    MODERN_PROTOCOL_VERSIONS,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    TASKS_EXTENSION,
    CacheableResult,
    CancelledNotificationParams,
    ClientCapabilities,
    DiscoverResult,
    EmptyResult,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    InputRequiredResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    NotificationParams,
    RequestParams,
    Result,
    SetLevelRequestParams,
    SubscriptionFilter,
    SubscriptionsListenRequestParams,
)

if TYPE_CHECKING:
    from ._mrtr import InputRound
    from ._server import MCPServer
    from ._subscriptions import ChangeEvent

__all__ = ["ServerSession"]

logger = logging.getLogger("mcp_layer.server")

HTTP_DEFAULT_VERSION = "2025-03-26"
"""What a server assumes over HTTP without an ``MCP-Protocol-Version`` header."""


def _cancel_notification(request_id: RequestId, reason: str) -> Notification:
    return Notification(NOTIFICATIONS_CANCELLED.method, {"requestId": request_id, "reason": reason})


class ServerSession(FeatureHandlers):
    """The server's side of one MCP connection (one HTTP session, or one stdio pipe)."""

    def __init__(self, server: MCPServer, *, stateless: bool = False) -> None:
        self.server = server
        self.stateless = stateless
        self.initialized = stateless
        self.protocol_version = LATEST_PROTOCOL_VERSION
        self.client_info: Implementation | None = None
        self.client_capabilities = ClientCapabilities()
        self.log_level: LoggingLevel | None = None
        self.subscriptions = set()
        self.peer = None
        self.task_group: anyio.abc.TaskGroup | None = None
        # The request `_gate` last found modern: its handler asks `scope` right after
        # (no checkpoint between them), which then need not read its `_meta` again.
        self._gated_modern: RequestContext | None = None
        self.registry = self._build_registry()

    def _build_registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        # Handshake era only (the gate refuses them in the 2026 era).
        registry.on(INITIALIZE, self._initialize)
        registry.on(PING, self._ping)
        registry.on(RESOURCES_SUBSCRIBE, self._subscribe)
        registry.on(RESOURCES_UNSUBSCRIBE, self._unsubscribe)
        registry.on(LOGGING_SET_LEVEL, self._set_level)
        # Both eras.
        self._on(registry, TOOLS_LIST, self._list_tools)
        self._on(registry, TOOLS_CALL, self._call_tool)
        self._on(registry, RESOURCES_LIST, self._list_resources)
        self._on(registry, RESOURCES_TEMPLATES_LIST, self._list_templates)
        self._on(registry, RESOURCES_READ, self._read_resource)
        self._on(registry, PROMPTS_LIST, self._list_prompts)
        self._on(registry, PROMPTS_GET, self._get_prompt)
        self._on(registry, COMPLETION_COMPLETE, self._complete)
        # 2026-07-28 only.
        self._on(registry, SERVER_DISCOVER, self._discover)
        self._on(registry, SUBSCRIPTIONS_LISTEN, self._listen)
        tasks = self.server.tasks
        if tasks is not None:
            for descriptor, handler in tasks.handlers(self):
                self._on(registry, descriptor, handler)
        registry.on(NOTIFICATIONS_INITIALIZED, self._initialized)
        registry.on(NOTIFICATIONS_CANCELLED, self._cancelled)
        registry.on(NOTIFICATIONS_ROOTS_LIST_CHANGED, self._roots_changed)
        return registry

    def _on(
        self,
        registry: MethodRegistry,
        descriptor: RequestType[Any, Any],
        handler: Callable[[Any, RequestContext, RequestScope], Awaitable[Any] | Any],
    ) -> None:
        """Register a handler of both eras: it gets the request's scope, and a 2026-era
        result is completed (rule 4)."""

        is_async = inspect.iscoroutinefunction(handler)

        async def serve(params: Any, ctx: RequestContext) -> Any:
            scope = self.scope(ctx)
            if not scope.modern:
                if is_async:
                    return await handler(params, ctx, scope)
                result = handler(params, ctx, scope)
                return await result if inspect.isawaitable(result) else result
            disconnected = getattr(ctx.info, "disconnected", None)
            if disconnected is None:
                result = handler(params, ctx, scope)
                result = await result if inspect.isawaitable(result) else result
            else:
                result = await unless_disconnected(
                    disconnected, handler, params, ctx, scope, self.task_group
                )
            return self.complete_result(result)

        registry.on(descriptor, serve)

    async def run(self, stream: MessageStream) -> None:
        """Serve this connection until it ends."""
        self.peer = Peer(
            stream,
            self.registry,
            name=f"mcp-server:{self.server.name}",
            errors=MCP_ERRORS,
            telemetry=MCP_SERVER_TELEMETRY,
            answer_cancelled=False,
            on_outgoing_cancel=_cancel_notification,
            request_filter=self._gate,
            max_concurrency=self.server.max_concurrency,
        )
        self.server.sessions.add(self)
        try:
            async with anyio.create_task_group() as task_group:
                self.task_group = task_group
                await self.peer.run()
                task_group.cancel_scope.cancel()
        finally:
            self.task_group = None
            self.server.sessions.discard(self)

    def version_for(self, request: RequestContext) -> str:
        """The protocol revision of one handshake-era request (per request when stateless)."""
        if not self.stateless:
            return self.protocol_version
        header = getattr(request.info, "header", None)
        value = header("mcp-protocol-version") if header is not None else None
        return value or HTTP_DEFAULT_VERSION

    def legacy_scope(self, ctx: RequestContext) -> RequestScope:
        """The scope of a handshake-era request: what ``initialize`` said."""
        return RequestScope(
            modern=False,
            protocol_version=self.version_for(ctx),
            client_capabilities=self.client_capabilities,
            client_info=self.client_info,
            log_level=self.log_level,
        )

    def scope(self, ctx: RequestContext) -> RequestScope:
        """The era of a request and what it says about its client."""
        if self._gated_modern is ctx:  # `_gate` decided it (once per request)
            self._gated_modern = None
            return RequestScope.from_envelope(ctx.raw_params)
        if self.server.modern and is_modern(ctx.method, ctx.raw_params, ctx.info):
            return RequestScope.from_envelope(ctx.raw_params)
        return self.legacy_scope(ctx)

    # -- lifecycle -----------------------------------------------------------------

    def _gate(self, request: Request, ctx: RequestContext) -> None:
        if self.server.modern and is_modern(request.method, request.params, ctx.info):
            check_modern_request(
                request.method, request.params, tasks=self.server.tasks is not None
            )
            self._gated_modern = ctx
            return
        self._gated_modern = None
        if self.initialized or request.method in ("initialize", "ping"):
            return
        raise InvalidRequest(f"Invalid request: {request.method!r} sent before initialization")

    def _initialize(self, params: InitializeRequestParams, ctx: RequestContext) -> InitializeResult:
        from .types import SUPPORTED_PROTOCOL_VERSIONS

        requested = params.protocol_version
        self.protocol_version = (
            requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        )
        self.client_info = params.client_info
        self.client_capabilities = params.capabilities
        self.initialized = True
        server = self.server
        capabilities = server.capabilities()
        if capabilities.tasks is not None and self.stateless and _principal_of(ctx) is None:
            # Tasks bind to nothing here (no session, no principal): listing them would
            # show every requestor's (2025-11-25 tasks, security considerations).
            capabilities.tasks.list = None
        return InitializeResult(
            protocol_version=self.protocol_version,
            capabilities=capabilities,
            server_info=server.implementation,
            instructions=server.instructions,
        )

    def _initialized(self, params: NotificationParams, ctx: RequestContext) -> None:
        self.initialized = True

    def _ping(self, params: RequestParams, ctx: RequestContext) -> EmptyResult:
        return EmptyResult()

    def _cancelled(self, params: CancelledNotificationParams, ctx: RequestContext) -> None:
        from jsonrpc_core.http import HTTPRequestInfo  # here: a stdio server never loads HTTP

        if isinstance(ctx.info, HTTPRequestInfo) and ctx.info.session_id is None:
            # A POST without a session shares its connection with every other client,
            # under remapped ids: a client-chosen id could name someone else's request.
            # There, closing the response stream is the cancellation.
            return
        if params.request_id is not None and self.peer is not None:
            self.peer.cancel_incoming(params.request_id)

    async def _roots_changed(self, params: NotificationParams, ctx: RequestContext) -> None:
        callback = self.server.on_roots_changed
        if callback is not None:
            await call(callback, {"session": self})

    # -- 2026-07-28 results ------------------------------------------------------------

    def complete_result(self, result: Any) -> Any:
        """A 2026-era result as rule 4 says (the model is updated in place)."""
        if not isinstance(result, Result):
            return result
        if result.result_type is None:
            result.result_type = "complete"
        info = self.server.server_info_meta
        if info is not None:
            result.meta = {**(result.meta or {}), SERVER_INFO_META_KEY: info}
        if isinstance(result, CacheableResult) and result.result_type == "complete":
            hints = self.server.cache_hints(type(result))
            if result.ttl_ms is None:
                result.ttl_ms = hints[0]
            if result.cache_scope is None:
                result.cache_scope = hints[1]
        return result

    def complete_wire(self, result: dict[str, Any]) -> dict[str, Any]:
        """`complete_result` for the wire form of a result that is not cacheable (as
        `to_call_tool_wire` writes it): encoded, the same bytes as the completed model,
        members in the model's order (``_meta``, ``resultType``, then the result's)."""
        info = self.server.server_info_meta
        completed: dict[str, Any] = {} if info is None else {"_meta": {SERVER_INFO_META_KEY: info}}
        completed["resultType"] = "complete"
        completed.update(result)
        return completed

    def _discover(self, params: RequestParams, ctx: RequestContext, scope: Any) -> DiscoverResult:
        server = self.server
        return DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=server.capabilities(modern=True),
            instructions=server.instructions,
        )

    def _input_round(
        self,
        ctx: RequestContext,
        method: str,
        target: str,
        arguments: Any,
        params: Any,
        *,
        can_ask: bool = True,
    ) -> InputRound | None:
        """The round of a 2026-era request; ``can_ask``: whether its function takes a
        `Context` (one that does not never has a state sealed, `open_round`). ``None``
        when there is nothing to check and nothing can be asked."""
        extra = params.model_extra or {}
        responses = extra.get("inputResponses")
        state = extra.get("requestState")
        if not can_ask and responses is None and state is None:
            return None
        sealer = self.server.request_state
        principal = sealer.principal_id(getattr(ctx.info, "principal", None))
        return sealer.open_round(
            method, target, arguments, principal, responses, state, can_ask=can_ask
        )

    def _input_required(self, inputs: InputRound, requests: dict[str, Any]) -> InputRequiredResult:
        state = self.server.request_state.seal(inputs.state(list(requests)))
        return InputRequiredResult(
            result_type="input_required", input_requests=requests, request_state=state
        )

    # -- subscriptions ------------------------------------------------------------------

    def agreed_filter(
        self, requested: SubscriptionFilter, scope: RequestScope
    ) -> SubscriptionFilter:
        """The part of a ``subscriptions/listen`` filter this server honours."""
        server = self.server
        agreed = SubscriptionFilter()
        if requested.tools_list_changed and server.tools:
            agreed.tools_list_changed = True
        if requested.prompts_list_changed and server.prompts:
            agreed.prompts_list_changed = True
        has_resources = bool(server.resources or server.templates)
        if requested.resources_list_changed and has_resources:
            agreed.resources_list_changed = True
        if requested.resource_subscriptions is not None and has_resources:
            agreed.resource_subscriptions = list(requested.resource_subscriptions)
        if requested.task_ids is not None:
            if not scope.has_extension(TASKS_EXTENSION):
                raise MissingRequiredClientCapability.for_capabilities(
                    {"extensions": {TASKS_EXTENSION: {}}}
                )
            if server.tasks is not None:
                agreed.task_ids = list(requested.task_ids)
        return agreed

    async def _listen(
        self, params: SubscriptionsListenRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> Result:
        agreed = self.agreed_filter(params.notifications, scope)
        subscription_id = original_request_id(ctx)
        meta = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        peer = ctx.peer
        from ._subscriptions import wants

        async with self.server.subscriptions.subscribe() as events:
            await peer.notify(
                NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                {"_meta": meta, "notifications": agreed},
            )
            async for event in events:
                if wants(agreed, event):
                    await peer.notify(*_change_notification(event, meta))
        # The bus ended the subscription (shutdown, or this subscriber fell behind).
        return Result(result_type="complete", meta=meta)

    # -- logging (handshake era) --------------------------------------------------------

    def _set_level(self, params: SetLevelRequestParams, ctx: RequestContext) -> EmptyResult:
        self.log_level = params.level
        return EmptyResult()

    def wants_log(self, level: LoggingLevel) -> bool:
        """Whether the client's log level lets a message of ``level`` through."""
        if self.log_level is None:
            return True
        return LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(self.log_level)

    async def send_log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client's level allows it."""
        if self.peer is None or not self.wants_log(level):
            return
        params = LoggingMessageNotificationParams(level=level, logger=logger, data=data)
        await self.peer.notify(NOTIFICATIONS_MESSAGE, params)


def _change_notification(event: ChangeEvent, meta: dict[str, Any]) -> tuple[Any, Any]:
    if event.kind == "tools":
        return NOTIFICATIONS_TOOLS_LIST_CHANGED, {"_meta": meta}
    if event.kind == "prompts":
        return NOTIFICATIONS_PROMPTS_LIST_CHANGED, {"_meta": meta}
    if event.kind == "resources":
        return NOTIFICATIONS_RESOURCES_LIST_CHANGED, {"_meta": meta}
    if event.kind == "resource":
        return NOTIFICATIONS_RESOURCES_UPDATED, {"_meta": meta, "uri": event.uri}
    params = dict(event.task or {})
    params.pop("resultType", None)
    params["_meta"] = {**params.get("_meta", {}), **meta}
    from ._methods import NOTIFICATIONS_TASKS  # the tasks extension's: loaded on first use

    return NOTIFICATIONS_TASKS, params


def _principal_of(ctx: RequestContext) -> Any:
    return getattr(ctx.info, "principal", None)


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page starting at ``offset``."""
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode("ascii")


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor stands for; -32602 for a cursor we did not make."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        kind, _, number = text.partition(":")
        if kind != "offset" or not number.isdigit():
            raise ValueError(cursor)
        return int(number)
    except (ValueError, UnicodeError):
        raise InvalidParams(f"Invalid cursor: {cursor!r}") from None
