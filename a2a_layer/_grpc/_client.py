"""The gRPC binding's client side: `GrpcClientTransport` for `A2AClient`.

Each call is one rpc on a ``grpc.aio`` channel to the interface's ``host:port`` (a
``grpc://``/``http://`` prefix is dropped; ``https://`` asks for TLS), with
``a2a-version: 1.0``, the client's extra headers and, for a `BearerToken`,
``authorization`` as metadata. ``timeout`` bounds a call's whole exchange and a
stream until its first event, as on the other transports. Errors come back as the
`A2A_ERRORS` classes (``_status``). asyncio only (grpc.aio is).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message as ProtoMessage

from jsonrpc_core import Deadline, JsonRpcError

from .._client_transport import TracedClientTransport
from .._methods import A2AMethod
from .._rpc import VERSION_HEADER
from ..types import A2AModel, StreamResponse
from ._messages import GrpcMethod, ProtoPackage
from ._status import error_from_status

__all__ = ["GrpcClientTransport", "grpc_target"]

P = TypeVar("P", bound=A2AModel)
R = TypeVar("R")


def grpc_target(url: str) -> tuple[str, bool]:
    """The channel target of an interface URL, and whether it asks for TLS."""
    for prefix, secure in (("grpcs://", True), ("https://", True), ("grpc://", False)):
        if url.startswith(prefix):
            return url[len(prefix) :].rstrip("/"), secure
    if url.startswith("http://"):
        return url[len("http://") :].rstrip("/"), False
    return url.rstrip("/"), False


class GrpcClientTransport(TracedClientTransport):
    """The gRPC binding (spec 10): A2A 1.0 (``lf.a2a.v1``) or, with
    ``protocol_version="0.3"``, the 0.3 service (``a2a.v1``); see module docstring."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        timeout: float | None = None,
        channel: grpc.aio.Channel | None = None,
        package: ProtoPackage | None = None,
        protocol_version: str = "1.0",
    ) -> None:
        if package is None:
            from ._proto import V03, V1

            package = V03 if protocol_version == "0.3" else V1
        self.package = package
        self.url = url
        self.timeout = timeout
        metadata = [(k.lower(), v) for k, v in (headers or {}).items()]
        metadata.append((VERSION_HEADER.lower(), package.version))
        if token is not None:
            metadata.append(("authorization", f"Bearer {token}"))
        self.metadata = tuple(metadata)
        self._channel = channel
        self._owns_channel = channel is None

    @property
    def channel(self) -> grpc.aio.Channel:
        """The channel, opened at first use (grpc.aio binds it to the running loop)."""
        if self._channel is None:
            target, secure = grpc_target(self.url)
            if secure:
                self._channel = grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
            else:
                self._channel = grpc.aio.insecure_channel(target)
        return self._channel

    async def aclose(self) -> None:
        if self._channel is not None and self._owns_channel:
            channel, self._channel = self._channel, None
            await channel.close()

    def _rpc(self, method: A2AMethod[Any, Any]) -> GrpcMethod:
        found = self.package.methods.get(method.method)
        if found is None:
            raise NotImplementedError(f"{self.package.service} has no rpc for {method.method}")
        return found

    def _metadata(self, headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
        """The call's metadata: the transport's, plus the trace context when traced."""
        if not headers:
            return self.metadata
        return self.metadata + tuple((key.lower(), value) for key, value in headers.items())

    async def _call(
        self, method: A2AMethod[P, R], params: P, headers: Mapping[str, str] | None = None
    ) -> R:
        rpc = self._rpc(method)
        stub = self.channel.unary_unary(
            rpc.path, request_serializer=_serialize, response_deserializer=rpc.response.FromString
        )
        try:
            with Deadline(self.timeout, self.url, method.method):
                answer = await stub(
                    self.package.request(rpc, params), metadata=self._metadata(headers)
                )
        except grpc.aio.AioRpcError as exc:
            raise _answered(exc, f"{rpc.name} on {self.url}") from None
        result: R = self.package.result_of(rpc, answer)
        return result

    async def _stream(
        self,
        method: A2AMethod[P, StreamResponse],
        params: P,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[StreamResponse, None]:
        rpc = self._rpc(method)
        stub = self.channel.unary_stream(
            rpc.path, request_serializer=_serialize, response_deserializer=rpc.response.FromString
        )
        call = stub(self.package.request(rpc, params), metadata=self._metadata(headers))
        deadline = Deadline(self.timeout, self.url, method.method)  # lifted at the first event
        try:
            while True:
                try:
                    with deadline:
                        event = await call.read()
                except grpc.aio.AioRpcError as exc:
                    raise _answered(exc, f"{rpc.name} on {self.url}") from None
                if event is grpc.aio.EOF or not isinstance(event, ProtoMessage):
                    return
                deadline.lift()
                yield self.package.result_of(rpc, event)
        finally:
            call.cancel()


def _answered(exc: grpc.aio.AioRpcError, where: str) -> Exception:
    """The error a failed call raises: an A2A error is the server's answer (``received``,
    as the HTTP bindings mark theirs), which telemetry records by its code."""
    error = error_from_status(exc, where)
    if isinstance(error, JsonRpcError):
        error.received = True
    return error


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data
