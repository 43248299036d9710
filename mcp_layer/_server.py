"""`MCPServer`: tools, resources and prompts declared on plain functions, served over
stdio, Streamable HTTP (stateful or stateless) and HTTP+SSE from one object."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from jsonrpc_core import (
    BearerAuth,
    EventStore,
    HTTPError,
    HTTPRequestInfo,
    HTTPServerOptions,
    HTTPSession,
    Incoming,
    JsonRpcHTTPApp,
    MessageStream,
    OriginPolicy,
    Request,
    Route,
    SessionPolicy,
)

from ._methods import (
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
)
from ._registry import (
    CompletionHandler,
    PromptEntry,
    ResourceEntry,
    TemplateEntry,
    ToolEntry,
    build_prompt,
    build_resource,
)
from ._session import ServerSession, decode_cursor, encode_cursor
from .types import (
    SUPPORTED_PROTOCOL_VERSIONS,
    Annotations,
    Icon,
    Implementation,
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolAnnotations,
    ToolsCapability,
)

__all__ = ["MCPServer"]

logger = logging.getLogger("mcp_layer.server")

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def _is_initialize(payload: Incoming) -> bool:
    return isinstance(payload, Request) and payload.method == "initialize"


class MCPServer:
    """An MCP server::

    server = MCPServer("demo", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    server.run()                      # stdio
    server.run("http", port=8000)     # Streamable HTTP at /mcp (and HTTP+SSE at /sse)
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        page_size: int | None = None,
        max_concurrency: int = 64,
    ) -> None:
        self.name = name
        self.implementation = Implementation(
            name=name,
            version=version,
            title=title,
            description=description,
            website_url=website_url,
            icons=icons,
        )
        self.instructions = instructions
        self.page_size = page_size
        self.max_concurrency = max_concurrency
        self.tools: dict[str, ToolEntry] = {}
        self.resources: dict[str, ResourceEntry] = {}
        self.templates: dict[str, TemplateEntry] = {}
        self.prompts: dict[str, PromptEntry] = {}
        self.completion_handler: CompletionHandler | None = None
        self.on_roots_changed: Callable[..., Any] | None = None
        self.sessions: set[ServerSession] = set()
        self.logging_enabled = True

    # -- declaring ---------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        run_in_thread: bool = False,
    ) -> Callable[[F], F]:
        """Declare a function as a tool.

        Its input schema comes from the signature and docstring, unless ``input_schema``
        gives a raw JSON Schema (arguments are then validated against it with
        jsonschema). A typed return produces an ``outputSchema`` and
        ``structuredContent``. Exceptions become ``isError`` results. Sync functions run
        on the event loop unless ``run_in_thread``.
        """

        def register(func: F) -> F:
            self.add_tool(
                func,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                input_schema=input_schema,
                output_schema=output_schema,
                structured_output=structured_output,
                icons=icons,
                meta=meta,
                run_in_thread=run_in_thread,
            )
            return func

        return register

    def add_tool(self, func: Callable[..., Any], **options: Any) -> ToolEntry:
        """Add a tool (the non-decorator form of `tool`)."""
        options.setdefault("name", None)
        for key in (
            "title",
            "description",
            "annotations",
            "input_schema",
            "output_schema",
            "structured_output",
            "icons",
            "meta",
        ):
            options.setdefault(key, None)
        options.setdefault("run_in_thread", False)
        entry = ToolEntry.build(func, **options)
        self.tools[entry.tool.name] = entry
        return entry

    def remove_tool(self, name: str) -> None:
        """Remove a tool (clients learn it from `notify_tools_changed`)."""
        self.tools.pop(name, None)

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        size: int | None = None,
    ) -> Callable[[F], F]:
        """Declare a resource; a URI with ``{variables}`` (RFC 6570) makes a template.

        The function returns ``str`` (text), ``bytes`` (blob), contents objects, or
        anything JSON-serialisable; template variables arrive as keyword arguments.
        """

        def register(func: F) -> F:
            entry = build_resource(
                func,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                icons=icons,
                meta=meta,
                size=size,
            )
            if isinstance(entry, TemplateEntry):
                self.templates[uri] = entry
            else:
                self.resources[uri] = entry
            return func

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Declare a prompt; its parameters are the prompt's arguments.

        The function returns a string, a `PromptMessage`, content, a list of those, or a
        `GetPromptResult`.
        """

        def register(func: F) -> F:
            entry = build_prompt(
                func, name=name, title=title, description=description, icons=icons, meta=meta
            )
            self.prompts[entry.prompt.name] = entry
            return func

        return register

    def completion(self) -> Callable[[F], F]:
        """Declare the completion handler: ``(ref, argument, context) -> list[str]``."""

        def register(func: F) -> F:
            self.completion_handler = func
            return func

        return register

    # -- what we advertise -------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        """The server capabilities, from what has been declared."""
        return ServerCapabilities(
            tools=ToolsCapability(list_changed=True) if self.tools else None,
            resources=(
                ResourcesCapability(subscribe=True, list_changed=True)
                if self.resources or self.templates
                else None
            ),
            prompts=PromptsCapability(list_changed=True) if self.prompts else None,
            logging={} if self.logging_enabled else None,
            completions={} if self.completion_handler is not None else None,
        )

    def page(self, items: list[T], cursor: str | None) -> tuple[list[T], str | None]:
        """One page of a list method's items and the cursor of the next page."""
        start = decode_cursor(cursor)
        if self.page_size is None:
            return items[start:], None
        end = start + self.page_size
        return items[start:end], encode_cursor(end) if end < len(items) else None

    # -- telling clients ---------------------------------------------------------------

    async def _broadcast(self, descriptor: Any, params: Any = None) -> None:
        for session in list(self.sessions):
            peer = session.peer
            if peer is None or peer.closed or not session.initialized:
                continue
            try:
                await peer.notify(descriptor, params or {})
            except Exception as exc:  # one dead client must not stop the others
                logger.debug("could not notify a session: %r", exc)

    async def notify_tools_changed(self) -> None:
        """Send ``notifications/tools/list_changed`` to every client."""
        await self._broadcast(NOTIFICATIONS_TOOLS_LIST_CHANGED)

    async def notify_resources_changed(self) -> None:
        """Send ``notifications/resources/list_changed`` to every client."""
        await self._broadcast(NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    async def notify_prompts_changed(self) -> None:
        """Send ``notifications/prompts/list_changed`` to every client."""
        await self._broadcast(NOTIFICATIONS_PROMPTS_LIST_CHANGED)

    async def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to the clients subscribed to ``uri``."""
        for session in list(self.sessions):
            try:
                await session.notify_resource_updated(uri)
            except Exception as exc:
                logger.debug("could not notify a session: %r", exc)

    # -- serving -----------------------------------------------------------------------

    async def serve(self, stream: MessageStream, *, stateless: bool = False) -> None:
        """Serve one connection (any `MessageStream`) until it ends."""
        await ServerSession(self, stateless=stateless).run(stream)

    async def run_stdio(self) -> None:
        """Serve on this process's stdin and stdout."""
        from jsonrpc_core import stdio_server

        async with stdio_server() as stream:
            await self.serve(stream)

    def asgi_app(
        self,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        event_store: EventStore | None = None,
        retry_interval_ms: int | None = None,
        legacy_sse: bool = True,
        origin_policy: OriginPolicy | None = None,
        auth: BearerAuth | None = None,
        routes: Sequence[Route] = (),
        idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        max_body_size: int | None = None,
    ) -> JsonRpcHTTPApp:
        """This server as an ASGI app: Streamable HTTP at ``path``, and unless
        ``legacy_sse=False`` the 2024-11-05 HTTP+SSE transport at ``/sse`` + ``/messages``.
        """
        options = HTTPServerOptions(
            path=path,
            sessions=None if stateless else SessionPolicy(is_start=_is_initialize),
            json_response=json_response,
            standalone_stream=not stateless,
            legacy_sse_path="/sse" if legacy_sse and not stateless else None,
            event_store=event_store,
            retry_interval_ms=retry_interval_ms,
            idle_timeout=idle_timeout,
            max_sessions=max_sessions,
            origin_policy=origin_policy if origin_policy is not None else OriginPolicy.loopback(),
            auth=auth,
            routes=routes,
            allow_batch=False,
            validate=_check_protocol_version,
        )
        if max_body_size is not None:
            options.max_body_size = max_body_size

        async def serve_connection(stream: MessageStream) -> None:
            await self.serve(stream, stateless=stateless)

        return JsonRpcHTTPApp(serve_connection, options)

    def run(
        self,
        transport: Literal["stdio", "http", "streamable-http", "sse"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        **app_options: Any,
    ) -> None:
        """Serve until interrupted: stdio, or HTTP on ``host:port`` (127.0.0.1 by default)."""
        if transport == "stdio":
            import anyio

            anyio.run(self.run_stdio)
            return
        from jsonrpc_core import serve

        serve(self.asgi_app(**app_options), host=host, port=port)


def _check_protocol_version(
    info: HTTPRequestInfo, payload: Incoming | None, session: HTTPSession | None
) -> None:
    version = info.headers.get("mcp-protocol-version")
    if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        raise HTTPError(
            400,
            f"Bad Request: unsupported MCP-Protocol-Version {version!r}; supported: "
            + ", ".join(SUPPORTED_PROTOCOL_VERSIONS),
        )
