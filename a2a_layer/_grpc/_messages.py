"""Protobuf messages of the gRPC binding, and the conversion to and from the models.

The descriptors come from rpcweave's own ``a2a_v1.proto`` (serialized in
``_descriptor_v1``) and live in a private `DescriptorPool`, so another library's copy
of package ``lf.a2a.v1`` (a2a-sdk's) can be loaded in the same process. Rules:

1. A model crosses to protobuf through its ProtoJSON form (the models' JSON *is*
   ProtoJSON, spec 5.5): ``model_dump(by_alias)`` then ``ParseDict``; back through
   ``MessageToDict`` then the method record's validator (one validation, the same one
   the JSON bindings run, so a bad field gets the same -32602 message naming it).
2. Unknown JSON members (0.3 fields kept on our cards) are ignored on the way in.
3. Fields at their proto3 default are absent after ``MessageToDict``; the models give
   the same defaults, and the proto's REQUIRED fields have no meaningful default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pool, empty_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import Message as ProtoMessage
from google.protobuf.message_factory import GetMessageClass

from .._methods import A2A_METHODS, A2AMethod
from .._types._base import A2AModel

__all__ = ["GrpcMethod", "ProtoPackage", "from_proto", "to_proto"]


def _pool(serialized: bytes) -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for dependency in (empty_pb2, struct_pb2, timestamp_pb2):
        pool.AddSerializedFile(dependency.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(serialized)
    return pool


@dataclass(frozen=True)
class GrpcMethod:
    """One rpc of a service: its record, full path and request/response classes."""

    record: A2AMethod[Any, Any]
    path: str  # /package.Service/Rpc
    request: type[ProtoMessage]
    response: type[ProtoMessage]

    @property
    def name(self) -> str:
        """The rpc's name in its service."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def streaming(self) -> bool:
        """Server streaming (SendStreamingMessage, SubscribeToTask)."""
        return self.record.streaming


class ProtoPackage:
    """The messages and the service of one serialized proto file, by A2A method."""

    def __init__(self, serialized: bytes, service: str, *, version: str = "1.0") -> None:
        self.pool = _pool(serialized)
        descriptor = self.pool.FindServiceByName(service)
        self.service = service
        self.version = version
        methods: dict[str, GrpcMethod] = {}
        for record in A2A_METHODS:
            name = record.grpc if version == "1.0" else record.grpc_v03
            rpc = descriptor.methods_by_name.get(name or "")
            if rpc is None:
                continue  # a method this revision of the service lacks
            if rpc.server_streaming != record.streaming:  # pragma: no cover - proto edit
                raise ValueError(f"{service}.{record.grpc}: streaming differs from its record")
            methods[record.method] = GrpcMethod(
                record,
                f"/{service}/{rpc.name}",
                GetMessageClass(rpc.input_type),
                GetMessageClass(rpc.output_type),
            )
        self.methods = methods
        """The rpcs of the service by 1.0 method name (derived from `A2A_METHODS`)."""

    def message(self, full_name: str) -> type[ProtoMessage]:
        """The class of a message of this package (``lf.a2a.v1.Task``)."""
        return GetMessageClass(self.pool.FindMessageTypeByName(full_name))

    # The four crossings of a call; 0.3 goes through the ``_compat03`` shapes (``_v03``).

    def params_of(self, method: GrpcMethod, message: ProtoMessage) -> Any:
        """The validated 1.0 params model of a received request (`InvalidParams`)."""
        wire = from_proto(message)
        if self.version == "0.3":
            from ._v03 import params_in

            return params_in(method.record, wire)
        return method.record.validate_params(wire)

    def answer(self, method: GrpcMethod, result: Any) -> ProtoMessage:
        """The response message (one event of a stream) for a 1.0 result model."""
        if self.version == "0.3":
            from ._v03 import answer_out

            return _parsed(answer_out(method.record, result), method.response)
        return to_proto(result, method.response)

    def request(self, method: GrpcMethod, params: A2AModel) -> ProtoMessage:
        """The request message for a 1.0 params model."""
        if self.version == "0.3":
            from ._v03 import params_out

            return _parsed(params_out(method.record, params), method.request)
        return to_proto(params, method.request)

    def result_of(self, method: GrpcMethod, message: ProtoMessage) -> Any:
        """The validated 1.0 result model of a received response (one event)."""
        wire = from_proto(message)
        if self.version == "0.3":
            from ._v03 import result_in_v10

            return result_in_v10(method.record, wire)
        return method.record.validate_result(wire)


def _parsed(wire: dict[str, Any], cls: type[ProtoMessage]) -> ProtoMessage:
    message = cls()
    json_format.ParseDict(wire, message, ignore_unknown_fields=True)
    return message


def to_proto(model: A2AModel | None, cls: type[ProtoMessage]) -> ProtoMessage:
    """``model`` as a ``cls`` message (rules 1 and 2)."""
    message = cls()
    if model is not None:
        wire = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        json_format.ParseDict(wire, message, ignore_unknown_fields=True)
    return message


def from_proto(message: ProtoMessage) -> dict[str, Any]:
    """The ProtoJSON form of ``message``, for a record's validator (rule 1)."""
    wire: dict[str, Any] = json_format.MessageToDict(message)
    return wire
