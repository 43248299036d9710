"""The exception tree of rpcweave, drawn once::

    RpcError                      anything this package raises on purpose
    ├── JsonRpcError              an error object that travels on the wire (has a code)
    │   ├── ParseError            -32700  the bytes were not JSON
    │   ├── InvalidRequest        -32600  JSON, but not a JSON-RPC request
    │   ├── MethodNotFound        -32601
    │   ├── InvalidParams         -32602
    │   ├── InternalError         -32603
    │   ├── RequestCancelled      -32800  (LSP/ACP convention)
    │   └── ServerError           -32000 .. -32099 and any other code a protocol defines
    └── LocalError                never sent on the wire
        ├── ConnectionClosed      the transport ended; pending calls fail with this
        ├── RequestTimeout        no response within the deadline
        ├── ResultValidationError the result did not fit the method's result type
        └── TransportError        a transport failed (HTTP status, broken pipe, ...)

Protocol layers define their own codes by subclassing `JsonRpcError` with a `code`
class attribute and registering the class in the layer's `ErrorTable`; a peer given
that table turns received error objects back into those classes.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

__all__ = [
    "STANDARD_ERRORS",
    "ConnectionClosed",
    "ErrorTable",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JsonRpcError",
    "LocalError",
    "MethodNotFound",
    "ParseError",
    "RequestCancelled",
    "RequestTimeout",
    "ResultValidationError",
    "RpcError",
    "ServerError",
    "TransportError",
    "error_class_for_code",
    "error_from_object",
    "register_error",
]

_MISSING: Any = object()

MAX_MESSAGE_LENGTH = 4096
"""The longest error message sent on the wire (longer ones are clipped)."""


class RpcError(Exception):
    """Base class of every exception rpcweave raises on purpose."""


class JsonRpcError(RpcError):
    """A JSON-RPC error object: ``code``, ``message`` and optional ``data``.

    Raise it (or a subclass) from a handler and the caller receives exactly this
    error; any other exception becomes `InternalError` without its details.
    """

    code: ClassVar[int] = -32000
    default_message: ClassVar[str] = "Server error"
    received: bool = False
    """``True`` when the other side sent this error (a call of ours failed there)."""

    def __init__(
        self, message: str | None = None, data: Any = _MISSING, *, code: int | None = None
    ):
        self.message = message if message is not None else self.default_message
        self.data = data
        if code is not None:
            self.code = code  # type: ignore[misc]  # instance override of the class default
        super().__init__(self.message)

    @property
    def has_data(self) -> bool:
        """Whether this error carries a ``data`` member."""
        return self.data is not _MISSING

    def to_object(self) -> dict[str, Any]:
        """The wire form: ``{"code", "message"[, "data"]}``.

        The message is clipped to `MAX_MESSAGE_LENGTH` characters: messages often quote
        what the peer sent (a method name, a value), and an error must not echo a
        megabyte back (JSON-RPC: "a concise single sentence"; details go in ``data``).
        """
        message = self.message
        if len(message) > MAX_MESSAGE_LENGTH:
            message = message[: MAX_MESSAGE_LENGTH - 3] + "..."
        obj: dict[str, Any] = {"code": self.code, "message": message}
        if self.data is not _MISSING:
            obj["data"] = self.data
        return obj

    def __repr__(self) -> str:
        extra = f", data={self.data!r}" if self.has_data else ""
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, JsonRpcError)
            and self.code == other.code
            and self.message == other.message
            and self.data == other.data
        )

    __hash__ = Exception.__hash__


_E = TypeVar("_E", bound=type[JsonRpcError])


class ErrorTable:
    """Maps error codes to exception classes for one protocol.

    Codes mean different things in different protocols (-32002 is an unknown resource
    in MCP, a task that cannot be cancelled in A2A), so each layer keeps its own table
    whose parent is `STANDARD_ERRORS`, and hands it to its peers.
    """

    def __init__(self, name: str, parent: ErrorTable | None = None) -> None:
        self.name = name
        self.parent = parent
        self._by_code: dict[int, type[JsonRpcError]] = {}

    def register(self, cls: _E) -> _E:
        """Class decorator: map ``cls.code`` to ``cls`` in this table."""
        self._by_code[cls.code] = cls
        return cls

    def class_for(self, code: int) -> type[JsonRpcError]:
        """The class for ``code`` here or in a parent; `ServerError` when none has it."""
        table: ErrorTable | None = self
        while table is not None:
            cls = table._by_code.get(code)
            if cls is not None:
                return cls
            table = table.parent
        return ServerError

    def from_object(self, obj: Any) -> JsonRpcError:
        """Build the right exception from a received error object.

        A malformed error object (not a dict, or without an integer code) still yields
        an error rather than a crash: the peer broke the protocol, and the caller must
        learn it.
        """
        if not isinstance(obj, dict):
            return InternalError("Malformed error object from peer", data=obj)
        code = obj.get("code")
        message = obj.get("message")
        if not isinstance(code, int) or isinstance(code, bool):
            return InternalError("Malformed error object from peer", data=obj)
        if not isinstance(message, str):
            message = str(message)
        return self._build(code, message, obj["data"] if "data" in obj else _MISSING)

    def refine(self, error: JsonRpcError) -> JsonRpcError:
        """``error`` as this table's class for its code (the same object if it already is)."""
        cls = self.class_for(error.code)
        if type(error) is cls:
            return error
        return self._build(error.code, error.message, error.data)

    def _build(self, code: int, message: str, data: Any) -> JsonRpcError:
        err = self.class_for(code)(message, data)
        if err.code != code:
            err.code = code  # type: ignore[misc]
        return err


STANDARD_ERRORS = ErrorTable("json-rpc")
"""The JSON-RPC 2.0 codes (and the LSP/ACP -32800), shared by every protocol."""


def register_error(cls: _E) -> _E:
    """Class decorator: add ``cls`` to `STANDARD_ERRORS` (protocol layers use their own)."""
    return STANDARD_ERRORS.register(cls)


def error_class_for_code(code: int) -> type[JsonRpcError]:
    """The standard table's class for ``code``; `ServerError` for unknown codes."""
    return STANDARD_ERRORS.class_for(code)


def error_from_object(obj: Any) -> JsonRpcError:
    """Build a `JsonRpcError` from a received error object with the standard table."""
    return STANDARD_ERRORS.from_object(obj)


@register_error
class ParseError(JsonRpcError):
    """-32700: invalid JSON was received."""

    code = -32700
    default_message = "Parse error"


@register_error
class InvalidRequest(JsonRpcError):
    """-32600: the JSON sent is not a valid Request object."""

    code = -32600
    default_message = "Invalid Request"


@register_error
class MethodNotFound(JsonRpcError):
    """-32601: the method does not exist or is not available."""

    code = -32601
    default_message = "Method not found"


@register_error
class InvalidParams(JsonRpcError):
    """-32602: invalid method parameters."""

    code = -32602
    default_message = "Invalid params"


@register_error
class InternalError(JsonRpcError):
    """-32603: internal JSON-RPC error (a handler failed)."""

    code = -32603
    default_message = "Internal error"


@register_error
class RequestCancelled(JsonRpcError):
    """-32800: the request was cancelled (LSP and ACP convention)."""

    code = -32800
    default_message = "Request cancelled"


@register_error
class ServerError(JsonRpcError):
    """Any implementation-defined error; the fallback for unregistered codes."""

    code = -32000
    default_message = "Server error"


class LocalError(RpcError):
    """An error that happens on this side and is never sent to the peer."""


class ConnectionClosed(LocalError):
    """The connection ended before a response arrived."""

    def __init__(self, message: str = "Connection closed") -> None:
        super().__init__(message)


class RequestTimeout(LocalError, TimeoutError):
    """No response arrived before the request's deadline."""


class TransportError(LocalError):
    """A transport failed: a broken pipe, an HTTP error status, a dead process."""


class ResultValidationError(LocalError):
    """The peer answered with a result that does not fit the method's declared type."""
