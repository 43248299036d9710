"""Serving the agent card (spec 8.2, 8.6) and resolving one as a client.

The server answers ``GET /.well-known/agent-card.json`` (and the pre-0.3 name
``/.well-known/agent.json``) with the card, a ``Cache-Control: max-age``, a strong
``ETag`` over the body and a ``Last-Modified`` (when this process first served that
body: stable for a given card, later for a changed one); a matching ``If-None-Match``
gets 304, and so does an ``If-Modified-Since`` not before ``Last-Modified`` when there
is no ``If-None-Match`` (RFC 9110 13.1.3). ``HEAD`` gets the same headers without the
body. Unless 0.3
compatibility is off, the 0.3 members (``url``, ``protocolVersion``,
``preferredTransport``, ...) are added beside the 1.0 ones, so a 0.3 client finds the
same agent (the official SDKs serve the same merged form).

Reading a card is lenient where the most used server SDK is: an interface of a
1.0-shaped card (one with ``supportedInterfaces``) that names no ``protocolVersion``
(REQUIRED in the proto; a2a-sdk lets servers omit it) is read as version 1.0, with a
note on the ``a2a_layer.card`` logger (``rpcweave -v`` shows it). Cards this layer
serves always name it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from email.utils import formatdate, parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import pydantic_core

from jsonrpc_core.http import (
    DEFAULT_MAX_BODY_SIZE,
    HTTPRequest,
    HTTPResponse,
    Route,
    read_response_body,
)

from .types import AgentCard

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CARD_PATH",
    "LEGACY_CARD_PATH",
    "CardNotFound",
    "card_routes",
    "card_wire",
    "etag_matches",
    "modified_since",
    "read_card",
    "resolve_card",
]

logger = logging.getLogger("a2a_layer.card")

CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"


def card_wire(card: AgentCard, *, compat_v03: bool = True) -> dict[str, Any]:
    """The JSON served for ``card``: 1.0 members, plus the 0.3 ones not already there."""
    wire: dict[str, Any] = json.loads(pydantic_core.to_json(card, by_alias=True, exclude_none=True))
    if compat_v03 and card.supported_interfaces:
        from ._compat03 import card_to_v03

        legacy = card_to_v03(card)
        if not legacy.get("supportsAuthenticatedExtendedCard"):
            legacy.pop("supportsAuthenticatedExtendedCard", None)
        for key, value in legacy.items():
            wire.setdefault(key, value)
    return wire


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header selects ``etag`` (weak comparison, RFC 9110)."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag.removeprefix("W/") for t in tags)


def modified_since(header: str | None, last_modified: float) -> bool | None:
    """Whether ``last_modified`` (seconds since the epoch) is after an
    ``If-Modified-Since`` date; ``None`` when there is no valid date (RFC 9110 13.1.3)."""
    if not header:
        return None
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if since.tzinfo is None:
        return None  # not an HTTP-date (those are GMT)
    return int(last_modified) > since.timestamp()


def card_routes(
    card_for: Callable[[HTTPRequest], AgentCard], *, compat_v03: bool = True, max_age: int = 300
) -> list[Route]:
    """The well-known card routes (GET and HEAD); ``card_for`` builds the card for a
    request."""
    cache: dict[str, tuple[bytes, str, float]] = {}
    # When each body was first served: kept apart from `cache` (cleared when full), so
    # that a card keeps its Last-Modified for as long as the process serves it. A new
    # body is dated at least a second after every earlier one: an If-Modified-Since
    # (whole seconds) naming an earlier card never makes a changed card look unchanged.
    first_served: dict[str, float] = {}

    def date_of(etag: str) -> float:
        served_at = first_served.get(etag)
        if served_at is None:
            latest = max(first_served.values(), default=0.0)
            served_at = max(time.time(), float(int(latest) + 1))
            if len(first_served) > 1024:
                first_served.clear()
            first_served[etag] = served_at
        return served_at

    async def serve(request: HTTPRequest) -> HTTPResponse:
        card = card_for(request)
        key = card.model_dump_json()
        cached = cache.get(key)
        if cached is None:
            body = json.dumps(card_wire(card, compat_v03=compat_v03), separators=(",", ":"))
            raw = body.encode()
            etag = '"' + hashlib.sha256(raw).hexdigest()[:32] + '"'
            cached = (raw, etag, date_of(etag))
            if len(cache) > 64:
                cache.clear()
            cache[key] = cached
        raw, etag, served_at = cached
        headers = {
            "cache-control": f"public, max-age={max_age}",
            "etag": etag,
            "last-modified": formatdate(served_at, usegmt=True),
        }
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None:
            unchanged = etag_matches(if_none_match, etag)  # If-Modified-Since is ignored
        else:
            unchanged = modified_since(request.headers.get("if-modified-since"), served_at) is False
        if unchanged:
            return HTTPResponse(304, b"", None, headers)
        return HTTPResponse(200, raw, "application/json", headers)

    methods = ("GET", "HEAD")
    return [Route(CARD_PATH, methods, serve), Route(LEGACY_CARD_PATH, methods, serve)]


def read_card(obj: Any) -> AgentCard:
    """A 1.0 `AgentCard` from a card of either version, read leniently (see module)."""
    from ._compat03 import card_from_any

    interfaces = obj.get("supportedInterfaces") if isinstance(obj, Mapping) else None
    if isinstance(interfaces, list):
        filled: list[Any] = []
        for interface in interfaces:
            if isinstance(interface, Mapping) and not interface.get("protocolVersion"):
                logger.info(
                    "agent card: the %s interface at %s names no protocolVersion; read as 1.0",
                    interface.get("protocolBinding", "?"),
                    interface.get("url", "?"),
                )
                interface = {**interface, "protocolVersion": "1.0"}
            filled.append(interface)
        obj = {**obj, "supportedInterfaces": filled}
    return card_from_any(obj)


class CardNotFound(LookupError):
    """No agent card at either well-known path."""


async def resolve_card(
    client: httpx.AsyncClient,
    base_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    path: str | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
) -> AgentCard:
    """Fetch and read the agent card of ``base_url`` (1.0 or 0.3 shape).

    Tries ``/.well-known/agent-card.json``, then ``/.well-known/agent.json`` on 404.
    Raises `CardNotFound`, `httpx.HTTPError`, `pydantic.ValidationError`, or
    `jsonrpc_core.http.ResponseTooLarge` for a card over ``max_body_size`` decoded bytes.
    """
    base = base_url.rstrip("/")
    paths = [path] if path else [CARD_PATH, LEGACY_CARD_PATH]
    for candidate in paths:
        request = client.build_request("GET", base + candidate, headers=dict(headers or {}))
        response = await client.send(request, stream=True)
        try:
            if response.status_code == 404:
                continue
            response.raise_for_status()
            body = await read_response_body(response, max_body_size)
        finally:
            await response.aclose()
        return read_card(pydantic_core.from_json(body))
    raise CardNotFound(f"no agent card at {base}{CARD_PATH} or {base}{LEGACY_CARD_PATH}")
