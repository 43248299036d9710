"""The base model, identifier and integer aliases, and ``_meta`` helpers shared by every module.

Wire conventions (docs/extensibility.mdx, schema.json):

- attributes are snake_case in Python and camelCase on the wire (``session_id`` <->
  ``sessionId``); ``_meta`` is the field `ACPModel.meta`;
- ``_meta`` is an open object on every type. Its root keys ``traceparent``, ``tracestate`` and
  ``baggage`` are reserved for W3C trace context (`trace_context`, `with_trace_context`);
- models serialise by alias; rpcweave writes them with
  ``pydantic_core.to_json(obj, by_alias=True, exclude_none=True)``.
"""

from collections.abc import Mapping
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ._lenient import DefaultOnError

__all__ = [
    "BAGGAGE",
    "PROTOCOL_VERSION",
    "TRACEPARENT",
    "TRACESTATE",
    "TRACE_CONTEXT_KEYS",
    "ACPModel",
    "AuthMethodId",
    "ElicitationId",
    "EmptyResult",
    "Int64",
    "MessageId",
    "Meta",
    "PermissionOptionId",
    "ProtocolVersion",
    "RequestId",
    "SessionConfigGroupId",
    "SessionConfigId",
    "SessionConfigValueId",
    "SessionId",
    "SessionModeId",
    "TerminalId",
    "ToolCallId",
    "UInt32",
    "UInt64",
    "trace_context",
    "with_trace_context",
]

PROTOCOL_VERSION: Final = 1
"""The ACP protocol version this package speaks (sent in ``initialize``)."""

# Identifiers are plain strings on the wire; the aliases document which one a field holds.
SessionId = str
ToolCallId = str
TerminalId = str
SessionModeId = str
SessionConfigId = str
SessionConfigValueId = str
SessionConfigGroupId = str
PermissionOptionId = str
AuthMethodId = str
MessageId = str
ElicitationId = str
RequestId = int | str | None
"""A JSON-RPC request id: number, string or (discouraged) null."""

ProtocolVersion = Annotated[int, Field(ge=0, le=0xFFFF)]
UInt32 = Annotated[int, Field(ge=0, le=0xFFFF_FFFF)]
UInt64 = Annotated[int, Field(ge=0, le=0xFFFF_FFFF_FFFF_FFFF)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]

Meta = dict[str, Any]
"""The ``_meta`` object: free-form, never interpreted by the protocol."""

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
BAGGAGE: Final = "baggage"
TRACE_CONTEXT_KEYS: Final = (TRACEPARENT, TRACESTATE, BAGGAGE)
"""Root ``_meta`` keys reserved for W3C trace context (docs/extensibility.mdx)."""

_SERIALIZE_BY_ALIAS = (
    ConfigDict(serialize_by_alias=True)
    if "serialize_by_alias" in ConfigDict.__annotations__  # pydantic >= 2.11
    else ConfigDict()
)


class ACPModel(BaseModel):
    """Base of every ACP object: snake_case attributes, camelCase wire names, unknown fields kept.

    ``meta`` is the ``_meta`` object every ACP type carries; an invalid ``_meta`` from a
    peer is dropped (``x-deserialize-default-on-error``).
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        defer_build=True,
        **_SERIALIZE_BY_ALIAS,
    )

    meta: Annotated[Meta | None, DefaultOnError] = Field(default=None, alias="_meta")


class EmptyResult(ACPModel):
    """A result with no required field; a ``null`` result is read as ``{}``.

    The docs show ``"result": null`` for such methods (e.g. ``fs/write_text_file``).
    """

    @model_validator(mode="before")
    @classmethod
    def _null_is_empty(cls, data: Any) -> Any:
        return {} if data is None else data


def trace_context(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The W3C trace-context entries of a ``_meta`` object (string values only).

    The result is a carrier an OpenTelemetry propagator can ``extract`` from.
    """
    if not meta:
        return {}
    return {k: v for k in TRACE_CONTEXT_KEYS if isinstance(v := meta.get(k), str)}


def with_trace_context(meta: Mapping[str, Any] | None, carrier: Mapping[str, str]) -> Meta:
    """A copy of ``meta`` with the trace-context keys of ``carrier`` set at its root.

    ``carrier`` is what an OpenTelemetry propagator's ``inject`` filled; keys other than
    ``traceparent``, ``tracestate`` and ``baggage`` are ignored, as ACP reserves only these.
    """
    out: Meta = dict(meta or {})
    for key in TRACE_CONTEXT_KEYS:
        value = carrier.get(key)
        if value is not None:
            out[key] = value
    return out
