"""What a verified access token tells the resource server, and the checks every token
verifier shares: audience (RFC 8707), expiry, scopes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._urls import same_resource

__all__ = ["AccessToken", "TokenVerifier", "audience_matches", "scopes_of_claims"]


@dataclass(frozen=True, slots=True, eq=False)
class AccessToken:
    """A verified access token: the principal handlers see as ``ctx.info.principal``.

    The raw token is deliberately not kept: a server never passes the token it was
    given on to anything else (MCP: token passthrough is forbidden).

    Two instances are equal when they name the same principal (``issuer``,
    ``subject``, ``client_id``), whatever their scopes and expiry: a refreshed or
    stepped-up token keeps its HTTP session.
    """

    client_id: str | None = None
    subject: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: float | None = None
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict)

    def _identity(self) -> tuple[str | None, str | None, str | None]:
        return (self.issuer, self.subject, self.client_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccessToken):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())


class TokenVerifier(Protocol):
    """Verifies a bearer token for this resource: `AccessToken`, or ``None`` when the
    token is invalid, expired or meant for another resource (all answered 401)."""

    async def verify(self, token: str) -> AccessToken | None: ...


def audience_matches(audience: object, resource: str | Iterable[str]) -> bool:
    """Whether an ``aud`` claim (a string or a list) names this resource (RFC 8707),
    comparing resource URIs canonically (case of scheme and host, default port,
    trailing slash)."""
    wanted = [resource] if isinstance(resource, str) else list(resource)
    values = [audience] if isinstance(audience, str) else audience
    if not isinstance(values, list | tuple):
        return False
    return any(
        isinstance(value, str) and any(value == w or same_resource(value, w) for w in wanted)
        for value in values
    )


def scopes_of_claims(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes of a token's claims: ``scope`` (a space-separated string, RFC 9068)
    or ``scp`` (a list, as some servers send)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    if isinstance(scope, list):
        return frozenset(str(s) for s in scope)
    scp = claims.get("scp")
    if isinstance(scp, str):
        return frozenset(scp.split())
    if isinstance(scp, list):
        return frozenset(str(s) for s in scp)
    return frozenset()
