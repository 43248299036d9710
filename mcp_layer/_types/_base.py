"""The base model of every MCP object, and the small shared types.

Rules every model in `mcp_layer.types` keeps:

1. Python names are snake_case, wire names camelCase (``alias_generator=to_camel``);
   both are accepted on input (so a peer's ``is_error`` is read as ``isError``), the
   alias is written on output. ``_meta`` is the attribute ``meta`` (explicit alias).
2. Lenient in: unknown members are kept (``extra="allow"``) and written back out
   unchanged, so a proxy never drops what a newer peer sent. (An unknown member whose
   value is ``null`` is the one exception: the wire encoder leaves out ``None``.)
3. Strict out: optional members default to ``None`` and rpcweave encodes with
   ``exclude_none=True``, so ``None`` never reaches the wire. A member the schema
   requires but allows to be ``null`` (``Task.ttl``) or to be any JSON value
   (``LoggingMessageNotificationParams.data``) is written back by a model serializer.
4. Strings stay strings: URIs, timestamps and base64 data are ``str`` so that a
   value round-trips byte for byte (no URL normalisation, no datetime reformatting).
5. Unions that a newer peer may extend (content blocks) fall back to an "unknown"
   model instead of rejecting the whole message; closed unions reject.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "CacheScope",
    "CacheableResult",
    "Cursor",
    "EmptyResult",
    "MCPModel",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressToken",
    "RequestId",
    "RequestParams",
    "Result",
    "Role",
]

RequestId: TypeAlias = str | int
"""A uniquely identifying ID for a request in JSON-RPC."""

ProgressToken: TypeAlias = str | int
"""A progress token, used to associate progress notifications with the original request."""

Cursor: TypeAlias = str
"""An opaque token used to represent a cursor for pagination."""

Role: TypeAlias = Literal["user", "assistant"]
"""The sender or recipient of messages and data in a conversation."""

CacheScope: TypeAlias = Literal["public", "private"]
"""Who may cache a result (2026-07-28): anyone, or only the same authorization context."""


class MCPModel(BaseModel):
    """Base class of every MCP object: camelCase on the wire, unknown members kept."""

    # ``populate_by_name`` is the spelling pydantic < 2.11 understands; newer versions
    # use the ``validate_by_*`` pair and ignore it when ``validate_by_name`` is set.
    # ``defer_build`` halves the import cost (~35 ms instead of ~75 ms for ~110 models):
    # each model's validator is built when first used, which costs a few ms once.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        protected_namespaces=(),
        defer_build=True,
    )


class RequestParams(MCPModel):
    """Common params for any request; ``_meta`` may carry a ``progressToken``."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @property
    def progress_token(self) -> ProgressToken | None:
        """``_meta.progressToken`` if the requester asked for progress notifications."""
        token = self.meta.get("progressToken") if self.meta else None
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


class PaginatedRequestParams(RequestParams):
    """Common parameters for paginated requests (the ``*/list`` methods)."""

    cursor: Cursor | None = None


class NotificationParams(MCPModel):
    """Common params for any notification."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Result(MCPModel):
    """Common base of every result; unknown members are kept.

    ``result_type`` (2026-07-28) is ``"complete"``, ``"input_required"`` or an
    extension's value (``"task"``); a result from an earlier revision has none, which
    means ``"complete"``.
    """

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    result_type: str | None = None


class EmptyResult(Result):
    """A response that indicates success but carries no data."""


class CacheableResult(Result):
    """A result with caching hints (2026-07-28): fresh for ``ttl_ms`` milliseconds."""

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class PaginatedResult(CacheableResult):
    """Common base of the results of paginated requests."""

    next_cursor: Cursor | None = None
