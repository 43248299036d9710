"""Which era a request belongs to, and what it says about its client.

One server serves both eras on the same connection or endpoint:

- **handshake era** (2025-11-25 and earlier): ``initialize`` fixes the version, the
  client's capabilities and identity for the connection (or HTTP session);
- **2026-07-28** ("modern"): every request carries them in ``_meta``.

Rules:

1. A request is modern when its ``_meta`` holds any ``io.modelcontextprotocol/``
   envelope key, when its method exists only in the modern era (``server/discover``,
   ``subscriptions/listen``, ``tasks/update``), or, over HTTP, when its
   ``MCP-Protocol-Version`` header names a modern version. Anything else is served by
   the handshake rules of its connection.
2. A modern request must carry ``protocolVersion`` and ``clientCapabilities`` (else
   -32602) and name a modern version this server speaks (else -32022, listing them).
   Methods the modern era removed (``initialize``, ``ping``, ``logging/setLevel``,
   ``resources/(un)subscribe``) are unknown to it (-32601).
3. Nothing about a modern request is remembered: `RequestScope` is built per request.
   (What is cached is pure: each distinct ``clientCapabilities`` or ``clientInfo``
   value is validated once, see `ValidatedOnce`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic
import pydantic_core

from jsonrpc_core import InvalidParams, MethodNotFound, RequestContext

from ._errors import UnsupportedProtocolVersion
from .types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    LOGGING_LEVELS,
    MODERN_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
)

__all__ = [
    "ENVELOPE_KEYS",
    "MODERN_METHODS",
    "MODERN_ONLY_METHODS",
    "RequestScope",
    "ValidatedOnce",
    "check_modern_request",
    "envelope_of",
    "is_modern",
    "original_request_id",
]

ENVELOPE_KEYS = (
    PROTOCOL_VERSION_META_KEY,
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
)

_ENVELOPE_KEY_SET = frozenset(ENVELOPE_KEYS)

MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen", "tasks/update"})

MODERN_METHODS = frozenset(
    {
        "server/discover",
        "subscriptions/listen",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
    }
)
"""Requests a 2026-07-28 server answers (the tasks methods only with the extension)."""


def envelope_of(params: Any) -> dict[str, Any] | None:
    """The ``_meta`` of ``params`` if it carries any envelope key, else ``None``."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and not _ENVELOPE_KEY_SET.isdisjoint(meta):
        return meta
    return None


def _header_version(info: Any) -> str | None:
    header = getattr(info, "header", None)
    return header("mcp-protocol-version") if header is not None else None


def is_modern(method: str, params: Any, info: Any = None) -> bool:
    """Whether a request is served by the 2026-07-28 rules (see module rule 1)."""
    if method in MODERN_ONLY_METHODS or envelope_of(params) is not None:
        return True
    version = _header_version(info)
    return version is not None and version.strip() in MODERN_PROTOCOL_VERSIONS


def check_modern_request(method: str, params: Any, *, tasks: bool) -> None:
    """Refuse a modern request that is malformed or unknown (module rule 2)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParams(
            "Invalid params: params._meta must carry "
            f"{PROTOCOL_VERSION_META_KEY!r} and {CLIENT_CAPABILITIES_META_KEY!r}"
        )
    required = (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY)
    missing = [key for key in required if key not in meta]
    if missing:
        raise InvalidParams(f"Invalid params: params._meta is missing {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_META_KEY]
    if not isinstance(version, str):
        raise InvalidParams(f"Invalid params: {PROTOCOL_VERSION_META_KEY} must be a string")
    if version not in MODERN_PROTOCOL_VERSIONS:
        raise UnsupportedProtocolVersion.for_version(version, MODERN_PROTOCOL_VERSIONS)
    if not isinstance(meta[CLIENT_CAPABILITIES_META_KEY], dict):
        raise InvalidParams(f"Invalid params: {CLIENT_CAPABILITIES_META_KEY} must be an object")
    if method not in MODERN_METHODS or (method.startswith("tasks/") and not tasks):
        raise MethodNotFound(f"Method not found: {method}")


def original_request_id(ctx: RequestContext) -> Any:
    """The id the client gave the request (an HTTP server may have remapped it)."""
    info_id = getattr(ctx.info, "request_id", None)
    return info_id if info_id is not None else ctx.request_id


M = TypeVar("M", bound=pydantic.BaseModel)


class ValidatedOnce(Generic[M]):
    """The model of each distinct JSON value, validated the first time it is seen.

    A 2026-era client sends the same ``clientCapabilities`` and ``clientInfo`` on every
    request: validating them once per distinct value, instead of once per request,
    is what makes a modern request cost about what a handshake-era one does. The key
    is the value's compact JSON, so two values share a model only when they are the
    same JSON (``1`` and ``true`` differ). The model is shared by every request that
    sent that value, as a handshake-era session shares what ``initialize`` said: read
    it, do not change it. At most ``size`` values are kept (then the table starts
    again); a value that fails validation is never kept.
    """

    __slots__ = ("_models", "model", "size")

    def __init__(self, model: type[M], size: int = 256) -> None:
        self.model = model
        self.size = size
        self._models: dict[bytes, M] = {}

    def validate(self, raw: Any) -> M:
        """``model.model_validate(raw)``, or the model already made from the same JSON."""
        try:
            key = pydantic_core.to_json(raw)
        except (pydantic_core.PydanticSerializationError, ValueError):
            return self.model.model_validate(raw)  # not JSON (an in-process caller)
        found = self._models.get(key)
        if found is None:
            found = self.model.model_validate(raw)
            if len(self._models) >= self.size:
                self._models.clear()
            self._models[key] = found
        return found


_CAPABILITIES = ValidatedOnce(ClientCapabilities)
_CLIENT_INFO = ValidatedOnce(Implementation)


class _ClientsSeen:
    """``(clientCapabilities, clientInfo)`` models by the compact JSON of the raw pair.

    A 2026-era client sends the same pair on every request: one encoding and one
    lookup per request find both models (`ValidatedOnce` makes them on a miss). At most
    ``size`` pairs are kept (then the table starts again); a pair whose capabilities
    fail validation is never kept.
    """

    __slots__ = ("_pairs", "size")

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._pairs: dict[bytes, tuple[ClientCapabilities, Implementation | None]] = {}

    def models(self, raw: Any, raw_info: Any) -> tuple[ClientCapabilities, Implementation | None]:
        """The capabilities (-32602 if invalid) and client info (``None`` if absent or
        invalid) of one request."""
        try:
            key = pydantic_core.to_json((raw, raw_info))
        except (pydantic_core.PydanticSerializationError, ValueError):
            return _validate_pair(raw, raw_info)  # not JSON (an in-process caller)
        found = self._pairs.get(key)
        if found is None:
            found = _validate_pair(raw, raw_info)
            if len(self._pairs) >= self.size:
                self._pairs.clear()
            self._pairs[key] = found
        return found


def _validate_pair(raw: Any, raw_info: Any) -> tuple[ClientCapabilities, Implementation | None]:
    try:
        capabilities = _CAPABILITIES.validate(raw)
    except pydantic.ValidationError:
        raise InvalidParams(
            f"Invalid params: {CLIENT_CAPABILITIES_META_KEY} is not a ClientCapabilities"
        ) from None
    info: Implementation | None = None
    if raw_info is not None:
        try:
            info = _CLIENT_INFO.validate(raw_info)
        except pydantic.ValidationError:
            info = None  # self-reported and for display only: never a reason to refuse
    return capabilities, info


_CLIENTS = _ClientsSeen()


@dataclass(slots=True)
class RequestScope:
    """What one request tells about its era and its client.

    For a handshake-era request these come from ``initialize`` (the session); for a
    modern one from the request's own ``_meta``.
    """

    modern: bool
    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None
    log_level: LoggingLevel | None = None
    raw_capabilities: dict[str, Any] | None = None

    @classmethod
    def from_envelope(cls, params: Any) -> RequestScope:
        """The scope of a modern request that passed `check_modern_request`."""
        meta: dict[str, Any] = params["_meta"]
        raw = meta[CLIENT_CAPABILITIES_META_KEY]
        capabilities, info = _CLIENTS.models(raw, meta.get(CLIENT_INFO_META_KEY))
        level = meta.get(LOG_LEVEL_META_KEY)
        return cls(
            modern=True,
            protocol_version=meta[PROTOCOL_VERSION_META_KEY],
            client_capabilities=capabilities,
            client_info=info,
            log_level=level if level in LOGGING_LEVELS else None,
            raw_capabilities=raw,
        )

    def has_extension(self, name: str) -> bool:
        """Whether the client declared extension ``name`` on this request."""
        extensions = self.client_capabilities.extensions
        return extensions is not None and name in extensions
