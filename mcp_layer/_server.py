"""`MCPServer`: tools, resources and prompts declared on plain functions, served over
stdio, Streamable HTTP (stateful or stateless) and HTTP+SSE from one object, to clients
of both protocol eras: the ``initialize`` handshake (2025-11-25 and earlier) and the
per-request metadata of 2026-07-28, side by side on the same connection or endpoint."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

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
    TASKS_EXTENSION,
    Annotations,
    CacheableResult,
    CacheScope,
    Icon,
    Implementation,
    PromptsCapability,
    ReadResourceResult,
    ResourcesCapability,
    ServerCapabilities,
    ServerTasksCapability,
    ToolAnnotations,
    ToolsCapability,
)

if TYPE_CHECKING:
    # The HTTP server modules load only when `asgi_app` is called: a stdio server
    # never imports them; the tasks extension, when a tool declares ``task_support``.
    from jsonrpc_core import BearerAuth, EventStore, JsonRpcHTTPApp, MessageStream, OriginPolicy
    from jsonrpc_core.http import Route

    from ._mrtr import RequestStateSealer
    from ._subscriptions import ChangeKind, SubscriptionBus
    from ._tasks import TaskManager

__all__ = ["MCPServer"]

logger = logging.getLogger("mcp_layer.server")

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class MCPServer:
    """An MCP server::

    server = MCPServer("demo", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    server.run()                      # stdio
    server.run("http", port=8000)     # Streamable HTTP at /mcp (and HTTP+SSE at /sse)

    2026-07-28 options: ``request_state_key`` seals the ``requestState`` of multi
    round-trip requests (random per process by default: give every instance of a
    scaled-out server the same key), valid ``request_state_ttl`` seconds;
    ``subscriptions`` is the bus ``subscriptions/listen`` streams read (in memory by
    default); ``cache_ttl_ms`` and ``cache_scope`` are the caching hints of the list
    results and ``server/discover`` (``resources/read`` results are ``private``);
    ``identify=False`` leaves ``serverInfo`` out of results' ``_meta``; ``tasks`` is
    the store of the tasks extension (made when a tool declares ``task_support``);
    ``modern=False`` serves the handshake era only (every request is read by its rules).
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
        request_state_key: bytes | str | None = None,
        request_state_ttl: float = 600.0,
        subscriptions: SubscriptionBus | None = None,
        cache_ttl_ms: int = 0,
        cache_scope: CacheScope = "public",
        identify: bool = True,
        tasks: TaskManager | None = None,
        modern: bool = True,
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
        self._request_state: RequestStateSealer | None = None
        self._request_state_ttl = request_state_ttl
        if request_state_key is not None:  # checked now (a key too short is refused)
            self.request_state = _sealer(request_state_key, request_state_ttl)
        self._subscriptions: SubscriptionBus | None = subscriptions or None
        if cache_ttl_ms < 0:
            raise ValueError("cache_ttl_ms must be >= 0")
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self.identify = identify
        self.tasks: TaskManager | None = tasks
        self.modern = modern

    # -- declaring ---------------------------------------------------------------------

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
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
        task_support: Literal["optional", "required"] | None = None,
        task_start: Literal["immediate", "explicit"] = "immediate",
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | F | None = None,
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
        task_support: Literal["optional", "required"] | None = None,
        task_start: Literal["immediate", "explicit"] = "immediate",
    ) -> Callable[[F], F] | F:
        """Declare a function as a tool: ``@server.tool()``, ``@server.tool("name", ...)``
        or bare ``@server.tool``.

        Its input schema comes from the signature and docstring, unless ``input_schema``
        gives a raw JSON Schema (arguments are then validated against it with
        jsonschema). A typed return produces an ``outputSchema`` and
        ``structuredContent``. Exceptions become ``isError`` results. Sync functions run
        on the event loop unless ``run_in_thread``.

        ``task_support`` (tasks extension, 2026-07-28): with ``"optional"``, a call from a
        client that declared the extension runs as a task (the call answers at once
        with the task; the client polls ``tasks/get``); with ``"required"``, a client
        that did not is refused (-32021). In the handshake era (2025-11-25 tasks) it is
        the tool's ``execution.taskSupport``: a call with ``task`` in its params runs as
        a task (``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``); a
        ``"required"`` tool called without it is refused (-32601).

        ``task_start="explicit"`` (2026 era) runs the function in the call until it
        calls `Context.start_task` (questions before that are multi round-trip input
        requests; a function that returns first answers directly).
        """

        if callable(name):  # bare @server.tool: the function itself came as `name`
            return self.tool()(name)

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
                task_support=task_support,
                task_start=task_start,
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
        if entry.task_support is not None and self.tasks is None:
            from ._tasks import TaskManager

            self.tasks = TaskManager()
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
        if callable(uri):  # bare @server.resource: there is no URI to serve it at
            raise TypeError(
                f"@server.resource needs the resource's URI: write "
                f'@server.resource("resource://{getattr(uri, "__name__", "name")}") '
                f"above {getattr(uri, '__qualname__', 'the function')}"
            )

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

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F] | F:
        """Declare a prompt (``@server.prompt()``, ``@server.prompt("name", ...)`` or bare
        ``@server.prompt``); its parameters are the prompt's arguments.

        The function returns a string, a `PromptMessage`, content, a list of those, or a
        `GetPromptResult`.
        """
        if callable(name):  # bare @server.prompt: the function itself came as `name`
            return self.prompt()(name)

        def register(func: F) -> F:
            entry = build_prompt(
                func, name=name, title=title, description=description, icons=icons, meta=meta
            )
            self.prompts[entry.prompt.name] = entry
            return func

        return register

    @overload
    def completion(self, func: F) -> F: ...

    @overload
    def completion(self) -> Callable[[F], F]: ...

    def completion(self, func: Callable[..., Any] | None = None) -> Any:
        """Declare the completion handler: ``(ref, argument, context) -> list[str]``
        (``@server.completion()`` or bare ``@server.completion``)."""

        def register(func: F) -> F:
            self.completion_handler = func
            return func

        return register if func is None else register(func)

    # -- what we advertise -------------------------------------------------------------

    def capabilities(self, *, modern: bool = False) -> ServerCapabilities:
        """The server capabilities, from what has been declared (``modern``: as
        ``server/discover`` states them, extensions included)."""
        extensions: dict[str, dict[str, Any]] | None = None
        tasks: ServerTasksCapability | None = None
        if modern and self.tasks is not None:
            extensions = {TASKS_EXTENSION: {}}
        elif self.tasks is not None:  # 2025-11-25 tasks: task-augmented tools/call
            tasks = ServerTasksCapability.model_validate(
                {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            )
        return ServerCapabilities(
            extensions=extensions,
            tasks=tasks,
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

    @property
    def server_info_meta(self) -> dict[str, Any] | None:
        """``serverInfo`` as 2026-era results carry it in ``_meta`` (``None``: not sent)."""
        if not self.identify:
            return None
        # Dumped for each result (about a microsecond): a cache keyed on the model's own
        # fields missed changes made in place, such as ``implementation.icons.append``.
        return _dump_implementation(self.implementation)

    def cache_hints(self, result_type: type[CacheableResult]) -> tuple[int, CacheScope]:
        """``(ttlMs, cacheScope)`` for a cacheable 2026-era result of ``result_type``."""
        if issubclass(result_type, ReadResourceResult):
            return self.cache_ttl_ms, "private"
        return self.cache_ttl_ms, self.cache_scope

    def page(self, items: list[T], cursor: str | None) -> tuple[list[T], str | None]:
        """One page of a list method's items and the cursor of the next page."""
        start = decode_cursor(cursor)
        if self.page_size is None:
            return items[start:], None
        end = start + self.page_size
        return items[start:end], encode_cursor(end) if end < len(items) else None

    # -- telling clients ---------------------------------------------------------------

    @property
    def request_state(self) -> RequestStateSealer:
        """Seals the ``requestState`` of multi round-trip requests (2026-07-28); made on
        first use when no key was given (with a random one, as ever)."""
        sealer = self._request_state
        if sealer is None:
            sealer = self._request_state = _sealer(None, self._request_state_ttl)
        return sealer

    @request_state.setter
    def request_state(self, sealer: RequestStateSealer) -> None:
        self._request_state = sealer

    @property
    def subscriptions(self) -> SubscriptionBus:
        """The bus ``subscriptions/listen`` streams read (in memory unless one was given;
        created on first use, so a server no client listens to never loads it)."""
        bus = self._subscriptions
        if bus is None:
            from ._subscriptions import InMemorySubscriptionBus

            bus = self._subscriptions = InMemorySubscriptionBus()
        return bus

    @subscriptions.setter
    def subscriptions(self, bus: SubscriptionBus) -> None:
        self._subscriptions = bus

    async def _publish(self, kind: ChangeKind, uri: str | None = None) -> None:
        """Tell the bus's subscriptions; without a bus yet there are none to tell."""
        bus = self._subscriptions
        if bus is not None:
            from ._subscriptions import ChangeEvent

            await bus.publish(ChangeEvent(kind, uri=uri))

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
        """Send ``notifications/tools/list_changed`` to every client (handshake-era
        sessions, and 2026-era ``subscriptions/listen`` streams that asked for it)."""
        await self._broadcast(NOTIFICATIONS_TOOLS_LIST_CHANGED)
        await self._publish("tools")

    async def notify_resources_changed(self) -> None:
        """Send ``notifications/resources/list_changed`` to every client."""
        await self._broadcast(NOTIFICATIONS_RESOURCES_LIST_CHANGED)
        await self._publish("resources")

    async def notify_prompts_changed(self) -> None:
        """Send ``notifications/prompts/list_changed`` to every client."""
        await self._broadcast(NOTIFICATIONS_PROMPTS_LIST_CHANGED)
        await self._publish("prompts")

    async def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to the clients subscribed to ``uri``."""
        for session in list(self.sessions):
            try:
                await session.notify_resource_updated(uri)
            except Exception as exc:
                logger.debug("could not notify a session: %r", exc)
        await self._publish("resource", uri)

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
        from jsonrpc_core import HTTPServerOptions, JsonRpcHTTPApp, OriginPolicy

        from ._http import http_policy_kwargs

        options = HTTPServerOptions(
            path=path,
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
            **http_policy_kwargs(self, stateless=stateless),
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


def _dump_implementation(implementation: Implementation) -> dict[str, Any]:
    """`model_dump(by_alias=True, exclude_none=True, mode="json")` without its wrapper."""
    info: dict[str, Any] = implementation.__pydantic_serializer__.to_python(
        implementation, by_alias=True, exclude_none=True, mode="json"
    )
    return info


def _sealer(key: bytes | str | None, ttl: float) -> RequestStateSealer:
    from ._mrtr import RequestStateSealer  # only servers that see 2026-era requests need it

    return RequestStateSealer(key, ttl=ttl)
