"""Finding a protected server's authorization server (MCP: Authorization Server
Discovery; RFC 9728, RFC 8414, OpenID Connect Discovery 1.0).

Rules:

1. Protected resource metadata comes from the challenge's ``resource_metadata`` URL,
   else the path-based, else the root well-known URI; its ``resource`` must cover the
   server (`resource_allowed`), or nothing of it is used.
2. Authorization server metadata is tried at each candidate URL of the issuer in the
   MCP order; a document whose ``issuer`` is not the issuer it was looked up for is
   never used (RFC 8414 §3.3).
3. A server without protected resource metadata is a 2025-03-26 server: its origin is
   the authorization server, and without metadata there the default endpoints
   ``/authorize``, ``/token`` and ``/register`` apply. That revision predates the
   issuer check, so its metadata may name any issuer on the server's own origin.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
import pydantic
import pydantic_core

from jsonrpc_core.http import fetch_body

from ._errors import DiscoveryError, ResourceMismatch
from ._models import AuthorizationServerMetadata, ProtectedResourceMetadata
from ._urls import (
    NO_AUTH,
    authorization_server_metadata_urls,
    canonical_resource,
    check_secure,
    origin,
    protected_resource_metadata_urls,
    resource_allowed,
)

__all__ = [
    "AuthorizationServerChooser",
    "Discovery",
    "discover",
    "fetch_authorization_server_metadata",
]

logger = logging.getLogger("mcp_layer.auth")

_ACCEPT = {"accept": "application/json"}

AuthorizationServerChooser = Callable[[Sequence[str]], str]
"""Picks one of the issuers a protected resource lists (RFC 9728 §7.6); the first by
default."""


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found for one server.

    ``resource`` is what to send as RFC 8707 ``resource``; ``metadata`` the chosen
    authorization server's; ``legacy`` marks a 2025-03-26 server (no protected
    resource metadata) and ``defaults`` endpoints that were assumed, not published.
    """

    server_url: str
    resource: str
    resource_metadata: ProtectedResourceMetadata | None
    metadata: AuthorizationServerMetadata
    legacy: bool = False
    defaults: bool = False

    @property
    def issuer(self) -> str:
        """The authorization server's issuer identifier."""
        return self.metadata.issuer


def _same_issuer(published: str, expected: str) -> bool:
    """RFC 8414 §3.3: identical, except a lone trailing slash on an empty path."""
    if published == expected:
        return True
    return published.rstrip("/") == expected.rstrip("/") and (
        published.count("/") <= 3 and expected.count("/") <= 3
    )


async def _get_json(http: httpx.AsyncClient, url: str, timeout: float) -> object | None:
    """The JSON document at ``url``, or ``None``; a body over the cap raises
    `jsonrpc_core.http.ResponseTooLarge`."""
    request = http.build_request("GET", url, headers=_ACCEPT, timeout=timeout)
    try:
        response, body = await fetch_body(http, request, follow_redirects=False, auth=NO_AUTH)
    except httpx.HTTPError as exc:
        logger.info("GET %s failed: %r", url, exc)
        return None
    if response.status_code != 200:
        logger.debug("GET %s: HTTP %d", url, response.status_code)
        return None
    try:
        data: object = pydantic_core.from_json(body)
    except ValueError:
        logger.info("GET %s: not JSON", url)
        return None
    return data


async def fetch_authorization_server_metadata(
    http: httpx.AsyncClient, issuer: str, *, timeout: float = 30.0, same_origin: bool = False
) -> AuthorizationServerMetadata | None:
    """The metadata of the authorization server ``issuer``, or ``None`` (rule 2; with
    ``same_origin`` any issuer on ``issuer``'s origin is accepted, as rule 3 says)."""
    for url in authorization_server_metadata_urls(issuer):
        data = await _get_json(http, url, timeout)
        if data is None:
            continue
        try:
            metadata = AuthorizationServerMetadata.model_validate(data)
        except pydantic.ValidationError as exc:
            logger.info("%s: not authorization server metadata: %s", url, exc)
            continue
        if not _same_issuer(metadata.issuer, issuer) and not (
            same_origin and origin(metadata.issuer) == origin(issuer)
        ):
            logger.warning(
                "%s declares issuer %r, not %r: metadata ignored", url, metadata.issuer, issuer
            )
            continue
        return metadata
    return None


async def discover(
    http: httpx.AsyncClient,
    server_url: str,
    *,
    resource_metadata_url: str | None = None,
    choose: AuthorizationServerChooser | None = None,
    allow_http: bool = False,
    timeout: float = 30.0,
) -> Discovery:
    """Discover the authorization server of the MCP server at ``server_url``."""
    resource_metadata: ProtectedResourceMetadata | None = None
    for url in protected_resource_metadata_urls(server_url, resource_metadata_url):
        data = await _get_json(http, url, timeout)
        if data is None:
            continue
        try:
            resource_metadata = ProtectedResourceMetadata.model_validate(data)
        except pydantic.ValidationError as exc:
            logger.info("%s: not protected resource metadata: %s", url, exc)
            continue
        break
    if resource_metadata is None:
        return await _legacy(http, server_url, allow_http=allow_http, timeout=timeout)
    if not resource_allowed(server_url, resource_metadata.resource):
        raise ResourceMismatch(
            f"the protected resource metadata is for {resource_metadata.resource!r}, "
            f"not for {server_url!r}"
        )
    issuers = resource_metadata.authorization_servers or []
    if not issuers:
        raise DiscoveryError("the protected resource metadata names no authorization server")
    issuer = (choose or _first)(issuers)
    try:
        check_secure(issuer, "the authorization server", allow_http=allow_http)
    except ValueError as exc:
        raise DiscoveryError(str(exc)) from None
    metadata = await fetch_authorization_server_metadata(http, issuer, timeout=timeout)
    if metadata is None:
        raise DiscoveryError(f"no usable authorization server metadata for {issuer!r}")
    return Discovery(server_url, resource_metadata.resource, resource_metadata, metadata)


async def _legacy(
    http: httpx.AsyncClient, server_url: str, *, allow_http: bool, timeout: float
) -> Discovery:
    """Rule 3: the 2025-03-26 way."""
    issuer = origin(server_url)
    try:
        check_secure(issuer, "the authorization server", allow_http=allow_http)
    except ValueError as exc:
        raise DiscoveryError(str(exc)) from None
    resource = canonical_resource(server_url)
    metadata = await fetch_authorization_server_metadata(
        http, issuer, timeout=timeout, same_origin=True
    )
    if metadata is not None:
        return Discovery(server_url, resource, None, metadata, legacy=True)
    logger.info("no metadata for %s: assuming the default endpoints", issuer)
    defaults = AuthorizationServerMetadata(
        issuer=issuer,
        authorization_endpoint=issuer + "/authorize",
        token_endpoint=issuer + "/token",
        registration_endpoint=issuer + "/register",
    )
    return Discovery(server_url, resource, None, defaults, legacy=True, defaults=True)


def _first(issuers: Sequence[str]) -> str:
    return issuers[0]
