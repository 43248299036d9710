"""`ClientSession`: the host's side of an MCP connection, over any transport.

Rules:

1. Nothing but ``initialize`` (and ``ping``) is sent before the handshake completes;
   `ClientSession.__aenter__` performs it, and refuses a server whose protocol version
   we do not speak.
2. Capabilities are declared from what the host supplies: a sampling handler, an
   elicitation handler, roots.
3. A call abandoned by timeout or cancellation sends ``notifications/cancelled``.
"""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from jsonrpc_core import (
    LocalError,
    MessageStream,
    MethodRegistry,
    Notification,
    Peer,
    RequestContext,
    RequestId,
)

from ._errors import MCP_ERRORS
from ._methods import (
    COMPLETION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_ELICITATION_COMPLETE,
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_PROGRESS,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PING,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
    TOOLS_CALL,
    TOOLS_LIST,
)
from ._registry import call
from .types import (
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    CallToolResult,
    ClientCapabilities,
    CompleteResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitResult,
    EmptyResult,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    RootsCapability,
    SamplingCapability,
    ServerCapabilities,
    Tool,
)

__all__ = ["ClientSession", "ProtocolVersionError", "with_elicitation_defaults"]

logger = logging.getLogger("mcp_layer.client")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
SamplingHandler = Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult] | Any]
ElicitationHandler = Callable[[Any], Awaitable[ElicitResult] | Any]
NotificationCallback = Callable[[Any], Awaitable[None] | None]


def with_elicitation_defaults(params: ElicitRequestFormParams, answer: Any) -> Any:
    """``answer`` with the requested schema's defaults filled in for the fields it omits.

    Only an ``accept`` answer is completed; ``decline`` and ``cancel`` carry no content.
    ``answer`` may be an `ElicitResult` or its JSON object form.
    """
    result = answer if isinstance(answer, ElicitResult) else ElicitResult.model_validate(answer)
    if result.action != "accept":
        return result
    content = dict(result.content or {})
    for name, field in params.requested_schema.properties.items():
        if name not in content and field.default is not None:
            content[name] = field.default
    return result.model_copy(update={"content": content})


async def _run_callback(callback: Callable[..., Any], *args: Any) -> Any:
    """Call a host callback with positional arguments, as its type says; await it if async."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


class ProtocolVersionError(LocalError):
    """The server answered ``initialize`` with a protocol version we do not speak."""


def _cancel_notification(request_id: RequestId, reason: str) -> Notification:
    return Notification(NOTIFICATIONS_CANCELLED.method, {"requestId": request_id, "reason": reason})


class ClientSession:
    """An initialized MCP client connection::

        async with ClientSession(stream) as client:
            tools = await client.list_all_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})

    ``sampling``, ``elicitation`` and ``roots`` are the host's answers to the server's
    requests; ``on_log``, ``on_resource_updated`` and ``on_list_changed`` receive
    notifications (``on_list_changed`` gets "tools", "resources" or "prompts").
    With ``elicitation_defaults``, an accepted form-mode answer is completed with the
    ``default`` of every requested field it leaves out (SEP-1034: clients that support
    defaults pre-populate the form with them).
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_info: Implementation | None = None,
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        roots: list[Root] | Callable[[], Awaitable[list[Root]] | list[Root]] | None = None,
        on_log: NotificationCallback | None = None,
        on_resource_updated: NotificationCallback | None = None,
        on_list_changed: Callable[[str], Awaitable[None] | None] | None = None,
        on_elicitation_complete: NotificationCallback | None = None,
        elicitation_defaults: bool = False,
        request_timeout: float | None = None,
        capabilities: ClientCapabilities | None = None,
    ) -> None:
        self.stream = stream
        self.client_info = client_info or Implementation(name="rpcweave", version="0.1.0")
        self.requested_version = protocol_version
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.on_elicitation_complete = on_elicitation_complete
        self.elicitation_defaults = elicitation_defaults
        self.capabilities = capabilities or self._capabilities()
        self.server: InitializeResult | None = None
        self._progress: dict[str | int, ProgressCallback] = {}
        self._tokens = itertools.count(1)
        self.peer = Peer(
            stream,
            self._registry(),
            name="mcp-client",
            errors=MCP_ERRORS,
            answer_cancelled=False,
            on_outgoing_cancel=self._cancel_notification,
            request_timeout=request_timeout,
        )

    def _cancel_notification(self, request_id: RequestId, reason: str) -> Notification | None:
        # "The initialize request MUST NOT be cancelled by clients": until the handshake
        # is done (only initialize and ping go out before it), abandon without a word.
        if self.server is None:
            return None
        return _cancel_notification(request_id, reason)

    def _capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            sampling=SamplingCapability() if self.sampling is not None else None,
            elicitation=(
                ElicitationCapability.model_validate({"form": {}, "url": {}})
                if self.elicitation is not None
                else None
            ),
            roots=RootsCapability(list_changed=True) if self.roots is not None else None,
        )

    def _registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        registry.on(PING, lambda params, ctx: EmptyResult())
        registry.on(SAMPLING_CREATE_MESSAGE, self._sample)
        registry.on(ELICITATION_CREATE, self._elicit)
        registry.on(ROOTS_LIST, self._list_roots)
        registry.on(NOTIFICATIONS_MESSAGE, self._log)
        registry.on(NOTIFICATIONS_PROGRESS, self._progress_update)
        registry.on(NOTIFICATIONS_RESOURCES_UPDATED, self._resource_updated)
        registry.on(NOTIFICATIONS_ELICITATION_COMPLETE, self._elicitation_complete)
        registry.on(NOTIFICATIONS_CANCELLED, self._cancelled)
        for kind, descriptor in (
            ("tools", NOTIFICATIONS_TOOLS_LIST_CHANGED),
            ("resources", NOTIFICATIONS_RESOURCES_LIST_CHANGED),
            ("prompts", NOTIFICATIONS_PROMPTS_LIST_CHANGED),
        ):
            registry.on(descriptor, self._list_changed_handler(kind))
        return registry

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.peer.__aenter__()
        try:
            await self.initialize()
        except BaseException:
            # Stop the peer as after a clean exit, then raise the handshake's own error:
            # handing it to the task group would wrap it in an ExceptionGroup.
            await self.peer.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self.peer.__aexit__(exc_type, exc, tb)

    async def initialize(self) -> InitializeResult:
        """Perform the handshake (done by ``async with``)."""
        result = await self.peer.request(
            INITIALIZE,
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        if result.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolVersionError(
                f"server speaks MCP {result.protocol_version!r}; we speak "
                + ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
            )
        self.server = result
        headers = getattr(self.stream, "headers", None)
        if isinstance(headers, dict):
            headers["mcp-protocol-version"] = result.protocol_version
        await self.peer.notify(NOTIFICATIONS_INITIALIZED, {})
        return result

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version."""
        return self.server.protocol_version if self.server else self.requested_version

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server said it supports."""
        return self.server.capabilities if self.server else ServerCapabilities()

    @property
    def server_info(self) -> Implementation | None:
        """The server's name and version."""
        return self.server.server_info if self.server else None

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers."""
        await self.peer.request(PING, {}, timeout=timeout)

    # -- tools ---------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools."""
        return await self.peer.request(TOOLS_LIST, {"cursor": cursor} if cursor else {})

    async def list_all_tools(self) -> list[Tool]:
        """Every tool, following ``nextCursor``."""
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self.list_tools(cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """Call a tool; ``progress(progress, total, message)`` gets progress updates."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        result: CallToolResult = await self._with_progress(
            TOOLS_CALL, params, timeout, progress, meta
        )
        return result

    async def _with_progress(
        self,
        descriptor: Any,
        params: dict[str, Any],
        timeout: float | None,
        progress: ProgressCallback | None,
        meta: dict[str, Any] | None,
    ) -> Any:
        meta = dict(meta or {})
        token: int | None = None
        if progress is not None:
            token = next(self._tokens)
            meta["progressToken"] = token
            self._progress[token] = progress
        if meta:
            params["_meta"] = meta
        try:
            return await self.peer.request(descriptor, params, timeout=timeout)
        finally:
            if token is not None:
                self._progress.pop(token, None)

    # -- resources -----------------------------------------------------------------------

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of resources."""
        return await self.peer.request(RESOURCES_LIST, {"cursor": cursor} if cursor else {})

    async def list_all_resources(self) -> list[Resource]:
        """Every resource, following ``nextCursor``."""
        resources: list[Resource] = []
        cursor: str | None = None
        while True:
            page = await self.list_resources(cursor)
            resources.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                return resources

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        """One page of resource templates."""
        params = {"cursor": cursor} if cursor else {}
        return await self.peer.request(RESOURCES_TEMPLATES_LIST, params)

    async def list_all_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following ``nextCursor``."""
        templates: list[ResourceTemplate] = []
        cursor: str | None = None
        while True:
            page = await self.list_resource_templates(cursor)
            templates.extend(page.resource_templates)
            cursor = page.next_cursor
            if not cursor:
                return templates

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        """Read a resource."""
        return await self.peer.request(RESOURCES_READ, {"uri": uri}, timeout=timeout)

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``."""
        await self.peer.request(RESOURCES_SUBSCRIBE, {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop updates about ``uri``."""
        await self.peer.request(RESOURCES_UNSUBSCRIBE, {"uri": uri})

    # -- prompts, completion, logging ---------------------------------------------------

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of prompts."""
        return await self.peer.request(PROMPTS_LIST, {"cursor": cursor} if cursor else {})

    async def list_all_prompts(self) -> list[Prompt]:
        """Every prompt, following ``nextCursor``."""
        prompts: list[Prompt] = []
        cursor: str | None = None
        while True:
            page = await self.list_prompts(cursor)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Render a prompt."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.peer.request(PROMPTS_GET, params)

    async def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, str],
        context: dict[str, Any] | None = None,
    ) -> CompleteResult:
        """Ask for completions of an argument of a prompt or resource template."""
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = context
        return await self.peer.request(COMPLETION_COMPLETE, params)

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask the server to send log messages of ``level`` and above."""
        await self.peer.request(LOGGING_SET_LEVEL, {"level": level})

    async def send_roots_list_changed(self) -> None:
        """Tell the server our roots changed."""
        await self.peer.notify(NOTIFICATIONS_ROOTS_LIST_CHANGED, {})

    # -- the server's requests and notifications ----------------------------------------

    async def _sample(self, params: CreateMessageRequestParams, ctx: RequestContext) -> Any:
        if self.sampling is None:
            from jsonrpc_core import MethodNotFound

            raise MethodNotFound("Sampling is not supported by this client")
        return await _run_callback(self.sampling, params)

    async def _elicit(self, params: Any, ctx: RequestContext) -> Any:
        if self.elicitation is None:
            from jsonrpc_core import MethodNotFound

            raise MethodNotFound("Elicitation is not supported by this client")
        answer = await _run_callback(self.elicitation, params)
        if self.elicitation_defaults and isinstance(params, ElicitRequestFormParams):
            return with_elicitation_defaults(params, answer)
        return answer

    async def _list_roots(self, params: Any, ctx: RequestContext) -> ListRootsResult:
        roots = self.roots
        if roots is None:
            from jsonrpc_core import MethodNotFound

            raise MethodNotFound("Roots are not supported by this client")
        value = await call(roots, {}) if callable(roots) else roots
        return ListRootsResult(roots=list(value))

    async def _log(self, params: LoggingMessageNotificationParams, ctx: RequestContext) -> None:
        if self.on_log is not None:
            await _run_callback(self.on_log, params)
        else:
            logger.info("server log [%s] %s: %s", params.level, params.logger or "-", params.data)

    async def _progress_update(
        self, params: ProgressNotificationParams, ctx: RequestContext
    ) -> None:
        callback = self._progress.get(params.progress_token)
        if callback is not None:
            await _run_callback(callback, params.progress, params.total, params.message)

    async def _resource_updated(self, params: Any, ctx: RequestContext) -> None:
        if self.on_resource_updated is not None:
            await _run_callback(self.on_resource_updated, params)

    async def _elicitation_complete(self, params: Any, ctx: RequestContext) -> None:
        if self.on_elicitation_complete is not None:
            await _run_callback(self.on_elicitation_complete, params)

    def _cancelled(self, params: Any, ctx: RequestContext) -> None:
        if params.request_id is not None:
            self.peer.cancel_incoming(params.request_id)

    def _list_changed_handler(self, kind: str) -> Callable[[Any, RequestContext], Awaitable[None]]:
        async def handle(params: Any, ctx: RequestContext) -> None:
            if self.on_list_changed is not None:
                await _run_callback(self.on_list_changed, kind)

        return handle
