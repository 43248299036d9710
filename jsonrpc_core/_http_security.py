"""DNS-rebinding protection and bearer-token checks for the HTTP server.

Rules: with the default policy a server bound to loopback answers only requests
whose ``Host`` is a loopback name and whose ``Origin``, when present, is a loopback
origin; anything else is refused with 403 before a body is read. A token verifier,
when configured, runs before any message is dispatched.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ._http_common import HTTPError

__all__ = ["BearerAuth", "OriginPolicy", "TokenVerifier"]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@dataclass(slots=True)
class OriginPolicy:
    """Allow-lists for the ``Host`` and ``Origin`` headers (``fnmatch`` patterns).

    ``None`` disables a check. ``OriginPolicy.loopback()`` is the default for servers
    bound to 127.0.0.1.
    """

    allowed_hosts: Sequence[str] | None = None
    allowed_origins: Sequence[str] | None = None

    @classmethod
    def loopback(cls) -> OriginPolicy:
        """Only loopback hosts (any port) and loopback origins (http or https)."""
        hosts = [h for name in _LOOPBACK_HOSTS for h in (name, f"{name}:*")]
        origins = [f"{scheme}://{h}" for scheme in ("http", "https") for h in hosts]
        return cls(hosts, origins)

    @classmethod
    def allow_all(cls) -> OriginPolicy:
        """No checks (for servers behind a trusted proxy that does them)."""
        return cls(None, None)

    def check(self, headers: Mapping[str, str]) -> None:
        """Raise `HTTPError` 403 when ``Host`` or ``Origin`` is not allowed."""
        if self.allowed_hosts is not None:
            host = headers.get("host", "").lower()
            if not any(_matches(host, p) for p in self.allowed_hosts):
                raise HTTPError(403, f"Forbidden: Host {host!r} is not allowed")
        origin = headers.get("origin")
        if origin is not None and self.allowed_origins is not None:
            if not any(_matches(origin.lower(), p) for p in self.allowed_origins):
                raise HTTPError(403, f"Forbidden: Origin {origin!r} is not allowed")


def _matches(value: str, pattern: str) -> bool:
    """``fnmatch`` with ``*`` and ``?`` only: brackets are literal (IPv6 hosts)."""
    return fnmatch.fnmatchcase(value, pattern.lower().replace("[", "[[]"))


class TokenVerifier(Protocol):
    """Checks a bearer token; returns the principal, or ``None`` when it is invalid."""

    async def verify(self, token: str) -> Any | None: ...


@dataclass(slots=True)
class BearerAuth:
    """Requires ``Authorization: Bearer <token>`` accepted by ``verifier``.

    Failures are 401 with a ``WWW-Authenticate: Bearer`` challenge carrying
    ``resource_metadata`` (RFC 9728) and ``scope`` when configured.
    """

    verifier: TokenVerifier | Callable[[str], Awaitable[Any | None]]
    resource_metadata_url: str | None = None
    scopes: Sequence[str] = field(default_factory=tuple)
    realm: str | None = None

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The ``WWW-Authenticate`` header value."""
        params: list[str] = []
        if self.realm:
            params.append(f'realm="{self.realm}"')
        if error:
            params.append(f'error="{error}"')
        if description:
            params.append(f'error_description="{description}"')
        if self.resource_metadata_url:
            params.append(f'resource_metadata="{self.resource_metadata_url}"')
        if self.scopes:
            params.append(f'scope="{" ".join(self.scopes)}"')
        return "Bearer" + (" " + ", ".join(params) if params else "")

    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The principal for the request, or `HTTPError` 401."""
        value = headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPError(
                401,
                "Unauthorized: a bearer token is required",
                headers={"WWW-Authenticate": self.challenge()},
            )
        verify = cast(
            "Callable[[str], Awaitable[Any]]", getattr(self.verifier, "verify", self.verifier)
        )
        principal = await verify(token.strip())
        if principal is None:
            raise HTTPError(
                401,
                "Unauthorized: invalid or expired token",
                headers={"WWW-Authenticate": self.challenge("invalid_token")},
            )
        return principal
