"""JSON-RPC 2.0 messages: parse from bytes once, serialise once.

Rules this module keeps:

1. `parse` never raises for bad input. Every problem becomes an `InvalidMessage`
   carrying the error to answer with and, when it could be recovered, the request id.
2. A received message is a plain slotted dataclass; ``params`` and ``result`` stay as
   decoded JSON until a method descriptor validates them (one validation pass).
3. `encode` writes compact UTF-8 JSON in one call; pydantic models anywhere inside
   ``params``/``result`` are dumped by alias with ``None`` fields left out, while plain
   ``None`` values in dicts (``"result": null``) are kept. Non-finite floats, which
   JSON cannot carry, are written as ``null`` (as JavaScript's ``JSON.stringify`` does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pydantic_core

from ._errors import InvalidRequest, JsonRpcError, ParseError, error_from_object

__all__ = [
    "Batch",
    "ErrorResponse",
    "Incoming",
    "InvalidMessage",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "StreamEnd",
    "encode",
    "encode_batch",
    "parse",
    "parse_object",
    "recover_id",
]

RequestId: TypeAlias = "str | int"
Params: TypeAlias = "dict[str, Any] | list[Any] | None"


@dataclass(slots=True)
class Request:
    """A call that expects a response. ``id`` may be ``None`` (allowed, though discouraged)."""

    id: RequestId | None
    method: str
    params: Any = None


@dataclass(slots=True)
class Notification:
    """A call without an id; it never gets a response."""

    method: str
    params: Any = None


@dataclass(slots=True)
class Response:
    """A successful response."""

    id: RequestId | None
    result: Any = None


@dataclass(slots=True)
class ErrorResponse:
    """An error response; ``id`` is ``None`` when the request's id could not be read."""

    id: RequestId | None
    error: JsonRpcError = field(default_factory=JsonRpcError)


@dataclass(slots=True)
class InvalidMessage:
    """Something received that is not a valid message; answer it with ``error``."""

    id: RequestId | None
    error: JsonRpcError
    respond: bool = True


@dataclass(slots=True)
class StreamEnd:
    """Not a wire message: a transport's word that request ``id`` will get nothing more.

    An HTTP client yields it when the response stream of a request closed (the end of
    streamed results), or, with ``error``, when that request's stream failed and could
    not be resumed; the peer then fails just that call. Never encoded.
    """

    id: RequestId
    error: BaseException | None = None


Message: TypeAlias = "Request | Notification | Response | ErrorResponse"
Batch: TypeAlias = "list[Message | InvalidMessage]"
Incoming: TypeAlias = "Message | InvalidMessage | Batch | StreamEnd"

_ID_PATTERN = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,256}"|-?\d{1,20})')


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def recover_id(data: bytes) -> RequestId | None:
    """Best-effort id of a message too large or too broken to parse in full.

    Used to address the error response for an oversized message; ``None`` if no
    top-level-looking ``"id"`` member can be found in the first bytes.
    """
    match = _ID_PATTERN.search(data[:65536])
    if match is None:
        return None
    try:
        value = pydantic_core.from_json(match.group(1))
    except ValueError:
        return None
    return value if _valid_id(value) else None


_ABSENT: Any = object()


def parse_object(obj: Any) -> Message | InvalidMessage:
    """Classify one decoded JSON value as a message (never raises)."""
    if type(obj) is dict and obj.get("jsonrpc") == "2.0":
        # The well-formed common cases first; anything else takes the full checks below.
        method = obj.get("method", _ABSENT)
        msg_id = obj.get("id", _ABSENT)
        id_type = type(msg_id)
        if type(method) is str:
            params = obj.get("params")
            if params is None or type(params) is dict or type(params) is list:
                if msg_id is _ABSENT:
                    return Notification(method, params)
                if id_type is str or id_type is int or msg_id is None:
                    return Request(msg_id, method, params)
        elif method is _ABSENT and (id_type is str or id_type is int or msg_id is None):
            result = obj.get("result", _ABSENT)
            if result is not _ABSENT and "error" not in obj:
                return Response(msg_id, result)
    return _parse_object(obj)


def _parse_object(obj: Any) -> Message | InvalidMessage:
    if not isinstance(obj, dict):
        return InvalidMessage(None, InvalidRequest("Invalid Request: expected a JSON object"))
    msg_id = obj.get("id")
    id_ok = _valid_id(msg_id)
    reply_id = msg_id if id_ok else None
    if obj.get("jsonrpc") != "2.0":
        return InvalidMessage(reply_id, InvalidRequest('Invalid Request: "jsonrpc" must be "2.0"'))
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return InvalidMessage(
                reply_id, InvalidRequest('Invalid Request: "method" must be a string')
            )
        params = obj.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return InvalidMessage(
                reply_id, InvalidRequest('Invalid Request: "params" must be an object or an array')
            )
        if "id" not in obj:
            return Notification(method, params)
        if not id_ok:
            return InvalidMessage(
                None, InvalidRequest('Invalid Request: "id" must be a string, an integer or null')
            )
        return Request(msg_id, method, params)
    has_result = "result" in obj
    has_error = "error" in obj
    if has_result == has_error or "id" not in obj or not id_ok:
        # A broken response is reported but never answered: answering responses could
        # make two peers trade error messages forever.
        return InvalidMessage(
            reply_id,
            InvalidRequest("Invalid Request: not a request, notification or response"),
            respond=not (has_result or has_error),
        )
    if has_error:
        return ErrorResponse(msg_id, error_from_object(obj["error"]))
    return Response(msg_id, obj["result"])


def parse(data: bytes | bytearray | str) -> Incoming:
    """Parse one JSON-RPC payload (a message or a batch) from bytes (never raises)."""
    try:
        obj = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        return InvalidMessage(None, ParseError(f"Parse error: {exc}"))
    if isinstance(obj, list):
        if not obj:
            return InvalidMessage(None, InvalidRequest("Invalid Request: empty batch"))
        return [parse_object(item) for item in obj]
    return parse_object(obj)


def _as_object(msg: Message) -> dict[str, Any]:
    if isinstance(msg, Request):
        if msg.params is None:
            return {"jsonrpc": "2.0", "id": msg.id, "method": msg.method}
        return {"jsonrpc": "2.0", "id": msg.id, "method": msg.method, "params": msg.params}
    if isinstance(msg, Notification):
        if msg.params is None:
            return {"jsonrpc": "2.0", "method": msg.method}
        return {"jsonrpc": "2.0", "method": msg.method, "params": msg.params}
    if isinstance(msg, Response):
        return {"jsonrpc": "2.0", "id": msg.id, "result": msg.result}
    return {"jsonrpc": "2.0", "id": msg.id, "error": msg.error.to_object()}


def encode(msg: Message) -> bytes:
    """Serialise one message to compact UTF-8 JSON."""
    return pydantic_core.to_json(
        _as_object(msg), by_alias=True, exclude_none=True, inf_nan_mode="null"
    )


def encode_batch(msgs: list[Message]) -> bytes:
    """Serialise a batch (a JSON array of messages)."""
    return pydantic_core.to_json(
        [_as_object(m) for m in msgs], by_alias=True, exclude_none=True, inf_nan_mode="null"
    )
