"""The gRPC binding's server side (spec 10): one generic handler over the method records.

`grpc_handler` serves every rpc of ``lf.a2a.v1.A2AService`` from the same
`A2AService` the JSON-RPC and HTTP+JSON bindings call; `GrpcServer` runs a
``grpc.aio`` server with it (127.0.0.1 unless told otherwise). Rules, per call:

1. Service parameters come from the metadata (spec 10.2): ``a2a-version`` (the
   ``lf.a2a.v1`` package *is* 1.0, so a call without it is a 1.0 call there, and any
   other version than 1.0 is `VersionNotSupported`; the 0.3 package ``a2a.v1`` takes
   0.3 when it is missing and refuses only unsupported versions), ``a2a-extensions``
   (checked against the card as on HTTP; the activated ones are echoed in the initial
   metadata).
2. With ``auth``, ``authorization: Bearer <token>`` is checked by the same `BearerAuth`
   (and so the same `TokenVerifier`) as HTTP; a missing or bad token ends the call
   ``UNAUTHENTICATED``, a missing scope ``PERMISSION_DENIED``. The principal owns the
   tasks it creates, as on the other bindings; the token is not passed on.
3. The tenant is the request's ``tenant`` field, as on the other bindings.
4. Errors end the call with the status of spec 5.4 and ``google.rpc`` details
   (``_status``); a stream that fails after its first event ends the same way.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import grpc
from google.protobuf.message import Message as ProtoMessage

from jsonrpc_core import BearerAuth, HTTPError, InternalError, JsonRpcError, is_asyncio

from .._methods import GET_EXTENDED_AGENT_CARD
from .._rpc import EXTENSIONS_HEADER, VERSION_HEADER, ServiceParameters
from .._runtime import CallInfo
from .._service import A2AService
from .._telemetry import traced_grpc_operation
from ..types import AgentCard
from ._messages import GrpcMethod, ProtoPackage
from ._status import auth_status, status_of

__all__ = ["GrpcServer", "grpc_handler", "require_asyncio"]

logger = logging.getLogger(__name__)

Context = grpc.aio.ServicerContext[Any, Any]


def _headers(context: Context, version: str) -> dict[str, str]:
    headers = {
        key.lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str)
    }
    headers.setdefault(VERSION_HEADER.lower(), version)  # rule 1
    return headers


class _Dispatch:
    """The checks of rules 1-3 and the call into the service, for every rpc."""

    def __init__(
        self,
        service: A2AService,
        card: AgentCard,
        auth: BearerAuth | None,
        package: ProtoPackage,
    ) -> None:
        self.service = service
        self.card = card
        self.auth = auth
        self.package = package

    async def prepare(self, method: GrpcMethod, request: ProtoMessage, context: Context) -> Any:
        """The operation's result (a stream for streaming methods), or abort the call."""
        headers = _headers(context, self.package.version)
        principal = None
        if self.auth is not None:
            try:
                principal = await self.auth.authenticate(headers)
            except HTTPError as exc:
                await context.abort(auth_status(exc.status), exc.message)
            headers.pop("authorization", None)
        params = ServiceParameters.read(headers, {}, self.card)
        if self.package.version == "1.0" and params.version != "1.0":
            params.check_method(method.record.method)
        if params.activated_extensions:
            value = ",".join(sorted(params.activated_extensions))
            await context.send_initial_metadata(((EXTENSIONS_HEADER.lower(), value),))
        model = self.package.params_of(method, request)
        call = CallInfo(
            extensions=params.activated_extensions, principal=principal, headers=headers
        )
        if self._public_card_for_v03(method):
            return self.card
        record = method.record
        return await traced_grpc_operation(
            record.method,
            model,
            headers,
            lambda: record.operation(self.service, model, call),
            record.streaming,
        )

    def _public_card_for_v03(self, method: GrpcMethod) -> bool:
        # 0.3's GetAgentCard answers the public card when there is no extended one.
        return (
            self.package.version == "0.3"
            and method.record is GET_EXTENDED_AGENT_CARD
            and not self.card.capabilities.extended_agent_card
        )

    def unary(self, method: GrpcMethod) -> Callable[..., Any]:
        version = self.package.version

        async def handle(request: ProtoMessage, context: Context) -> ProtoMessage:
            try:
                result = await self.prepare(method, request, context)
                return self.package.answer(method, result)
            except Exception as exc:
                await _end_with(context, exc, version, f"gRPC {method.path}", "Internal error")
            raise AssertionError("unreachable: abort raises")  # pragma: no cover

        return handle

    def stream(self, method: GrpcMethod) -> Callable[..., Any]:
        version = self.package.version

        async def handle(request: ProtoMessage, context: Context) -> AsyncIterator[ProtoMessage]:
            try:
                events = await self.prepare(method, request, context)
                async for event in events:
                    yield self.package.answer(method, event)
            except Exception as exc:
                await _end_with(
                    context,
                    exc,
                    version,
                    f"gRPC stream {method.path}",
                    "Internal error while streaming",
                )

        return handle


async def _end_with(
    context: Context, exc: Exception, version: str, call: str, internal: str
) -> None:
    """End the call ``exc`` failed with (rule 4): an A2A error with its status, grpc's own
    abort as raised, anything else logged and answered as `InternalError` (``internal``).
    Called in the ``except`` block, so the log carries the traceback."""
    if isinstance(exc, JsonRpcError):
        await _abort(context, exc, version)
        return
    # context.abort raises grpc's own exception to end the call: let it through.
    if type(exc).__name__ == "AbortError" or isinstance(exc, grpc.RpcError):
        raise exc
    logger.exception("%s failed", call)
    await _abort(context, InternalError(internal), version)


async def _abort(context: Context, err: JsonRpcError, version: str) -> None:
    code, message, trailers = status_of(err, version)
    await context.abort(code, message, trailing_metadata=trailers)


def grpc_handler(
    service: A2AService,
    card: AgentCard,
    *,
    auth: BearerAuth | None = None,
    package: ProtoPackage | None = None,
) -> grpc.GenericRpcHandler:
    """A ``grpc`` generic handler serving every method of the package's service."""
    if package is None:
        from ._proto import V1

        package = V1
    dispatch = _Dispatch(service, card, auth, package)
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in package.methods.values():
        options: Mapping[str, Any] = {
            "request_deserializer": method.request.FromString,
            "response_serializer": _serialize,
        }
        if method.streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                dispatch.stream(method), **options
            )
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                dispatch.unary(method), **options
            )
    return grpc.method_handlers_generic_handler(package.service, handlers)


def require_asyncio() -> None:
    """Raise `RuntimeError` unless an asyncio loop runs (grpc.aio's only loop)."""
    if not is_asyncio():
        raise RuntimeError("the gRPC binding needs asyncio (grpc.aio does not run on trio)")


def _serialize(message: ProtoMessage) -> bytes:
    return message.SerializeToString()


class GrpcServer:
    """A ``grpc.aio`` server for one or more handlers (asyncio only: grpc.aio is).

    ``port`` 0 picks a free port; `port` holds the bound one after `start`.
    """

    def __init__(
        self, handlers: list[grpc.GenericRpcHandler], *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.handlers = handlers
        self.host = host
        self.port = port
        self._server: grpc.aio.Server | None = None

    @property
    def target(self) -> str:
        """``host:port``, the address a gRPC channel connects to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    async def start(self) -> None:
        """Bind and start serving."""
        require_asyncio()
        server = grpc.aio.server()
        server.add_generic_rpc_handlers(tuple(self.handlers))
        bound = server.add_insecure_port(f"{self.host}:{self.port}")
        if bound == 0:
            raise OSError(f"cannot listen for gRPC on {self.host}:{self.port}")
        self.port = bound
        await server.start()
        self._server = server

    async def stop(self, grace: float | None = 1.0) -> None:
        """Stop serving (calls still running get ``grace`` seconds)."""
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop(grace)
