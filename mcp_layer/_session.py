"""One MCP connection on the server side: lifecycle, dispatch, logging, subscriptions.

Rules:

1. Before ``initialize`` only ``initialize`` and ``ping`` are served; any other request
   is refused with -32600 (stateless HTTP has no handshake and skips this).
2. ``notifications/cancelled`` cancels the running handler; a cancelled request gets
   no response, as the spec says.
3. Tool failures are results (``isError: true``), never protocol errors; an unknown tool
   and malformed ``tools/call`` params are protocol errors (-32602).
"""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any

from jsonrpc_core import (
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MessageStream,
    MethodRegistry,
    Notification,
    Peer,
    Request,
    RequestContext,
    RequestId,
)

from ._context import Context
from ._errors import MCP_ERRORS, ResourceNotFound
from ._functions import ArgumentsError
from ._methods import (
    COMPLETION_COMPLETE,
    INITIALIZE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    PING,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    TOOLS_CALL,
    TOOLS_LIST,
)
from ._registry import call
from ._results import to_call_tool_result, to_prompt_result, to_resource_contents
from .types import (
    LATEST_PROTOCOL_VERSION,
    LOGGING_LEVELS,
    SUPPORTED_PROTOCOL_VERSIONS,
    CallToolRequestParams,
    CallToolResult,
    CancelledNotificationParams,
    ClientCapabilities,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    NotificationParams,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    RequestParams,
    ResourceUpdatedNotificationParams,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)

if TYPE_CHECKING:
    from ._server import MCPServer

__all__ = ["ServerSession"]

logger = logging.getLogger("mcp_layer.server")

HTTP_DEFAULT_VERSION = "2025-03-26"
"""What a server assumes over HTTP without an ``MCP-Protocol-Version`` header."""


def _cancel_notification(request_id: RequestId, reason: str) -> Notification:
    return Notification(NOTIFICATIONS_CANCELLED.method, {"requestId": request_id, "reason": reason})


class ServerSession:
    """The server's side of one MCP connection (one HTTP session, or one stdio pipe)."""

    def __init__(self, server: MCPServer, *, stateless: bool = False) -> None:
        self.server = server
        self.stateless = stateless
        self.initialized = stateless
        self.protocol_version = LATEST_PROTOCOL_VERSION
        self.client_info: Implementation | None = None
        self.client_capabilities = ClientCapabilities()
        self.log_level: LoggingLevel | None = None
        self.subscriptions: set[str] = set()
        self.peer: Peer | None = None
        self.registry = self._build_registry()

    def _build_registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        registry.on(INITIALIZE, self._initialize)
        registry.on(PING, self._ping)
        registry.on(TOOLS_LIST, self._list_tools)
        registry.on(TOOLS_CALL, self._call_tool)
        registry.on(RESOURCES_LIST, self._list_resources)
        registry.on(RESOURCES_TEMPLATES_LIST, self._list_templates)
        registry.on(RESOURCES_READ, self._read_resource)
        registry.on(RESOURCES_SUBSCRIBE, self._subscribe)
        registry.on(RESOURCES_UNSUBSCRIBE, self._unsubscribe)
        registry.on(PROMPTS_LIST, self._list_prompts)
        registry.on(PROMPTS_GET, self._get_prompt)
        registry.on(COMPLETION_COMPLETE, self._complete)
        registry.on(LOGGING_SET_LEVEL, self._set_level)
        registry.on(NOTIFICATIONS_INITIALIZED, self._initialized)
        registry.on(NOTIFICATIONS_CANCELLED, self._cancelled)
        registry.on(NOTIFICATIONS_ROOTS_LIST_CHANGED, self._roots_changed)
        return registry

    async def run(self, stream: MessageStream) -> None:
        """Serve this connection until it ends."""
        self.peer = Peer(
            stream,
            self.registry,
            name=f"mcp-server:{self.server.name}",
            errors=MCP_ERRORS,
            answer_cancelled=False,
            on_outgoing_cancel=_cancel_notification,
            request_filter=self._gate,
            max_concurrency=self.server.max_concurrency,
        )
        self.server.sessions.add(self)
        try:
            await self.peer.run()
        finally:
            self.server.sessions.discard(self)

    def version_for(self, request: RequestContext) -> str:
        """The protocol revision of one request (per request in stateless HTTP)."""
        if not self.stateless:
            return self.protocol_version
        header = getattr(request.info, "header", None)
        value = header("mcp-protocol-version") if header is not None else None
        return value or HTTP_DEFAULT_VERSION

    # -- lifecycle -----------------------------------------------------------------

    def _gate(self, request: Request, ctx: RequestContext) -> None:
        if self.initialized or request.method in ("initialize", "ping"):
            return
        raise InvalidRequest(f"Invalid request: {request.method!r} sent before initialization")

    def _initialize(self, params: InitializeRequestParams, ctx: RequestContext) -> InitializeResult:
        requested = params.protocol_version
        self.protocol_version = (
            requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        )
        self.client_info = params.client_info
        self.client_capabilities = params.capabilities
        self.initialized = True
        server = self.server
        return InitializeResult(
            protocol_version=self.protocol_version,
            capabilities=server.capabilities(),
            server_info=server.implementation,
            instructions=server.instructions,
        )

    def _initialized(self, params: NotificationParams, ctx: RequestContext) -> None:
        self.initialized = True

    def _ping(self, params: RequestParams, ctx: RequestContext) -> EmptyResult:
        return EmptyResult()

    def _cancelled(self, params: CancelledNotificationParams, ctx: RequestContext) -> None:
        if params.request_id is not None and self.peer is not None:
            self.peer.cancel_incoming(params.request_id)

    async def _roots_changed(self, params: NotificationParams, ctx: RequestContext) -> None:
        callback = self.server.on_roots_changed
        if callback is not None:
            await call(callback, {"session": self})

    # -- logging ---------------------------------------------------------------------

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

    # -- tools ---------------------------------------------------------------------

    def _list_tools(self, params: PaginatedRequestParams, ctx: RequestContext) -> ListToolsResult:
        page, next_cursor = self.server.page(list(self.server.tools.values()), params.cursor)
        return ListToolsResult(tools=[entry.tool for entry in page], next_cursor=next_cursor)

    async def _call_tool(
        self, params: CallToolRequestParams, ctx: RequestContext
    ) -> CallToolResult:
        entry = self.server.tools.get(params.name)
        if entry is None:
            raise InvalidParams(f"Unknown tool: {params.name}")
        signature = entry.signature
        try:
            kwargs = signature.validate(params.arguments)
        except ArgumentsError as exc:
            return _tool_error(f"Invalid arguments for tool {params.name!r}: {exc}")
        if signature.context_param is not None:
            kwargs[signature.context_param] = Context(self, ctx)
        try:
            value = await call(signature.func, kwargs, in_thread=entry.run_in_thread)
        except JsonRpcError as exc:
            if exc.received:
                # The client refused a request the tool made (sampling, elicitation):
                # the tool failed, the protocol did not.
                return _tool_error(f"{params.name!r} failed: the client answered {exc.message}")
            raise
        except Exception as exc:
            logger.info("tool %r failed: %r", params.name, exc)
            return _tool_error(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        return to_call_tool_result(
            value, output_schema=signature.output_schema, wraps_result=signature.wraps_result
        )

    # -- resources -------------------------------------------------------------------

    def _list_resources(
        self, params: PaginatedRequestParams, ctx: RequestContext
    ) -> ListResourcesResult:
        entries = list(self.server.resources.values())
        page, next_cursor = self.server.page(entries, params.cursor)
        return ListResourcesResult(resources=[e.resource for e in page], next_cursor=next_cursor)

    def _list_templates(
        self, params: PaginatedRequestParams, ctx: RequestContext
    ) -> ListResourceTemplatesResult:
        page, next_cursor = self.server.page(list(self.server.templates.values()), params.cursor)
        return ListResourceTemplatesResult(
            resource_templates=[e.template for e in page], next_cursor=next_cursor
        )

    async def _read_resource(
        self, params: ReadResourceRequestParams, ctx: RequestContext
    ) -> ReadResourceResult:
        uri = params.uri
        static = self.server.resources.get(uri)
        if static is not None:
            kwargs: dict[str, Any] = {}
            if static.context_param:
                kwargs[static.context_param] = Context(self, ctx)
            value = await call(static.func, kwargs)
            contents = to_resource_contents(uri, value, static.resource.mime_type)
            return ReadResourceResult(contents=contents)
        for entry in self.server.templates.values():
            variables = entry.matcher.match(uri)
            if variables is None:
                continue
            kwargs = dict(variables)
            if entry.context_param:
                kwargs[entry.context_param] = Context(self, ctx)
            value = await call(entry.func, kwargs)
            contents = to_resource_contents(uri, value, entry.template.mime_type)
            return ReadResourceResult(contents=contents)
        raise ResourceNotFound(f"Resource not found: {uri}", data={"uri": uri})

    def _subscribe(self, params: SubscribeRequestParams, ctx: RequestContext) -> EmptyResult:
        self.subscriptions.add(params.uri)
        return EmptyResult()

    def _unsubscribe(self, params: UnsubscribeRequestParams, ctx: RequestContext) -> EmptyResult:
        self.subscriptions.discard(params.uri)
        return EmptyResult()

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell this client ``uri`` changed, if it subscribed to it."""
        if uri in self.subscriptions and self.peer is not None and not self.peer.closed:
            await self.peer.notify(
                NOTIFICATIONS_RESOURCES_UPDATED, ResourceUpdatedNotificationParams(uri=uri)
            )

    # -- prompts and completion ------------------------------------------------------

    def _list_prompts(
        self, params: PaginatedRequestParams, ctx: RequestContext
    ) -> ListPromptsResult:
        page, next_cursor = self.server.page(list(self.server.prompts.values()), params.cursor)
        return ListPromptsResult(prompts=[e.prompt for e in page], next_cursor=next_cursor)

    async def _get_prompt(
        self, params: GetPromptRequestParams, ctx: RequestContext
    ) -> GetPromptResult:
        entry = self.server.prompts.get(params.name)
        if entry is None:
            raise InvalidParams(f"Unknown prompt: {params.name}")
        try:
            kwargs = entry.signature.validate(params.arguments)
        except ArgumentsError as exc:
            raise InvalidParams(f"Invalid arguments for prompt {params.name!r}: {exc}") from None
        if entry.signature.context_param is not None:
            kwargs[entry.signature.context_param] = Context(self, ctx)
        value = await call(entry.signature.func, kwargs)
        return to_prompt_result(value, entry.prompt.description)

    async def _complete(self, params: CompleteRequestParams, ctx: RequestContext) -> CompleteResult:
        handler = self.server.completion_handler
        if handler is None:
            return CompleteResult(completion=Completion(values=[]))
        value = await call(
            handler,
            {"ref": params.ref, "argument": params.argument, "context": params.context},
        )
        if isinstance(value, CompleteResult):
            return value
        if isinstance(value, Completion):
            return CompleteResult(completion=value)
        values = list(value or [])
        return CompleteResult(
            completion=Completion(
                values=values[:100], total=len(values), has_more=len(values) > 100
            )
        )


def _tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


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
