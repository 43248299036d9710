"""`A2AServer`: an agent served over HTTP with every A2A binding this layer speaks.

One ASGI application (a `jsonrpc_core.JsonRpcHTTPApp`) carries the agent card at
``/.well-known/agent-card.json``, the JSON-RPC endpoint at ``rpc_path`` (1.0 and 0.3
method names; a trailing slash is accepted), the HTTP+JSON routes under ``rest_path``
(tenant forms included), and SSE for the streaming methods::

    server = A2AServer(card, MyAgent(), store=SQLiteTaskStore("tasks.db"))
    server.run(port=9999)                      # or: serve(server.asgi_app())

The interfaces of the card are filled in from ``url`` (or, when it is not given, from
each request's ``Host``), unless the card lists its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

import anyio

from jsonrpc_core import (
    BearerAuth,
    HTTPServerOptions,
    JsonRpcHTTPApp,
    MessageStream,
    OriginPolicy,
    Peer,
    Request,
)
from jsonrpc_core.http import HTTPRequest, HTTPRequestInfo

from ._card import card_routes
from ._errors import A2A_ERRORS
from ._executor import AgentExecutor, AgentFunction
from ._rpc import STREAMED_METHOD_NAMES, build_registry, response_headers, validate_hook
from ._runtime import TaskRuntime
from ._service import A2AService, ExtendedCardProvider
from ._store import InMemoryTaskStore, TaskStore, principal_owner
from ._telemetry import A2A_SERVER_TELEMETRY
from .types import AgentCard, AgentInterface, ProtocolBinding

if TYPE_CHECKING:
    import httpx

    from jsonrpc_core.http import Route

    from ._push import PushDispatcher

__all__ = ["A2AServer"]

ASGIScope = MutableMapping[str, Any]
ASGIReceive = Callable[[], Awaitable[MutableMapping[str, Any]]]
ASGISend = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class A2AServer:
    """An A2A agent server (see module docstring).

    ``card`` describes the agent; its ``capabilities`` decide what is offered
    (streaming, push notifications, the extended card). ``executor`` is an
    `AgentExecutor` or an ``async def agent(context, updater)`` function. ``store``
    keeps tasks (in memory by default). Push delivery is configured with
    ``push_retries``, ``push_backoff``, ``push_timeout``, ``push_client`` (the
    `httpx.AsyncClient` to POST with), ``max_push_configs_per_task`` (None: 10) and
    ``max_push_configs`` (None: 10,000 in all). Webhooks must be public addresses:
    a loopback, private, link-local, carrier-grade NAT or unique-local target is refused
    when registered (`InvalidParams`) and again on the address each delivery connects to
    (resolved once, so DNS rebinding cannot switch it); ``allow_private_webhooks=True``
    lifts this, for loopback receivers or a trusted private network. With a
    ``push_client`` of your own the registration check holds, and each delivery checks
    the address first, but only an address policy in that client's transport
    (``new_async_client(resolve=public_addresses_only(), trust_env=False)``) pins the
    address it connects to; see `PushDispatcher`. ``auth`` verifies bearer tokens on the
    JSON-RPC, HTTP+JSON and gRPC endpoints (the card stays public); each task then
    belongs to the caller that created it, named by ``owner_of(principal)`` (issuer,
    subject and client id of a token by default): other callers can neither see nor
    touch it. ``grpc_port`` (0: any free port) also serves the gRPC binding on
    ``grpc_host`` while `running` (the ``grpc`` extra; asyncio only): the 1.0 service
    and, unless ``compat_v03`` is off, the 0.3 one; the card then lists both.
    """

    def __init__(
        self,
        card: AgentCard,
        executor: AgentExecutor | AgentFunction,
        *,
        store: TaskStore | None = None,
        url: str | None = None,
        rpc_path: str = "/",
        rest_path: str | None = "/rest",
        compat_v03: bool = True,
        extended_card: AgentCard | ExtendedCardProvider | None = None,
        auth: BearerAuth | None = None,
        origin_policy: OriginPolicy | None = None,
        card_max_age: int = 300,
        max_concurrency: int = 512,
        max_body_size: int | None = None,
        subscriber_buffer: int = 256,
        push_retries: int = 5,
        push_backoff: float = 0.5,
        push_timeout: float = 10.0,
        allow_private_webhooks: bool = False,
        push_client: httpx.AsyncClient | None = None,
        max_push_configs_per_task: int | None = None,
        max_push_configs: int | None = None,
        owner_of: Callable[[Any], str | None] = principal_owner,
        grpc_port: int | None = None,
        grpc_host: str = "127.0.0.1",
    ) -> None:
        self.card = card
        self.store = store if store is not None else InMemoryTaskStore()
        self.url = url.rstrip("/") if url else None
        self.rpc_path = "/" + rpc_path.strip("/")
        self.rest_path = ("/" + rest_path.strip("/")).rstrip("/") if rest_path is not None else None
        self.compat_v03 = compat_v03
        self.push: PushDispatcher | None = None
        if card.capabilities.push_notifications:
            from ._push import DEFAULT_MAX_CONFIGS, DEFAULT_MAX_CONFIGS_PER_TASK, PushDispatcher

            self.push = PushDispatcher(
                self.store,
                client=push_client,
                max_attempts=push_retries,
                backoff=push_backoff,
                timeout=push_timeout,
                allow_private_webhooks=allow_private_webhooks,
                max_configs_per_task=max_push_configs_per_task or DEFAULT_MAX_CONFIGS_PER_TASK,
                max_configs=max_push_configs or DEFAULT_MAX_CONFIGS,
            )
        self.runtime = TaskRuntime(
            executor, self.store, push=self.push, subscriber_buffer=subscriber_buffer
        )
        self.service = A2AService(
            card,
            self.runtime,
            self.store,
            push=self.push,
            extended_card=extended_card,
            owner_of=owner_of,
        )
        self.registry = build_registry(self.service, compat_v03=compat_v03)
        self.auth = auth
        self.grpc_port = grpc_port
        self.grpc_host = grpc_host
        self.grpc_target: str | None = None
        """``host:port`` of the gRPC binding while it is served (inside `running`)."""
        self.max_concurrency = max_concurrency
        self._card_cache: dict[str, AgentCard] = {}
        self.http = self._http_app(auth, origin_policy, card_max_age, max_body_size)

    def _http_app(
        self,
        auth: BearerAuth | None,
        origin_policy: OriginPolicy | None,
        card_max_age: int,
        max_body_size: int | None,
    ) -> JsonRpcHTTPApp:
        """The ASGI app of the JSON-RPC endpoint, the card and the HTTP+JSON routes."""
        card = self.card
        compat_v03 = self.compat_v03
        rest: list[Route] = []
        if self.rest_path is not None:
            from ._rest import rest_routes

            rest = rest_routes(self.service, card, self.rest_path, auth=auth)
        options = HTTPServerOptions(
            path=self.rpc_path,
            sessions=None,
            standalone_stream=False,
            require_accept=False,
            allow_batch=False,
            event_name=None,
            auth=auth,
            origin_policy=origin_policy if origin_policy is not None else OriginPolicy.loopback(),
            validate=validate_hook(card),
            response_mode=_response_mode,
            response_headers=response_headers,
            streaming_methods=STREAMED_METHOD_NAMES,
            routes=[
                *card_routes(self.card_for_request, compat_v03=compat_v03, max_age=card_max_age),
                *rest,
            ],
        )
        if max_body_size is not None:
            options.max_body_size = max_body_size
        return JsonRpcHTTPApp(self.serve, options)

    # -- the card --------------------------------------------------------------------

    def card_for(self, base_url: str) -> AgentCard:
        """The public card as served at ``base_url`` (interfaces filled in)."""
        card = self._card_cache.get(base_url)
        if card is None:
            card = self.card
            if not card.supported_interfaces:
                card = card.model_copy(update={"supported_interfaces": self.interfaces(base_url)})
            if len(self._card_cache) > 64:
                self._card_cache.clear()
            self._card_cache[base_url] = card
        return card

    def card_for_request(self, request: HTTPRequest) -> AgentCard:
        """The card for the base URL a request was made to (``url`` wins when set)."""
        return self.card_for(self.url or _base_url(request.info))

    def interfaces(self, base_url: str) -> list[AgentInterface]:
        """The interfaces this server offers at ``base_url``, preferred first."""
        base = base_url.rstrip("/")
        rpc = base + ("" if self.rpc_path == "/" else self.rpc_path)
        offered = [(rpc, ProtocolBinding.JSONRPC, "1.0")]
        if self.rest_path is not None:
            offered.append((base + self.rest_path, ProtocolBinding.HTTP_JSON, "1.0"))
        if self.grpc_target is not None:
            offered.append((self.grpc_target, ProtocolBinding.GRPC, "1.0"))
        if self.compat_v03:
            offered.append((rpc, ProtocolBinding.JSONRPC, "0.3"))
            if self.grpc_target is not None:
                offered.append((self.grpc_target, ProtocolBinding.GRPC, "0.3"))
        return [
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
            for url, binding, version in offered
        ]

    # -- serving ---------------------------------------------------------------------

    async def serve(self, stream: MessageStream) -> None:
        """Serve JSON-RPC on any `MessageStream` until it ends (inside `running`)."""
        peer = Peer(
            stream,
            self.registry,
            name="a2a-server",
            errors=A2A_ERRORS,
            max_concurrency=self.max_concurrency,
            telemetry=A2A_SERVER_TELEMETRY,
        )
        await peer.run()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[A2AServer]:
        """Run the agent runtime, push delivery and the HTTP app's background work."""
        if self.grpc_port is not None:
            from ._grpc import require_asyncio

            require_asyncio()
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self.store.aclose)
            task_group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(task_group.cancel_scope.cancel)
            started = anyio.Event()
            task_group.start_soon(self.runtime.run_until_cancelled, started)
            await started.wait()
            if self.push is not None:
                push_started = anyio.Event()
                task_group.start_soon(self.push.run_until_cancelled, push_started)
                await push_started.wait()
            await stack.enter_async_context(self.http.running())
            if self.grpc_port is not None:
                await self._start_grpc(stack)
            yield self

    async def _start_grpc(self, stack: AsyncExitStack) -> None:
        """Serve the gRPC binding on ``grpc_host:grpc_port`` until `running` ends."""
        from ._grpc import GrpcServer, grpc_handler

        handlers = [grpc_handler(self.service, self.card, auth=self.auth)]
        if self.compat_v03:
            from ._grpc._proto import V03

            handlers.append(grpc_handler(self.service, self.card, auth=self.auth, package=V03))
        server = GrpcServer(handlers, host=self.grpc_host, port=self.grpc_port or 0)
        await server.start()
        self.grpc_target = server.target
        self._card_cache.clear()

        async def stop() -> None:
            self.grpc_target = None
            self._card_cache.clear()
            await server.stop()

        stack.push_async_callback(stop)

    def asgi_app(self) -> Callable[[ASGIScope, ASGIReceive, ASGISend], Awaitable[None]]:
        """This server as an ASGI application (its lifespan runs `running`)."""
        return _App(self)

    def run(self, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
        """Serve over HTTP until interrupted (127.0.0.1 unless told otherwise)."""
        from jsonrpc_core import serve

        serve(self.asgi_app(), host=host, port=port, log_level=log_level)


class _App:
    """The ASGI face of an `A2AServer`: lifespan runs the server, HTTP goes to the app."""

    def __init__(self, server: A2AServer) -> None:
        self.server = server

    async def __call__(self, scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] != "lifespan":
            await self.server.http(scope, receive, send)
            return
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            async with self.server.running():
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:
            await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


def _response_mode(request: Request, info: HTTPRequestInfo) -> Literal["json", "auto"]:
    # A streaming method that fails before its first event (unknown or terminal task,
    # invalid params) is answered with a plain JSON-RPC error, not an SSE stream of one
    # error event: "auto" holds the response until the first event or the error comes
    # (at most the app's ``sse_defer_timeout``, 10 s, then the stream starts anyway).
    return "auto" if request.method in STREAMED_METHOD_NAMES else "json"


def _base_url(info: HTTPRequestInfo) -> str:
    host = info.headers.get("host", "127.0.0.1")
    scheme = info.headers.get("x-forwarded-proto", "http").split(",")[0].strip() or "http"
    return f"{scheme}://{host}"
