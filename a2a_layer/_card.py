"""Serving the agent card (spec 8.2, 8.6) and resolving one as a client.

The server answers ``GET /.well-known/agent-card.json`` (and the pre-0.3 name
``/.well-known/agent.json``) with the card, a ``Cache-Control: max-age`` and a strong
``ETag`` over the body; a matching ``If-None-Match`` gets 304. Unless 0.3
compatibility is off, the 0.3 members (``url``, ``protocolVersion``,
``preferredTransport``, ...) are added beside the 1.0 ones, so a 0.3 client finds the
same agent (the official SDKs serve the same merged form).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
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
    "resolve_card",
]

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


def card_routes(
    card_for: Callable[[HTTPRequest], AgentCard], *, compat_v03: bool = True, max_age: int = 300
) -> list[Route]:
    """The well-known card routes; ``card_for`` builds the card for a request."""
    cache: dict[str, tuple[bytes, str]] = {}

    async def serve(request: HTTPRequest) -> HTTPResponse:
        card = card_for(request)
        key = card.model_dump_json()
        cached = cache.get(key)
        if cached is None:
            body = json.dumps(card_wire(card, compat_v03=compat_v03), separators=(",", ":"))
            raw = body.encode()
            cached = (raw, '"' + hashlib.sha256(raw).hexdigest()[:32] + '"')
            if len(cache) > 64:
                cache.clear()
            cache[key] = cached
        raw, etag = cached
        headers = {"cache-control": f"public, max-age={max_age}", "etag": etag}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return HTTPResponse(304, b"", None, headers)
        return HTTPResponse(200, raw, "application/json", headers)

    return [Route(CARD_PATH, ("GET",), serve), Route(LEGACY_CARD_PATH, ("GET",), serve)]


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
        from ._compat03 import card_from_any

        return card_from_any(pydantic_core.from_json(body))
    raise CardNotFound(f"no agent card at {base}{CARD_PATH} or {base}{LEGACY_CARD_PATH}")
